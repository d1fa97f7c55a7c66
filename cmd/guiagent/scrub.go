package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/trace"
)

// scrubbedRunner removes the configured secrets (API key, HTTP token, VNC
// password) from task results and progress messages before they reach the MCP
// client, the audit log and the session record. A model can repeat a key it
// was shown or a provider error can echo it; the run record is scrubbed by
// the trace store, and this keeps the tool result in step with it.
type scrubbedRunner struct {
	next mcpserver.TaskRunner
	r    *strings.Replacer
}

// newScrubbedRunner wraps next; with no secret (of 4 characters or more) it returns next.
func newScrubbedRunner(next mcpserver.TaskRunner, secrets []string) mcpserver.TaskRunner {
	var pairs []string
	for _, s := range secrets {
		if len(s) < 4 {
			continue
		}
		pairs = append(pairs, s, trace.Redacted)
		if q, err := json.Marshal(s); err == nil && string(q[1:len(q)-1]) != s {
			pairs = append(pairs, string(q[1:len(q)-1]), trace.Redacted)
		}
	}
	if len(pairs) == 0 {
		return next
	}
	return scrubbedRunner{next: next, r: strings.NewReplacer(pairs...)}
}

// Run runs the task and returns its result with every secret replaced.
func (s scrubbedRunner) Run(ctx context.Context, t agent.Task, progress func(agent.Event)) agent.Result {
	scrubbed := progress
	if progress != nil { // nil means no progress wanted (agent.Runner.Run)
		scrubbed = func(ev agent.Event) {
			ev.Message = s.r.Replace(ev.Message)
			progress(ev)
		}
	}
	res := s.next.Run(ctx, t, scrubbed)
	b, err := json.Marshal(res)
	if err != nil {
		return agent.Result{Status: res.Status, Summary: s.r.Replace(res.Summary), RunID: res.RunID,
			RunDir: res.RunDir, Report: res.Report, Trace: []agent.StepTrace{}}
	}
	clean := s.r.Replace(string(b))
	if clean == string(b) {
		return res
	}
	var out agent.Result
	if err := json.Unmarshal([]byte(clean), &out); err != nil {
		return agent.Result{Status: res.Status, Summary: s.r.Replace(res.Summary), RunID: res.RunID,
			RunDir: res.RunDir, Report: res.Report, Trace: []agent.StepTrace{}}
	}
	return out
}
