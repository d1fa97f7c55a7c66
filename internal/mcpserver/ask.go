package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/secret"
)

// Field names of the forms a question is asked with.
const (
	fieldAnswer  = "answer"  // text and choice
	fieldApprove = "approve" // confirm
)

// elicitor asks the calling MCP client's user through elicitation/create
// (form mode). It is an ask.Channel.
type elicitor struct {
	ss    *mcp.ServerSession
	scrub *secret.Scrubber
}

// elicitorFor returns the elicitation channel of ss, or nil when its client
// did not declare form elicitation.
func (s *Server) elicitorFor(ss *mcp.ServerSession) ask.Channel {
	if ss == nil {
		return nil
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return nil
	}
	if e := p.Capabilities.Elicitation; e.Form == nil && e.URL != nil {
		return nil // URL mode only
	}
	return &elicitor{ss: ss, scrub: s.scrub}
}

func (e *elicitor) Name() string { return ask.ByClient }

// Ask sends q as a form with one field matching its kind. A secret is never
// asked through a form: the MCP specification forbids requesting passwords
// in form mode, so it is left to the dashboard (ask.ErrUnsupported).
func (e *elicitor) Ask(ctx context.Context, q ask.Question) (ask.Answer, error) {
	if q.Secret {
		return ask.Answer{}, ask.ErrUnsupported
	}
	res, err := e.ss.Elicit(ctx, &mcp.ElicitParams{
		Mode:            "form",
		Message:         e.scrub.String(q.Message()),
		RequestedSchema: formOf(q),
	})
	if err != nil {
		return ask.Answer{}, err
	}
	return answerOf(q, res)
}

// asking is how a tool call's body asks the client's user, carried in its
// context: the channel (nil: the client cannot be asked) and the progress
// function of the request waiting now.
type asking struct {
	ch       ask.Channel
	progress func(agent.Event)
}

type askingKey struct{}

func withAsking(ctx context.Context, ch ask.Channel, progress func(agent.Event)) context.Context {
	return context.WithValue(ctx, askingKey{}, asking{ch: ch, progress: progress})
}

// AskChannel is the calling MCP client's way to ask its user during the
// tool call of ctx (nil: none), for work a tool hands elsewhere (flows).
func AskChannel(ctx context.Context) ask.Channel { return askingOf(ctx).ch }

// askingOf returns what withAsking put in ctx (zero: no channel, no progress).
func askingOf(ctx context.Context) asking {
	a, _ := ctx.Value(askingKey{}).(asking)
	if a.progress == nil {
		a.progress = func(agent.Event) {}
	}
	return a
}

// formOf is the flat requestedSchema of q: a required boolean "approve" for a
// confirm, a required string "answer" (an enum of the options for a choice).
func formOf(q ask.Question) map[string]any {
	var prop map[string]any
	name := fieldAnswer
	switch q.Kind {
	case action.AskConfirm:
		name = fieldApprove
		prop = map[string]any{"type": "boolean", "title": "Approve", "description": q.Text}
	case action.AskChoice:
		prop = map[string]any{"type": "string", "title": "Choice", "description": q.Text, "enum": q.Options}
	default:
		prop = map[string]any{"type": "string", "title": "Answer", "description": q.Text, "minLength": 1}
	}
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{name: prop},
		"required":   []string{name},
	}
}

// checkKeys checks keys (a combination, or modifiers held) against the key
// policy, and asks a person before a combination listed in
// GUI_AGENT_CONFIRM_HOTKEYS is sent: the calling client through elicitation
// and the dashboard, whichever answers first. The blocklist stays absolute.
func (s *Server) checkKeys(ctx context.Context, c *call, keys []desktop.Key) error {
	if len(keys) == 0 {
		return nil
	}
	if err := s.keys.Check(keys); err != nil {
		return err
	}
	combo, ok := s.keys.NeedsConfirm(keys)
	if !ok {
		return nil
	}
	shown := desktop.ComboString(keys)
	who := "A tool call"
	if c != nil && c.req != nil && c.req.Params != nil {
		who = "A tool call (" + c.req.Params.Name + ")"
	}
	return ask.Confirm(ctx, s.opts.Questions, ask.KeysQuestion(who, shown, combo), s.askTimeout(), shown, askingOf(ctx).ch)
}

// askTimeout bounds the wait for one answer.
func (s *Server) askTimeout() time.Duration {
	if s.opts.AskTimeout > 0 {
		return s.opts.AskTimeout
	}
	return 300 * time.Second
}

// questionStatus says, for gui://status, where questions can be answered and
// how many wait now.
func (s *Server) questionStatus() map[string]any {
	st := map[string]any{"dashboard": false, "pending": 0, "timeout_s": int(s.askTimeout().Seconds())}
	if b := s.opts.Questions; b != nil {
		st["dashboard"], st["pending"] = b.Dashboard(), len(b.Pending())
	}
	return st
}
