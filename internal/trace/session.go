package trace

import (
	"fmt"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
)

// SessionReportDelay is how long a session's recorder waits after the last
// tool call before refreshing the session's report.html.
const SessionReportDelay = 2 * time.Second

// MaxSessionCallsPerRun bounds one session record: after this many calls the
// session goes on in a new run directory ("...-part2"), and the full one is
// closed, so retention (Options.MaxRuns, MaxBytes) can remove it in time. A
// long-lived session thus never grows one directory without limit.
const MaxSessionCallsPerRun = 500

// Call is one atomic tool call of an MCP session.
type Call struct {
	// Tool is the MCP tool name; Args its arguments, already redacted by the caller.
	Tool string
	Args any
	// Result is the text returned to the client; IsError marks a tool error.
	Result  string
	IsError bool
	// Image is the screenshot involved (returned, or the frame the call acted on).
	Image *imaging.Shot
	// Actions are the inputs performed with their image and global points; they
	// are drawn as an overlay on Frame, or on Image when Frame is nil.
	Actions []action.Trace
	// Frame is the screenshot the Actions' image points refer to, typically
	// one an earlier call returned (stored once: identical images share a
	// file); nil means Image.
	Frame *imaging.Shot
	// Client is the MCP client's name; the session's first call names it in
	// the record (RunInfo.Client).
	Client string
	// Millis is how long the call took; Time when it ended (zero = now).
	Millis int64
	Time   time.Time
}

// SessionRecorder records one MCP session's atomic tool calls as a run
// directory of kind "session". Its methods are safe for concurrent use and
// return quickly: files are written by the run's writer goroutine.
type SessionRecorder struct {
	store     *Store
	sessionID string

	mu     sync.Mutex
	run    *Run
	n      int // calls recorded in the current run directory
	part   int // run directories begun
	closed bool
	// closing tracks full parts being closed, which Close waits for.
	closing sync.WaitGroup
	failed  bool
}

// Session returns the recorder of the MCP session whose record id is sessionID
// (the run's id and session_id carry it, so it must not be the session's
// Mcp-Session-Id), creating it on first
// use. Its run directory is created by the first recorded call.
func (s *Store) Session(sessionID string) *SessionRecorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.sessions[sessionID]; r != nil {
		return r
	}
	r := &SessionRecorder{store: s, sessionID: sessionID}
	s.sessions[sessionID] = r
	return r
}

// RecordCall records one tool call with its actions and timing.
func (sr *SessionRecorder) RecordCall(c Call) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.closed || sr.failed {
		return
	}
	if sr.run != nil && sr.n >= MaxSessionCallsPerRun {
		full := sr.run
		sr.run, sr.n = nil, 0
		sr.closing.Go(func() { _ = full.Close() }) // writes its report; errors are logged by the run
	}
	if sr.run == nil {
		sr.part++
		id := fmt.Sprintf("%s-session-%s", time.Now().UTC().Format("20060102-150405"), sanitizeID(sr.sessionID))
		if sr.part > 1 {
			id += fmt.Sprintf("-part%d", sr.part)
		}
		r, err := sr.store.begin(KindSession, id, "", sr.sessionID, c.Client, nil)
		if err != nil {
			sr.failed = true
			sr.store.log.Error("trace: cannot record MCP session; its tool calls go unrecorded", "session", sr.sessionID, "err", err)
			return
		}
		r.onIdle = func() { r.fail("refresh "+ReportFile, writeReport(r.dir, r.scrub, true)) }
		r.onIdleWait = SessionReportDelay
		sr.run = r
	}
	sr.n++
	if c.Time.IsZero() {
		c.Time = time.Now()
	}
	it := item{line: Line{Time: c.Time, RunID: sr.run.id, Kind: KindTool, Step: sr.n, Tool: c.Tool,
		ToolResult: c.Result, IsError: c.IsError, Millis: c.Millis}}
	if c.Args != nil {
		it.line.Args = mustJSON(c.Args)
	}
	if len(c.Actions) > 0 {
		it.line.Actions = mustJSON(c.Actions)
	}
	if c.Image != nil {
		it.img = &llm.Image{MIME: c.Image.MIME, Data: c.Image.Data, Frame: c.Image.Frame}
	}
	if c.Frame != nil && len(c.Actions) > 0 {
		it.frame = &llm.Image{MIME: c.Frame.MIME, Data: c.Frame.Data, Frame: c.Frame.Frame}
	}
	sr.run.enqueue(it)
}

// RunID returns the session's run id, or "" before the first call.
func (sr *SessionRecorder) RunID() string {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.run == nil {
		return ""
	}
	return sr.run.id
}

// Flush waits until every call recorded so far is written.
func (sr *SessionRecorder) Flush() {
	sr.mu.Lock()
	r := sr.run
	sr.mu.Unlock()
	if r != nil {
		r.Flush()
	}
}

// Close writes the session's report and stops recording it; later calls are dropped.
func (sr *SessionRecorder) Close() error {
	sr.mu.Lock()
	sr.closed = true
	r := sr.run
	sr.mu.Unlock()
	sr.store.mu.Lock()
	if sr.store.sessions[sr.sessionID] == sr {
		delete(sr.store.sessions, sr.sessionID)
	}
	sr.store.mu.Unlock()
	defer sr.closing.Wait()
	if r == nil {
		return nil
	}
	return r.Close()
}
