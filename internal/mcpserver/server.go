// Package mcpserver exposes the desktop to MCP hosts on the official go-sdk:
// atomic tools (screenshot, click, type, ...), gui_execute_task for the agent
// loop, resources (status, permissions, audit, displays), and the stdio and
// Streamable HTTP transports.
//
// Coordinates. Tools take coordinates in pixels of the latest gui_screenshot or
// gui_zoom image of the display (what the calling model saw) unless `space`
// says otherwise; the frame of that image maps them to global pixels
// (geom.Frame.Resolve). Frames are kept per MCP session and display: two
// clients taking screenshots of different sizes do not disturb each other.
// Before any screenshot, image space is the display at the size the default
// screenshot would have (an implicit frame, computed, not captured).
//
// Input goes through one desktop.Input shared by all sessions, so actions from
// several clients never interleave, and its ledger releases whatever a failed or
// cancelled action left pressed. Failures the model can react to (blocked
// hotkey, unknown key, point off every display, stale frame, kill switch) are
// tool results with IsError set, never protocol errors.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/hosting"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/secret"
	"github.com/guiagent/guiagent/internal/trace"
	"github.com/guiagent/guiagent/internal/vision"
)

// TaskRunner runs one gui_execute_task request to its end. progress receives
// the run's progress events (Kind agent.EvProgress, with Message, Progress and
// Total) as they happen, and no other kind; Run must be safe for concurrent
// use (it queues or preempts as configured). The agent package implements it.
type TaskRunner interface {
	Run(ctx context.Context, t agent.Task, progress func(agent.Event)) agent.Result
}

// ToolRecorder receives atomic tool calls for the run record of one MCP
// session (*trace.SessionRecorder implements it). Each call comes with its
// redacted arguments, result text, error flag, duration, the screenshot it
// returned, and for input tools the actions with their image and global points
// and the screenshot (Call.Frame) those image points refer to. A recorder that
// is also an io.Closer is closed when its session ends.
//
// The call is described in recording terms only (trace.Call: imaging.Shot
// screenshots, the executed actions), never the agent's run types.
type ToolRecorder interface {
	RecordCall(c trace.Call)
}

// The trace package's recorder and store plug in as they are, with no adapter.
var (
	_ ToolRecorder = (*trace.SessionRecorder)(nil)
	_ RunStore     = (*trace.Store)(nil)
)

// Options configures a Server. Only Screen is required; every other zero value
// is documented.
type Options struct {
	// Screen is the desktop backend (started). Required.
	Screen desktop.Screen
	// Input performs all input; nil means desktop.NewInput(Screen) with its Gate
	// set to KillSwitch.Gate. When given, the caller sets its Gate.
	Input *desktop.Input
	// Executor performs every input tool's action (the one the agent, flows
	// and the Go API share); nil means one over Input with Keys, Questions,
	// AskTimeout and KillSwitch.
	Executor *operate.Executor
	// Shots captures and encodes screenshots; nil means imaging.NewPipeline().
	Shots *imaging.Pipeline
	// Shot holds the default screenshot options (long edge, format, quality,
	// byte budget); zero fields take imaging's defaults (imaging.DefaultMaxLongEdge,
	// DefaultQuality, DefaultMaxBytes).
	Shot imaging.Options
	// CoordinateMode is the default `space` of coordinate arguments
	// (GUI_AGENT_COORDINATE_MODE): "" or "image-absolute" = image pixels,
	// "screen", or a normalized mode of geom.CoordinateModes.
	CoordinateMode string
	// DefaultDisplay is the display id used when a tool gets none ("" = primary).
	DefaultDisplay string
	// CurrentDisplay, when set, is asked for the default display id at each
	// call instead of DefaultDisplay (the settings API changes it at run time).
	CurrentDisplay func() string
	// ScreenshotAfterAction attaches a fresh screenshot to every input tool's result.
	ScreenshotAfterAction bool
	// AfterActionDelay is how long to wait before that screenshot so the screen
	// can react; zero means 150 ms.
	AfterActionDelay time.Duration
	// MaxWait caps gui_wait; zero means 30 s.
	MaxWait time.Duration
	// Keys is the hotkey policy; nil means the running platform's defaults.
	Keys *safety.KeyPolicy
	// KillSwitch stops all input while its file exists; nil means none.
	KillSwitch *safety.KillSwitch
	// Questions holds the questions waiting for a person (a run's ask_user,
	// a combination of GUI_AGENT_CONFIRM_HOTKEYS), which the dashboard
	// answers; the calling client is asked too when it declared elicitation.
	// nil: only the client is asked.
	Questions *ask.Broker
	// AskTimeout bounds the wait for one answer; zero means 300 s.
	AskTimeout time.Duration
	// DashboardURL, when set, returns a one-time sign-in link to the
	// dashboard ("" when none is served); a secret question is sent to a
	// client that supports URL-mode elicitation as this link.
	DashboardURL func() string
	// Audit receives every tool call; nil means a new ring of 1000 entries
	// that uses Scrubber.
	Audit *safety.Audit
	// Scrubber knows the secrets (the API keys, the HTTP token, the VNC
	// password) replaced by secret.Marker in every tool result, error,
	// progress message, audit entry and session record the server produces:
	// a model can repeat a key it was shown, and a provider or a failing call
	// can echo one. It is shared with the rest of the process, so a key added
	// to it at run time (the settings API) is scrubbed from the next call on.
	// Nil scrubs nothing.
	Scrubber *secret.Scrubber
	// Tasks runs gui_execute_task; nil leaves that tool unregistered (no model
	// is configured), and gui://status then says task_tool false.
	Tasks TaskRunner
	// Tools selects the tools offered, by tool name or group name (GroupObserve,
	// GroupInput, ...; see ToolGroups); nil or empty offers all. New fails on
	// a name that is neither, listing the valid ones, and when the selection
	// leaves no tool to offer.
	Tools []string
	// Flows runs gui_run_flow; nil leaves that tool unregistered.
	Flows FlowRunner
	// FlowCacheDir is where gui_run_flow keeps each flow's cache
	// (NAME.cache.yaml); "" = the current directory.
	FlowCacheDir string
	// Vision answers gui_locate, gui_query, gui_assert and gui_wait_for, and
	// locates the `target` of the input tools; nil leaves those four tools
	// unregistered (a `target` is then an error naming the fix).
	Vision vision.Seer
	// VisionProfile is the profile (image sizing) of the model behind Vision's
	// Query and Assert: their screenshots are prepared for it.
	VisionProfile geom.Profile
	// LocateProfile is the profile of the model that locates
	// (GUI_AGENT_GROUNDING_MODEL); a zero Name means VisionProfile.
	LocateProfile geom.Profile
	// OCR reads the screen's text for gui_find_text and gui_read_text, and
	// is the locate chain's OCR tier (before the vision model) for a
	// `target` that names its element by text; nil: those tools say how to
	// install OCR (OCRMissing) and the chain skips the tier with a note.
	OCR *ocr.Reader
	// OCRMissing is why OCR is not available (an error wrapping
	// ocr.ErrUnavailable that says how to install it); used when OCR is nil.
	OCRMissing error
	// CurrentTask, when set, reports the running task for gui://status.
	CurrentTask func() any
	// Records, when set, returns the recorder for an MCP session id ("" for
	// stdio). When the session ends the server closes that recorder if it is an
	// io.Closer.
	Records func(sessionID string) ToolRecorder
	// Runs, when set, serves gui://runs (recent task runs) and gui://runs/{id}.
	Runs RunStore
	// Name and Version identify the server to clients; defaults "guiagent" and "dev".
	Name, Version string
	// Logger receives logs (stderr in cmd); nil discards them.
	Logger *slog.Logger
	// Metrics, when set, counts every tool call (see Metrics); nil counts nothing.
	Metrics Metrics
	// SessionID, when set, is the id of the one MCP session this server will
	// serve (a desktop-per-session Fleet chooses it before the session starts);
	// "" lets the SDK pick random ids. The id is the session's credential
	// (with the shared token, whoever presents it is the session): it appears
	// only in the initialize response to its creator, never in a record.
	SessionID string
	// RecordID, with SessionID, names that one session in everything another
	// session could read: its run records (gui://runs), audit entries and log
	// lines. It must be unguessable and unrelated to SessionID (the Fleet draws
	// it at random); "" draws one. A per-session server's gui://runs,
	// gui://runs/{id}, gui://audit and gui://status show this session's only.
	RecordID string
	// KeepAlive, when positive, pings each session's client this often and ends
	// the session when a ping goes unanswered (a killed client); zero never pings.
	KeepAlive time.Duration
}

// Metrics receives the server's counts (*telemetry.Metrics implements it).
// Its methods must be safe for concurrent use and return quickly.
type Metrics interface {
	// ToolCall counts one finished tool call: its name, whether it failed
	// (an error result), its duration and the bytes of the screenshot it
	// returned (0 when none).
	ToolCall(tool string, failed bool, d time.Duration, screenshotBytes int)
}

// Server is guiagent's MCP server. Create it with New; it is safe for
// concurrent use by any number of sessions.
type Server struct {
	askers  askers // the ask channels of the input calls in flight
	opts    Options
	mcp     *mcp.Server
	screen  desktop.Screen
	input   *desktop.Input
	exec    *operate.Executor
	shots   *imaging.Pipeline
	keys    *safety.KeyPolicy
	kill    *safety.KillSwitch
	audit   *safety.Audit
	scrub   *secret.Scrubber
	calls   callTracker
	log     *slog.Logger
	mode    geom.Space // default space of the tools' points
	started time.Time
	frames  *frameStore
	frameN  atomic.Uint64
	// elements reads the UI as elements (the backend's element source);
	// nil: none, and gui_snapshot and refs are not offered.
	elements desktop.ElementSource
	snaps    *snapStore // each session's latest snapshot (refs)
	watched  sync.Map   // *mcp.ServerSession -> *sync.Once of its endSession: sessions whose end is awaited
	jobs     jobTable   // tool calls waiting for a client's retry with an answer (rounds.go)
	// localIDs holds each session's record id (recordID): *mcp.ServerSession -> string.
	localIDs sync.Map
	sel      toolSelection // the tools opts.Tools selects (nil: all)

	toolsMu sync.Mutex
	tools   []string   // registered tool names, in order
	tasks   TaskRunner // gui_execute_task's runner; nil: not offered
	vision  visionModel
}

// visionModel is the vision service and the profiles of its models.
type visionModel struct {
	seer        vision.Seer // nil: the vision tools are not offered
	ask, locate geom.Profile
}

// New validates opts and builds the server with its tools and resources
// registered. It starts nothing.
func New(opts Options) (*Server, error) {
	if opts.Screen == nil {
		return nil, errors.New("mcpserver: Options.Screen is required: open a desktop backend first")
	}
	s := &Server{opts: opts, screen: opts.Screen, started: time.Now()}
	s.log = opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	sdkLog := s.log.With("component", "mcp-sdk") // the SDK names the session itself (session_id)
	if opts.SessionID != "" {
		if s.opts.RecordID == "" {
			s.opts.RecordID = NewRecordID()
		}
		s.log = s.log.With("session", s.opts.RecordID) // every line of this server is its one session's
	}
	s.kill = opts.KillSwitch
	s.input = opts.Input
	if s.input == nil {
		s.input = desktop.NewInput(opts.Screen)
		if s.kill != nil {
			s.input.Gate = s.kill.Gate
		}
	}
	s.exec = opts.Executor
	if s.exec != nil && opts.Input == nil {
		s.input = s.exec.Input()
	}
	s.shots = opts.Shots
	if s.shots == nil {
		s.shots = imaging.NewPipeline()
	}
	if err := opts.Shot.Validate(); err != nil {
		return nil, fmt.Errorf("mcpserver: screenshot options: %w", err)
	}
	s.keys = opts.Keys
	if s.keys == nil {
		k, err := safety.NewKeyPolicy(safety.KeyPolicyOptions{})
		if err != nil {
			return nil, err
		}
		s.keys = k
	}
	s.audit = opts.Audit
	if s.audit == nil {
		s.audit = safety.NewAudit(safety.DefaultAuditSize, opts.Scrubber)
	}
	s.scrub = opts.Scrubber
	if s.exec == nil {
		eo := operate.Options{Keys: s.keys, Questions: opts.Questions, AskTimeout: s.askTimeout(), Logger: s.log}
		if s.kill != nil {
			eo.KillSwitch = s.kill
		}
		s.exec = operate.New(s.input, eo)
	}
	mode, err := geom.ParseSpace(opts.CoordinateMode, geom.SpaceImage)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.Var("CoordinateMode"), err)
	}
	s.mode = mode
	if s.opts.AfterActionDelay == 0 {
		s.opts.AfterActionDelay = 150 * time.Millisecond
	}
	if s.opts.MaxWait == 0 {
		s.opts.MaxWait = 30 * time.Second
	}
	if s.opts.Name == "" {
		s.opts.Name = "guiagent"
	}
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	name, version := s.opts.Name, s.opts.Version
	s.frames = newFrameStore()
	s.snaps = newSnapStore()
	if src, ok := desktop.ElementsOf(opts.Screen); ok {
		s.elements = src
	}
	so := &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLog,
		Capabilities: &mcp.ServerCapabilities{}, // tools and resources are inferred; no logging capability
		KeepAlive:    opts.KeepAlive,
		// One late answer (a busy machine) is not a dead client.
		KeepAliveFailureThreshold: 2,
	}
	if id := opts.SessionID; id != "" {
		so.GetSessionID = func() string { return id }
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: name, Title: "guiagent desktop control", Version: version}, so)
	if err := s.registerTools(); err != nil {
		return nil, err
	}
	s.addResources()
	return s, nil
}

// registerTools adds the tools of toolList that OfferedTools offers for
// opts.Tools and the services opts gives.
func (s *Server) registerTools() error {
	sel, err := selectTools(s.opts.Tools)
	if err != nil {
		return err
	}
	s.sel, s.tasks = sel, s.opts.Tasks
	s.vision = visionModel{s.opts.Vision, s.opts.VisionProfile, s.opts.LocateProfile}
	offered, err := OfferedTools(s.opts.Tools, Serving{Vision: s.opts.Vision != nil, Tasks: s.opts.Tasks != nil, Flows: s.opts.Flows != nil, Elements: s.elements != nil,
		Pages: has[desktop.Navigator](s.screen), Tabs: has[desktop.Tabber](s.screen), Uploads: has[desktop.Uploader](s.screen), Apps: has[desktop.Apps](s.screen)})
	if err != nil {
		return err
	}
	for _, t := range s.toolList() {
		if !slices.Contains(groupOrder, t.group) {
			panic("mcpserver: tool " + t.name + " declares no group of groupOrder: give newTool its group")
		}
		if slices.Contains(offered, t.name) {
			t.add(s.mcp)
			s.tools = append(s.tools, t.name)
		}
	}
	return nil
}

const instructions = `guiagent controls this computer's screen, mouse and keyboard.
Take gui_screenshot first. display is an id from gui_list_displays (default: the primary display); buttons
default to left; modifiers are keys held during the action, e.g. ["ctrl"] (with gui_scroll: zoom). Points (x, y) are read in a space: image (the default) is pixels of the latest
gui_screenshot or gui_zoom image of the display, fractions allowed; screen is global logical pixels;
normalized-1000, normalized-999, normalized-0-1 and yx-normalized-1000 are fractions of that image.
frame_id (from any session of this server, which keeps the 32 most recent) names the image the points refer to
instead of the latest; each result names the frame it used. An argument a tool's schema does not name is refused.
Use gui_execute_task (when offered) to hand over a whole goal. Input tools that offer them take, instead of x and y,
ref: an element's ref from this session's latest gui_snapshot (a stale ref is an error: snapshot again), or
target: the element in words, found in the accessibility tree, by OCR (a quoted "label" or short label) or by a model.`

// MCP returns the underlying go-sdk server (to connect custom transports).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// ToolNames lists the registered tools in registration order.
func (s *Server) ToolNames() []string {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	return append([]string(nil), s.tools...)
}

// SetTasks sets gui_execute_task's runner while the server runs (a model
// configured or cleared at run time): a runner offers the tool, when the
// tool selection includes it; nil withdraws it. Connected clients are sent
// notifications/tools/list_changed.
func (s *Server) SetTasks(r TaskRunner) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	had := s.tasks != nil
	s.tasks = r
	const name = "gui_execute_task"
	if !s.sel.has(name) {
		return
	}
	switch {
	case r != nil && !had:
		s.executeTaskTool().add(s.mcp)
		s.tools = append(s.tools, name)
	case r == nil && had:
		s.mcp.RemoveTools(name)
		s.tools = slices.DeleteFunc(s.tools, func(n string) bool { return n == name })
	}
}

// visionTools are the tools offered only with a vision model.
var visionTools = []string{"gui_locate", "gui_query", "gui_assert", "gui_wait_for"}

// SetVision sets the vision service and its models' profiles while the
// server runs (a model configured or cleared at run time), as SetTasks does
// for gui_execute_task: a service offers gui_locate, gui_query, gui_assert
// and gui_wait_for (those the tool selection includes) and makes `target`
// work; nil withdraws them.
func (s *Server) SetVision(seer vision.Seer, ask, locate geom.Profile) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	had := s.vision.seer != nil
	s.vision = visionModel{seer, ask, locate}
	switch {
	case seer != nil && !had:
		for _, t := range []toolDef{s.locateTool(), s.queryTool(), s.assertTool(), s.waitForTool()} {
			if s.sel.has(t.name) {
				t.add(s.mcp)
				s.tools = append(s.tools, t.name)
			}
		}
	case seer == nil && had:
		s.mcp.RemoveTools(visionTools...)
		s.tools = slices.DeleteFunc(s.tools, func(n string) bool { return slices.Contains(visionTools, n) })
	}
	if (seer != nil) != had {
		s.reregisterInput() // their target properties come or go with the model
	}
}

// reregisterInput registers the offered input tools again, so that their
// schemas follow s.vision (target only with a model). Callers hold toolsMu.
func (s *Server) reregisterInput() {
	for _, t := range s.catalogue() {
		if t.group == GroupInput && slices.Contains(s.tools, t.name) {
			t.add(s.mcp) // replaces the tool of that name; clients are told the list changed
		}
	}
}

// visionNow is the vision service and its profiles now (seer nil: none).
func (s *Server) visionNow() visionModel {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	return s.vision
}

// taskRunner is gui_execute_task's runner now (nil: no model).
func (s *Server) taskRunner() TaskRunner {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	return s.tasks
}

// Audit returns the audit ring buffer the server records into.
func (s *Server) Audit() *safety.Audit { return s.audit }

// Input returns the serialized input layer (for ReleaseAll at shutdown).
func (s *Server) Input() *desktop.Input { return s.input }

// ServeStdio serves one session over stdin/stdout until the client disconnects
// or ctx is done. Nothing but JSON-RPC is written to stdout. A message over
// MaxStdioMessageBytes, or one the SDK could not decode (messageVetter), gets
// a JSON-RPC error and the session goes on. Whatever
// input is held when it returns is released.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.serveStdio(ctx, os.Stdin, os.Stdout)
}

// serveStdio is ServeStdio on the given input and output.
func (s *Server) serveStdio(ctx context.Context, stdin io.ReadCloser, stdout io.Writer) error {
	defer s.releaseAll()
	s.log.Info("serving MCP over stdio", "tools", len(s.tools))
	return hosting.Stdio{Server: s.mcp, Log: s.log, Ended: s.flushSession}.Serve(ctx, stdin, stdout)
}

// ReleaseAll releases whatever input the server's desktop holds (a fleet
// calls it when a session's desktop is destroyed).
func (s *Server) ReleaseAll() { s.releaseAll() }

func (s *Server) releaseAll() {
	if s.input == nil {
		return // a fleet's front server has no desktop
	}
	if err := s.input.ReleaseAll(); err != nil {
		s.log.Warn("releasing held input failed", "err", err)
	}
}

// watchSession arranges, once per session, that when ss ends (client gone,
// DELETE, idle timeout) its frames are forgotten and its run record is closed.
// Tool handlers call it first; a session ends only when no handler runs, so
// nothing is stored for ss after that.
func (s *Server) watchSession(ss *mcp.ServerSession) {
	if ss == nil {
		return
	}
	if _, seen := s.watched.LoadOrStore(ss, &sync.Once{}); seen {
		return
	}
	go func() {
		_ = ss.Wait()
		s.endSession(ss)
	}()
}

// endSession forgets an ended session and closes its run record (writing its
// calls and report), once; a second caller waits for the first to finish.
func (s *Server) endSession(ss *mcp.ServerSession) {
	once, ok := s.watched.Load(ss)
	if !ok {
		return
	}
	once.(*sync.Once).Do(func() {
		s.jobs.cancelSession(ss)
		s.frames.forget(ss)
		s.snaps.forget(ss)
		if s.opts.Records != nil {
			if c, ok := s.opts.Records(s.recordID(ss)).(io.Closer); ok {
				if err := c.Close(); err != nil {
					s.log.Warn("closing the record of an ended MCP session failed", "session", s.recordID(ss), "err", err)
				}
			}
		}
		s.localIDs.Delete(ss)
		s.watched.Delete(ss)
	})
}

// StdioFlush bounds how long a stdio server, once its client has gone,
// waits for the session's record (its last calls and report) to be written.
const StdioFlush = 5 * time.Second

// flushSession closes ss's record before the process may exit, waiting at
// most StdioFlush.
func (s *Server) flushSession(ss *mcp.ServerSession) {
	done := make(chan struct{})
	go func() { s.endSession(ss); close(done) }()
	select {
	case <-done:
	case <-time.After(StdioFlush):
		s.log.Warn("the session record was not written in time; its last calls may be missing", "after", StdioFlush)
	}
}

func (s *Server) nextFrameID() string { return fmt.Sprintf("f%d", s.frameN.Add(1)) }

// recoverTool turns a panic in a tool into an error result and logs the stack.
func (s *Server) recoverTool(tool string, err *error) {
	if p := recover(); p != nil {
		s.log.Error("tool panicked", "tool", tool, "panic", p, "stack", string(debug.Stack()))
		*err = fmt.Errorf("internal error in %s: %v (this is a guiagent bug; please report it)", tool, p)
	}
}

// defaultDisplay is the display id of a call that names none ("" = primary).
func (s *Server) defaultDisplay() string {
	if s.opts.CurrentDisplay != nil {
		return s.opts.CurrentDisplay()
	}
	return s.opts.DefaultDisplay
}
