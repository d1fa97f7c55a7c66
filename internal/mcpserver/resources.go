package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/trace"
)

// Resource URIs.
const (
	StatusURI      = "gui://status"
	PermissionsURI = "gui://permissions"
	AuditURI       = "gui://audit"
	DisplaysURI    = "gui://displays"
	RunsURI        = "gui://runs"
	RunURITemplate = "gui://runs/{id}"
	DownloadsURI   = "gui://downloads"
)

// RunStore lists the recorded runs (tasks and MCP sessions) behind gui://runs;
// *trace.Store implements it. Its methods must be safe for concurrent use.
type RunStore interface {
	// List returns recent runs, newest first.
	List() ([]trace.RunInfo, error)
	// Get returns one run's record, including its result; an unknown id is an error.
	Get(id string) (trace.RunInfo, error)
}

// jsonContents encodes v as the indented JSON contents of uri, with the
// secrets the server's scrubber knows replaced (a task text or a run record
// written before a key was set may hold it).
func (s *Server) jsonContents(uri string, v any) (*mcp.ReadResourceResult, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%s: encoding: %w", uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: s.scrub.String(b.String())}}}, nil
}

func (s *Server) addResources() {
	add := func(uri, name, desc string, body func(ctx context.Context) (any, error)) {
		s.mcp.AddResource(&mcp.Resource{URI: uri, Name: name, Description: desc, MIMEType: "application/json"},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				v, err := body(ctx)
				if st, ok := v.(map[string]any); ok && uri == StatusURI {
					// The reader's own record id: its runs in gui://runs, its audit entries.
					s.watchSession(req.Session) // forgets the id when the session ends
					st["session"] = s.recordID(req.Session)
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %w", uri, err)
				}
				return s.jsonContents(uri, v)
			})
	}
	add(StatusURI, "status", "Backend, displays, current task, uptime, kill switch, sessions, and the reader's session record id (session).", s.Status)
	add(PermissionsURI, "permissions", "What this platform allows: capture, input, clipboard, and backend details (on X11: XTEST, SHM, RandR).", s.Permissions)
	add(AuditURI, "audit", "The last 1000 tool calls: time, tool, arguments with text redacted to its length, result, duration.",
		func(context.Context) (any, error) { return map[string]any{"entries": s.auditEntries()}, nil })
	add(DisplaysURI, "displays", "The monitors, as gui_list_displays reports them.", func(ctx context.Context) (any, error) {
		ds, err := s.displays(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"displays": displayInfos(ds)}, nil
	})
	if pe, ok := desktop.CapabilityOf[desktop.PageEvents](s.screen); ok {
		add(DownloadsURI, "downloads", "The files pages downloaded in this session: name, path, source URL, bytes, state.",
			func(context.Context) (any, error) { return map[string]any{"downloads": pe.Downloads()}, nil })
	}
	if s.opts.Runs == nil {
		return
	}
	add(RunsURI, "runs", "Recent gui_execute_task runs, newest first: id, task, status, steps, run directory and report path.",
		func(context.Context) (any, error) {
			runs, err := s.runs()
			return map[string]any{"runs": runs}, err
		})
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: RunURITemplate, Name: "run", MIMEType: "application/json",
		Description: "One run's record and result (status, summary, result, trace, usage, report path); id from gui://runs."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			uri := req.Params.URI
			id := strings.TrimPrefix(uri, RunsURI+"/")
			if id == "" || strings.ContainsAny(id, "/\\") || id == uri {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			run, err := s.opts.Runs.Get(id)
			if err == nil && !s.ownRun(run) {
				err = fmt.Errorf("no run %q of this MCP session", id) // another session's: said as of an unknown id
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w (list runs with gui://runs)", uri, err)
			}
			return s.jsonContents(uri, run)
		})
}

// perSession reports whether the server serves one session of a fleet,
// whose resources show that session's records only.
func (s *Server) perSession() bool { return s.opts.SessionID != "" }

// auditEntries is the audit gui://audit shows: every entry, or in a
// per-session server the session's own ("entries": [] when empty, never null).
func (s *Server) auditEntries() []safety.AuditEntry {
	out := []safety.AuditEntry{}
	for _, e := range s.audit.Snapshot() {
		if !s.perSession() || e.Session == s.opts.RecordID {
			out = append(out, e)
		}
	}
	return out
}

// runs lists the runs gui://runs shows: every run, or in a per-session server
// the session's own (its session record, its tasks and flows).
func (s *Server) runs() ([]trace.RunInfo, error) {
	all, err := s.opts.Runs.List()
	if !s.perSession() {
		return all, err
	}
	out := []trace.RunInfo{}
	for _, r := range all {
		if s.ownRun(r) {
			out = append(out, r)
		}
	}
	return out, err
}

// ownRun reports whether a run may be shown to this server's sessions.
func (s *Server) ownRun(r trace.RunInfo) bool {
	return !s.perSession() || r.SessionID == s.opts.RecordID
}

// Status is the content of gui://status (also used by the dashboard).
func (s *Server) Status(ctx context.Context) (any, error) {
	st := map[string]any{
		"server":          s.opts.Name,
		"version":         s.opts.Version,
		"backend":         s.screen.Name(),
		"os":              runtime.GOOS,
		"uptime_s":        int64(time.Since(s.started).Seconds()),
		"coordinate_mode": s.mode,
		"tools":           s.ToolNames(),
		"kill_switch":     map[string]any{"file": s.kill.Path(), "engaged": s.kill.Engaged()},
		"blocked_hotkeys": s.keys.Blocked(),
		"confirm_hotkeys": s.keys.Confirm(),
		"questions":       s.questionStatus(),
		"audit_entries":   len(s.auditEntries()),
	}
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	st["sessions"] = n
	if ds, err := s.displays(ctx); err == nil {
		st["displays"] = displayInfos(ds)
	} else {
		st["displays_error"] = err.Error()
	}
	keys, buttons := s.input.Held()
	held := []string{}
	for _, k := range keys {
		held = append(held, k.ShortName())
	}
	for _, b := range buttons {
		held = append(held, b.String()+" button")
	}
	st["held"] = held
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	// For leak checks (guiagent bench soak): what the process holds now.
	st["runtime"] = map[string]any{"goroutines": runtime.NumGoroutine(), "heap_alloc_bytes": ms.HeapAlloc, "sys_bytes": ms.Sys}
	st["task_tool"] = slices.Contains(s.ToolNames(), "gui_execute_task")
	if s.opts.CurrentTask != nil {
		st["current_task"] = s.opts.CurrentTask()
	}
	return st, nil
}

// Permissions is the content of gui://permissions.
func (s *Server) Permissions(ctx context.Context) (any, error) {
	caps := desktop.CapabilitiesOf(ctx, s.screen)
	return map[string]any{
		"backend":   s.screen.Name(),
		"os":        runtime.GOOS,
		"capture":   caps.Capture,
		"input":     caps.Input,
		"clipboard": caps.Clipboard,
		"windows":   caps.Windows,
		"details":   caps.Details,
		"hotkeys": map[string]any{"platform": s.keys.Platform(), "blocked": s.keys.Blocked(), "allow_with": config.Var("AllowedHotkeys"),
			"confirm": s.keys.Confirm(), "confirm_with": config.Var("ConfirmHotkeys")},
		"kill_switch": map[string]any{"file": s.kill.Path(), "engaged": s.kill.Engaged(), "set_with": config.Var("KillSwitchFile")},
	}, nil
}
