package app

import (
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/secret"
)

// TestScrubEventAndResult: a key learned at run time is replaced in the
// events the dashboard streams and in task results, whatever field holds it.
func TestScrubEventAndResult(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	l := secret.NewScrubber("sk-start-0123456789")
	ev := agent.Event{Time: time.Now(), RunID: "r1", Kind: agent.EvProgress, Message: "model call failed: 401 invalid key " + key,
		Result: &agent.Result{Status: agent.Failed, Summary: "provider said " + key, Warnings: []string{key}}}
	if got := scrubEvent(l, ev); got.Message != ev.Message {
		t.Fatalf("a key not yet known was changed: %q", got.Message)
	}
	l.Add(key)
	got := scrubEvent(l, ev)
	if strings.Contains(got.Message+got.Result.Summary+strings.Join(got.Result.Warnings, ""), key) || !strings.Contains(got.Message, secret.Marker) || got.Kind != agent.EvProgress {
		t.Fatalf("scrubbed event: %+v %+v", got, got.Result)
	}
	if ev.Result.Summary != "provider said "+key {
		t.Fatal("scrubbing changed the run's own event")
	}
	r := scrubResult(l, *ev.Result)
	if strings.Contains(r.Summary+strings.Join(r.Warnings, ""), key) {
		t.Fatalf("scrubbed result: %+v", r)
	}
	var logged strings.Builder
	w := l.Writer(&logged)
	w.Write([]byte("level=INFO msg=x key=" + key + "\n"))
	if strings.Contains(logged.String(), key) {
		t.Fatalf("log line: %s", logged.String())
	}
}
