package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/config"
)

// ExecuteTaskArgs are gui_execute_task's arguments.
type ExecuteTaskArgs struct {
	Task     string `json:"task" jsonschema:"the goal in plain words, with any details needed (what to open, what to type, when it is done)"`
	Display  string `json:"display,omitempty"`
	MaxSteps int    `json:"max_steps,omitempty" jsonschema:"step budget; default from the server configuration"`
	TimeoutS int    `json:"timeout_s,omitempty" jsonschema:"time budget in seconds, 1-86400; default from the server configuration"`
}

func (s *Server) executeTaskTool() toolDef {
	return newTool(s, GroupTask, "gui_execute_task", "Do a task on the desktop",
		"Hand a whole goal to guiagent's own vision agent, which looks at the screen and uses mouse and keyboard until the goal is done, blocked or failed. Returns status (completed, blocked, failed, cancelled, timeout, superseded), summary, result, memory, warnings, steps and usage. Progress is reported while it runs. When the agent needs the user (a question, a safety check, a hotkey to confirm) it asks through elicitation if the client supports it, and on the dashboard; with no answer the task ends blocked with next_user_action.",
		changesDesk,
		func(sc *jsonschema.Schema) {
			prop(sc, "task").MinLength = new(1)
			between(sc, "max_steps", 1, config.MaxStepsLimit)
			prop(sc, "max_steps").Description = fmt.Sprintf("step budget, 1-%d; default from the server configuration", config.MaxStepsLimit)
			between(sc, "timeout_s", 1, 86400)
		},
		func(ctx context.Context, c *call, in ExecuteTaskArgs) (*mcp.CallToolResult, error) {
			if in.Task == "" {
				return nil, fmt.Errorf("task is empty: describe the goal")
			}
			asking := askingOf(ctx)
			t := agent.Task{Task: in.Task, Display: in.Display, MaxSteps: in.MaxSteps, Timeout: time.Duration(in.TimeoutS) * time.Second,
				Ask: asking.ch}
			if t.Display == "" {
				t.Display = s.defaultDisplay()
			}
			progress := asking.progress
			tasks := s.taskRunner()
			if tasks == nil {
				return nil, errors.New("gui_execute_task has no model now: the server's model was removed; use the atomic tools, or configure a model")
			}
			r := tasks.Run(ctx, t, progress)
			s.sessionLog(c.ss).Info("gui_execute_task done", "run", r.RunID, "status", r.Status, "steps", r.Steps)
			b, err := json.Marshal(r)
			if err != nil {
				return nil, fmt.Errorf("encoding the task result: %w", err)
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
				StructuredContent: json.RawMessage(b),
				IsError:           r.Status == agent.Failed,
			}, nil
		})
}

// progressFunc returns the callback that turns the run's progress events
// (the only events a TaskRunner passes to it) into MCP progress notifications,
// or a no-op when the caller gave no progress token.
func (s *Server) progressFunc(ctx context.Context, req *mcp.CallToolRequest) func(agent.Event) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func(agent.Event) {}
	}
	var mu sync.Mutex
	var last float64
	return func(ev agent.Event) {
		if ev.Kind != agent.EvProgress {
			return // the contract says only progress events arrive; ignore anything else
		}
		mu.Lock()
		p := ev.Progress
		if p <= last { // progress must increase
			p = last + 1
		}
		last = p
		mu.Unlock()
		total := ev.Total
		if total < p {
			total = 0 // unknown rather than inconsistent
		}
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Message: s.scrub.String(ev.Message), Progress: p, Total: total,
		})
		if err != nil {
			s.log.Debug("progress notification failed", "err", err)
		}
	}
}
