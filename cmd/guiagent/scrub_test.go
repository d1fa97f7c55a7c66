package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/agent"
)

type leakyRunner struct{ secret string }

func (l leakyRunner) Run(_ context.Context, _ agent.Task, progress func(agent.Event)) agent.Result {
	if progress != nil {
		progress(agent.Event{Kind: agent.EvProgress, Message: "saw " + l.secret})
	}
	return agent.Result{Status: agent.Completed, Summary: "done with " + l.secret, Memory: []string{"key " + l.secret},
		Trace: []agent.StepTrace{{Step: 1, Observation: "screen shows " + l.secret}}, RunID: "r1", Report: "/runs/r1/report.html"}
}

// A secret a model repeats or a provider echoes is removed from the task
// result and the progress messages, and everything else is kept.
func TestScrubbedRunnerRemovesSecrets(t *testing.T) {
	const key = `key-with"quote-0123456789`
	r := newScrubbedRunner(leakyRunner{key}, []string{key, "abc"})
	var msgs []string
	res := r.Run(context.Background(), agent.Task{Task: "x"}, func(ev agent.Event) { msgs = append(msgs, ev.Message) })
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "0123456789") || strings.Contains(strings.Join(msgs, "\n"), "0123456789") {
		t.Fatalf("secret left in result %s or progress %q", b, msgs)
	}
	if res.Status != agent.Completed || res.RunID != "r1" || res.Report != "/runs/r1/report.html" || len(res.Trace) != 1 ||
		res.Summary != "done with [REDACTED]" || res.Trace[0].Observation != "screen shows [REDACTED]" {
		t.Fatalf("scrubbing changed the result: %+v", res)
	}
	if msgs[0] != "saw [REDACTED]" {
		t.Fatalf("progress message %q", msgs[0])
	}
	// A caller that wants no progress passes nil, as agent.Runner.Run allows.
	if res := r.Run(context.Background(), agent.Task{Task: "x"}, nil); res.Summary != "done with [REDACTED]" {
		t.Fatalf("without a progress func: summary %q", res.Summary)
	}
	if got := newScrubbedRunner(leakyRunner{key}, []string{"abc"}); got != (leakyRunner{key}) {
		t.Fatalf("with no secret of 4+ characters the runner should be returned as is")
	}
}
