package mcpserver

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
)

// Field names of the forms a question is asked with.
const (
	fieldAnswer  = "answer"  // text and choice
	fieldApprove = "approve" // confirm
)

// modes are the elicitation modes a client declared.
type modes struct{ form, url bool }

// modesOf returns the elicitation modes of ss's client; ok is false when it
// declared no elicitation. A capability naming no mode means form (the
// older protocol versions had only forms).
func modesOf(ss *mcp.ServerSession) (m modes, ok bool) {
	if ss == nil {
		return m, false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return m, false
	}
	e := p.Capabilities.Elicitation
	return modes{form: e.Form != nil || e.URL == nil, url: e.URL != nil}, true
}

// elicitParams is how q is put to a client speaking m: a form with one field
// matching q's kind; for a secret, never a form (the MCP specification
// forbids requesting passwords in form mode) but a one-time link to the
// dashboard, where the person types it (URL mode). ask.ErrUnsupported when
// neither is possible.
func (s *Server) elicitParams(q ask.Question, m modes) (*mcp.ElicitParams, error) {
	if !q.Secret {
		if !m.form {
			return nil, ask.ErrUnsupported
		}
		return &mcp.ElicitParams{Mode: "form", Message: s.scrub.String(q.Message()), RequestedSchema: formOf(q)}, nil
	}
	if !m.url || s.opts.DashboardURL == nil {
		return nil, ask.ErrUnsupported
	}
	u := s.opts.DashboardURL()
	if u == "" {
		return nil, ask.ErrUnsupported
	}
	msg := "Secret: " + q.Message() + "\n\nOpen the guiagent dashboard to type it. It is typed into the focused field and never shown to the model or recorded."
	return &mcp.ElicitParams{Mode: "url", URL: u, ElicitationID: q.ID, Message: s.scrub.String(msg)}, nil
}

// completeURL tells the client that the URL-mode question id was answered
// (or expired), so it can close what it opened.
func (s *Server) completeURL(ss *mcp.ServerSession, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id}); err != nil {
		s.log.Debug("elicitation complete notification failed", "err", err)
	}
}

// elicitor asks the calling MCP client's user through a nested
// elicitation/create (clients before 2026-07-28). It is an ask.Channel.
type elicitor struct {
	s  *Server
	ss *mcp.ServerSession
	m  modes
}

// elicitorFor returns the elicitation channel of ss, or nil when its client
// did not declare elicitation.
func (s *Server) elicitorFor(ss *mcp.ServerSession) ask.Channel {
	m, ok := modesOf(ss)
	if !ok {
		return nil
	}
	return &elicitor{s: s, ss: ss, m: m}
}

func (e *elicitor) Name() string { return ask.ByClient }

// Ask sends q (elicitParams) and returns the client's answer. For a URL-mode
// secret the client's accept only means the person went to the dashboard:
// Ask then waits until the dashboard's answer ends ctx.
func (e *elicitor) Ask(ctx context.Context, q ask.Question) (ask.Answer, error) {
	p, err := e.s.elicitParams(q, e.m)
	if err != nil {
		return ask.Answer{}, err
	}
	res, err := e.ss.Elicit(ctx, p)
	if err == nil {
		var a ask.Answer
		if a, err = answerOf(q, p, res); !errors.Is(err, errOutOfBand) {
			return a, err
		}
		<-ctx.Done() // the dashboard answers
		err = ctx.Err()
	}
	if p.Mode == "url" { // answered on the dashboard, even before the client said it opened the link
		e.s.completeURL(e.ss, q.ID)
	}
	return ask.Answer{}, err
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
