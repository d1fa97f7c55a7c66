package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/trace"
)

// toolDef is one tool, built by a constructor and registered by the list in toolList.
type toolDef struct {
	name  string
	group string // the --tools group it belongs to (GroupObserve, GroupInput, ...)
	need  need   // what it needs before it is offered (set by the catalogue)
	tool  *mcp.Tool
	add   func(*mcp.Server)
}

// effect classifies a tool for its annotations.
type effect int

const (
	readOnly    effect = iota // observes only
	changesDesk               // may change anything on the desktop (input)
	writesState               // changes something bounded (the clipboard)
)

func annotations(title string, e effect) *mcp.ToolAnnotations {
	t, f := true, false
	// The title goes here only, not in Tool.Title as well: every protocol
	// version has annotations.title, and a client shows it where Tool.Title
	// (2025-06-18) is absent, as the specification says. Once is enough for
	// the 12 KB tools/list budget.
	a := &mcp.ToolAnnotations{Title: title}
	switch e {
	case readOnly:
		a.ReadOnlyHint, a.IdempotentHint = true, true
		a.OpenWorldHint = &f
	case changesDesk:
		a.DestructiveHint = &t // openWorldHint's default (nil) is true
	case writesState:
		a.DestructiveHint, a.OpenWorldHint = &t, &f
		a.IdempotentHint = true
	}
	return a
}

// call is what a tool handler gets besides its arguments.
type call struct {
	req *mcp.CallToolRequest
	ss  *mcp.ServerSession
	// img is the screenshot the result carries, for the session record.
	img *imaging.Shot
	// actions are the inputs the call performed, and frame the image their
	// image points refer to, for the session record (see trace.Call).
	actions []action.Trace
	frame   *imaging.Shot
	// private, when set, stands for the result's text in the audit and the
	// session record: the result holds content that must not be kept there.
	private string
}

// handlerFunc is a tool's body: it returns a result, or an error the model can read.
type handlerFunc[In any] func(ctx context.Context, c *call, in In) (*mcp.CallToolResult, error)

// newTool builds a tool whose input schema comes from In (jsonschema tags give
// property descriptions) refined by patch (enums, ranges, defaults). Every call
// is timed, audited, logged and recorded; an error or a panic becomes a tool
// result with IsError set.
func newTool[In any](s *Server, group, name, title, desc string, e effect, patch func(*jsonschema.Schema), h handlerFunc[In]) toolDef {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", name, err))
	}
	if patch != nil {
		patch(schema)
	}
	portableSchema(name, schema)
	capArguments(name, schema)
	if group == GroupInput {
		s.withoutTargets(name, schema)
	}
	known := knownArguments(schema)
	t := &mcp.Tool{Name: name, Description: desc, InputSchema: schema, Annotations: annotations(title, e)}
	handler := func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		start := time.Now()
		c := &call{req: req, ss: req.Session}
		s.watchSession(c.ss)
		var header http.Header
		if req.Extra != nil {
			header = req.Extra.Header
		}
		ctx, done := s.calls.track(ctx, sessionID(c.ss), header)
		defer done()
		res, err := func() (res *mcp.CallToolResult, err error) {
			defer s.recoverTool(name, &err)
			if err := known.check(req.Params.Arguments); err != nil {
				return nil, err
			}
			if e != changesDesk {
				return h(ctx, c, in)
			}
			// Input may need a person's answer (a hotkey to confirm, a task's
			// question): the call may end and resume by the client's retry.
			return s.resumable(ctx, c, func(ctx context.Context, ch ask.Channel, progress func(agent.Event)) (*mcp.CallToolResult, error) {
				defer s.askers.hold(ch)()
				return h(withAsking(ctx, ch, progress), c, in)
			})
		}()
		if err == nil {
			s.withPageEvents(res)
		}
		ms := time.Since(start).Milliseconds()
		entry := safety.AuditEntry{Time: start, Tool: name, Session: s.recordID(c.ss), Millis: ms}
		if err != nil {
			res = &mcp.CallToolResult{}
			res.SetError(err)
		}
		s.scrubResult(res)
		if err != nil {
			entry.Error = s.scrub.String(err.Error())
			s.sessionLog(c.ss).Info("tool failed", "tool", name, "ms", ms, "err", entry.Error)
		} else {
			entry.Result = summary(res)
			if c.private != "" {
				entry.Result = c.private
			}
			s.sessionLog(c.ss).Debug("tool done", "tool", name, "ms", ms)
		}
		s.audit.Record(entry, in)
		if s.opts.Metrics != nil {
			n := 0
			if c.img != nil {
				n = len(c.img.Data)
			}
			s.opts.Metrics.ToolCall(name, entry.Error != "" || res.IsError, time.Since(start), n)
		}
		if s.opts.Records != nil {
			if r := s.opts.Records(s.recordID(c.ss)); r != nil {
				text := entry.Result
				if entry.Error != "" {
					text = "error: " + entry.Error
				}
				r.RecordCall(trace.Call{Tool: name, Args: json.RawMessage(s.scrub.Bytes(safety.MaskArgs(in))), Result: text, IsError: entry.Error != "" || res.IsError,
					Image: c.img, Actions: c.actions, Frame: c.frame, Millis: ms, Client: clientName(c.ss)})
			}
		}
		return res, nil, nil
	}
	return toolDef{name: name, group: group, tool: t, add: func(srv *mcp.Server) { mcp.AddTool(srv, t, handler) }}
}

// scrubResult replaces every configured secret in res's text and structured
// content by secret.Marker (images are left as they are).
func (s *Server) scrubResult(res *mcp.CallToolResult) {
	if s.scrub.Empty() {
		return
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			t.Text = s.scrub.String(t.Text)
		}
	}
	if res.StructuredContent == nil {
		return
	}
	if b, err := json.Marshal(res.StructuredContent); err != nil {
		res.StructuredContent = nil // cannot be checked, so it is not sent; the text content carries the result
	} else if clean := s.scrub.Bytes(b); len(clean) != len(b) || string(clean) != string(b) {
		res.StructuredContent = json.RawMessage(clean)
	}
}

// sessionLog is the server's logger with the session id of ss, unless the
// server serves one session only and its logger says so already.
func (s *Server) sessionLog(ss *mcp.ServerSession) *slog.Logger {
	if s.opts.SessionID != "" || ss == nil {
		return s.log
	}
	return s.log.With("session", ss.ID())
}

func sessionID(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	return ss.ID()
}

// recordID names the session in its run record and audit entries: the
// per-session server's Options.RecordID, else an id drawn at random for the
// session's life ("stdio-..." for a transport without a session id). It is
// never the Mcp-Session-Id: records are readable by other sessions
// (gui://runs), and that id is the session's credential.
func (s *Server) recordID(ss *mcp.ServerSession) string {
	if s.opts.RecordID != "" {
		return s.opts.RecordID
	}
	if ss == nil {
		return "stdio"
	}
	if v, ok := s.localIDs.Load(ss); ok {
		return v.(string)
	}
	id := "stdio-" + NewRecordID()[:8]
	if ss.ID() != "" {
		id = "http-" + NewRecordID()
	}
	v, _ := s.localIDs.LoadOrStore(ss, id)
	return v.(string)
}

// NewRecordID is 64 random bits in hex: a record id no one can derive from a
// session id or guess.
func NewRecordID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// clientName is the client's name from its initialize request ("" before it).
func clientName(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		return p.ClientInfo.Name
	}
	return ""
}

// summary is the first text content of a result, shortened, for the audit.
func summary(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			s := t.Text
			if len(s) > 300 {
				s = s[:300] + "..."
			}
			return s
		}
	}
	return ""
}

// textResult is a successful result with one line of text.
func textResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// jsonResult is a successful result whose text is v as JSON, also given as structured content.
func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

// Schema refinements.

func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic("schema has no property " + name)
	}
	return p
}

func enum(s *jsonschema.Schema, name string, values ...string) {
	p := prop(s, name)
	p.Enum = nil
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
}

func between(s *jsonschema.Schema, name string, lo, hi float64) {
	p := prop(s, name)
	p.Minimum, p.Maximum = &lo, &hi
}
