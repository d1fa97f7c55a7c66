// Package trace records runs: every gui_execute_task run and every MCP
// session's atomic tool calls get a directory under the runs folder with an
// append-only events.jsonl, the task and redacted configuration, per-step model
// request/response files, the screenshots sent (stored once per content),
// overlays of the actions drawn where they landed, result.json, and a
// self-contained report.html that replays the run from disk.
//
// A Run is an agent.Observer: OnEvent snapshots the event and queues it for a
// writer goroutine, so recording stays off the agent loop's hot path.
package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/secret"
)

// Default retention limits used when Options leaves them zero.
const (
	DefaultMaxRuns  = 200
	DefaultMaxBytes = int64(2 << 30)
	// DefaultMaxRunImageBytes caps the image files of one run. report.html
	// embeds each image again (base64, so it opens on its own), so a run
	// directory stays under about 60 MB with its text; retention
	// (DefaultMaxBytes) bounds the total.
	DefaultMaxRunImageBytes = int64(22 << 20)
)

// File names inside a run directory.
const (
	EventsFile = "events.jsonl"
	TaskFile   = "task.txt"
	ConfigFile = "config.json"
	ResultFile = "result.json"
	MetaFile   = "run.json"
	ReportFile = "report.html"
	ImagesDir  = "images"
	StepsDir   = "steps"
)

// Run kinds.
const (
	KindTask    = "task"    // one gui_execute_task run
	KindSession = "session" // the atomic tool calls of one MCP session
	KindFlow    = "flow"    // one flow run (guiagent run, gui_run_flow)
)

// Run statuses besides the agent.Status values of finished task runs.
const (
	StatusRunning    = "running"    // being recorded by this process
	StatusIncomplete = "incomplete" // the recorder stopped without a result (crash or kill)
	StatusRecorded   = "recorded"   // a closed session record
	// StatusOpen and StatusIdle replace StatusRunning for a session record
	// while its MCP session is open on the server: "open" when a tool call came
	// within SessionIdleAfter, else "idle". A client that goes away without
	// ending its session (an HTTP client that sends no DELETE) leaves it idle
	// until the server's session timeout closes it ("recorded").
	StatusOpen = "open"
	StatusIdle = "idle"
)

// SessionIdleAfter is how long after its last tool call an open session
// record is listed as StatusIdle.
const SessionIdleAfter = time.Minute

// ErrNotFound is returned for a run id that names no run directory.
var ErrNotFound = errors.New("run not found")

// Options configures a Store. Use DefaultOptions for the documented defaults.
type Options struct {
	// Dir is the runs folder (config.DefaultRunsDir is guiagent's default); ""
	// means a "guiagent/runs" folder in the system's temporary directory.
	Dir string
	// DebugImages stores the screenshots sent and action overlays; false keeps
	// text only. The zero value is false: DefaultOptions sets it to true.
	DebugImages bool
	// MaxRuns keeps at most this many finished run directories (besides those
	// being recorded), removing the oldest first; 0 means DefaultMaxRuns,
	// negative means no limit. GUI_AGENT_RUNS_KEEP.
	MaxRuns int
	// MaxBytes caps the total size in bytes of the finished runs, removing the
	// oldest first; 0 means DefaultMaxBytes, negative means no limit.
	// GUI_AGENT_RUNS_MAX_MB.
	MaxBytes int64
	// MaxRunImageBytes caps the bytes of images one run stores: past 60% of it
	// overlays are made smaller, and images that would exceed it are not
	// stored (the record says so). 0 means DefaultMaxRunImageBytes, negative
	// means no cap.
	MaxRunImageBytes int64
	// Scrubber knows the secrets (the configured API key, the HTTP token)
	// scrubbed from everything written. It is shared with the rest of the
	// process: a secret added to it later (a key set through the settings API)
	// is scrubbed from what is written after. The values of credential-named
	// fields of a configuration passed to Begin are added to it. Nil means a
	// scrubber of the Store's own, which learns only those values.
	Scrubber *secret.Scrubber
	// Logger receives recorder write errors; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultOptions returns Options with images on and default retention.
func DefaultOptions() Options { return Options{DebugImages: true} }

// RunInfo describes one recorded run.
type RunInfo struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Task is the task text (task and flow runs). SessionID is the record id
	// of the MCP session the run belongs to: of a session run, or of the
	// per-session server a task or flow run was begun in (BeginOwned). It is
	// never the session's Mcp-Session-Id, which is the session's credential.
	Task      string `json:"task,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Client is the MCP client's name (its initialize clientInfo.name) for session runs.
	Client   string     `json:"client,omitempty"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	// Status is an agent.Status for finished task runs, or one of the Status* constants.
	Status  string `json:"status"`
	Summary string `json:"summary,omitempty"`
	// Steps counts agent steps (task runs; while running, the step under way)
	// or tool calls (session runs).
	Steps int `json:"steps"`
	// LastActivity is when the run last recorded an event; set while it is
	// being recorded by this process.
	LastActivity *time.Time `json:"last_activity,omitempty"`
	// Dir is the run directory and Report its report.html (absolute paths).
	Dir    string `json:"dir,omitempty"`
	Report string `json:"report,omitempty"`
	// Result is the run's result.json; set by Get only.
	Result *agent.Result `json:"result,omitempty"`
}

// Store manages the runs folder. Its methods are safe for concurrent use.
type Store struct {
	opts Options
	dir  string
	log  *slog.Logger

	mu       sync.Mutex
	active   map[string]*Run
	sessions map[string]*SessionRecorder
	live     map[string]*os.File // the held liveFile of each active run
}

// NewStore returns a store over opts.Dir. It has no side effects: the folder
// is created by the first Begin.
func NewStore(opts Options) *Store {
	if opts.Dir == "" {
		opts.Dir = filepath.Join(os.TempDir(), "guiagent", "runs")
	}
	if opts.MaxRuns == 0 {
		opts.MaxRuns = DefaultMaxRuns
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxRunImageBytes == 0 {
		opts.MaxRunImageBytes = DefaultMaxRunImageBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Scrubber == nil {
		opts.Scrubber = secret.NewScrubber()
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		dir = opts.Dir
	}
	return &Store{opts: opts, dir: dir, log: opts.Logger, active: map[string]*Run{}, sessions: map[string]*SessionRecorder{}, live: map[string]*os.File{}}
}

// Dir returns the runs folder.
func (s *Store) Dir() string { return s.dir }

// DebugImages reports whether screenshots and overlays are stored.
func (s *Store) DebugImages() bool { return s.opts.DebugImages }

// validID reports whether id can name a run directory.
func validID(id string) bool {
	return id != "" && id == sanitizeID(id)
}

// sanitizeID maps id to a safe directory name: letters, digits, '.', '_' and
// '-' only, at most 96 bytes, never "." or "..".
func sanitizeID(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 96 {
			break
		}
	}
	s := strings.Trim(b.String(), ".")
	if s == "" {
		s = "run"
	}
	return s
}

// Begin starts recording a task run: it creates the run directory (named
// runID, made safe and unique), writes task.txt and config.json (credential
// fields redacted, see secret.RedactJSON) and starts the writer. The returned Run's
// ID may differ from runID when that was unsafe or taken.
func (s *Store) Begin(runID, task string, config any) (*Run, error) {
	return s.begin(KindTask, runID, task, "", "", config)
}

// BeginFlow starts recording a flow run as Begin does a task run; the run's
// kind is KindFlow and title its task.txt.
func (s *Store) BeginFlow(runID, title string, config any) (*Run, error) {
	return s.begin(KindFlow, runID, title, "", "", config)
}

// BeginOwned starts a task run (kind KindTask) or flow run (KindFlow) as Begin
// and BeginFlow do, owned by the MCP session whose record id is session: its
// RunInfo.SessionID, by which a per-session server shows a session its own
// runs only.
func (s *Store) BeginOwned(kind, session, runID, task string, config any) (*Run, error) {
	if kind != KindTask && kind != KindFlow {
		return nil, fmt.Errorf("trace: BeginOwned begins task or flow runs, not %q", kind)
	}
	return s.begin(kind, runID, task, session, "", config)
}

func (s *Store) begin(kind, runID, task, sessionID, client string, conf any) (*Run, error) {
	cfg, cfgSecrets, err := secret.RedactJSON(conf)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("trace: cannot create the runs folder (set %s to a writable folder): %w", config.Var("RunsDir"), err)
	}
	base := sanitizeID(runID)
	id, dir := base, ""
	for i := 2; ; i++ {
		dir = filepath.Join(s.dir, id)
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			return nil, fmt.Errorf("trace: cannot create run directory %s: %w", dir, err)
		}
		id = fmt.Sprintf("%s-%d", base, i)
	}
	live := holdLive(dir) // before run.json says running: another process never sees it unheld
	scrub := s.opts.Scrubber
	scrub.Add(cfgSecrets...)
	r := newRun(s, kind, id, dir, scrub)
	r.meta = RunInfo{ID: id, Kind: kind, Task: scrub.String(task), SessionID: scrub.String(sessionID), Client: scrub.String(client), Started: time.Now().UTC(), Status: StatusRunning}
	if err := r.open(scrub.Bytes([]byte(task)), scrub.Bytes(cfg)); err != nil {
		if live != nil {
			live.Close()
		}
		os.RemoveAll(dir)
		return nil, err
	}
	s.mu.Lock()
	s.active[id] = r
	if live != nil {
		s.live[id] = live
	}
	s.mu.Unlock()
	go r.writer()
	s.prune()
	return r, nil
}

func (s *Store) release(id string) {
	s.mu.Lock()
	delete(s.active, id)
	live := s.live[id]
	delete(s.live, id)
	s.mu.Unlock()
	if live != nil {
		live.Close()
		os.Remove(live.Name())
	}
}

func (s *Store) isActive(id string) bool {
	return s.activeRun(id) != nil
}

func (s *Store) activeRun(id string) *Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active[id]
}

// Active returns the ids of runs being recorded now, newest first.
func (s *Store) Active() []string {
	s.mu.Lock()
	var rs []*Run
	for _, r := range s.active {
		rs = append(rs, r)
	}
	s.mu.Unlock()
	sort.Slice(rs, func(i, j int) bool { return rs[i].started.After(rs[j].started) })
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.id
	}
	return ids
}

// List returns the recorded runs, newest first, without their results.
func (s *Store) List() ([]RunInfo, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trace: cannot list runs in %s: %w", s.dir, err)
	}
	var out []RunInfo
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		info, err := s.info(e.Name())
		if err != nil {
			continue // not a run directory
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out, nil
}

// info reads a run's run.json.
func (s *Store) info(id string) (RunInfo, error) {
	dir := filepath.Join(s.dir, id)
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return RunInfo{}, fmt.Errorf("trace: %w: %s (no %s in %s)", ErrNotFound, id, MetaFile, dir)
	}
	var info RunInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return RunInfo{}, fmt.Errorf("trace: %s/%s is damaged: %w", dir, MetaFile, err)
	}
	info.ID, info.Dir, info.Report = id, dir, filepath.Join(dir, ReportFile)
	if info.Status != StatusRunning {
		return info, nil
	}
	var steps int
	var last time.Time
	switch r := s.activeRun(id); {
	case r != nil:
		steps, last = r.live()
	case recordedElsewhere(dir): // such as the server, seen from `guiagent runs`
		if steps, last = liveFromDisk(dir, info.Kind); last.IsZero() {
			last = info.Started
		}
	default:
		info.Status = StatusIncomplete
		return info, nil
	}
	info.Steps = max(info.Steps, steps)
	info.LastActivity = &last
	if info.Kind == KindSession {
		info.Status = StatusOpen
		if time.Since(last) > SessionIdleAfter {
			info.Status = StatusIdle
		}
	}
	return info, nil
}

// Get returns one run with its result (nil while running or after a crash).
func (s *Store) Get(id string) (RunInfo, error) {
	if !validID(id) {
		return RunInfo{}, fmt.Errorf("trace: %w: %q is not a run id (see Store.List)", ErrNotFound, id)
	}
	info, err := s.info(id)
	if err != nil {
		return RunInfo{}, err
	}
	if b, err := os.ReadFile(filepath.Join(info.Dir, ResultFile)); err == nil {
		var res agent.Result
		if err := json.Unmarshal(b, &res); err == nil {
			info.Result = &res
		}
	}
	return info, nil
}

// Path returns the directory of run id.
func (s *Store) Path(id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("trace: %w: %q is not a run id (see Store.List)", ErrNotFound, id)
	}
	info, err := s.info(id)
	if err != nil {
		return "", err
	}
	return info.Dir, nil
}

// ReportPath returns the path of run id's report.html (which exists once the
// run is closed; see EnsureReport for crashed runs).
func (s *Store) ReportPath(id string) (string, error) {
	dir, err := s.Path(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ReportFile), nil
}

// EnsureReport returns run id's report path after (re)generating the report
// when it is missing or older than the run's events, as for a run that is
// still going or whose process was killed.
func (s *Store) EnsureReport(id string) (string, error) {
	p, err := s.ReportPath(id)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(p)
	rep, rerr := os.Stat(p)
	ev, eerr := os.Stat(filepath.Join(dir, EventsFile))
	if rerr == nil && (eerr != nil || !ev.ModTime().After(rep.ModTime())) && !s.isActive(id) {
		return p, nil
	}
	if err := writeReport(dir, s.opts.Scrubber, s.isActive(id)); err != nil {
		return "", err
	}
	return p, nil
}

// prune removes the oldest finished runs beyond MaxRuns or MaxBytes. Runs
// being recorded are neither counted nor removed (each has its own caps, and
// a long-lived MCP session must not make retention delete newer records);
// they are counted once finished, when their own finalize prunes again. Only
// directories holding a run.json are ever removed.
func (s *Store) prune() {
	runs, err := s.List()
	if err != nil {
		s.log.Warn("trace: retention skipped", "err", err)
		return
	}
	// runs are newest first; walk from the oldest.
	type sized struct {
		RunInfo
		bytes int64
	}
	var done []sized
	var total int64
	for _, r := range runs {
		if s.isActive(r.ID) {
			continue
		}
		n := dirSize(r.Dir)
		done = append(done, sized{r, n})
		total += n
	}
	count := len(done)
	for i := len(done) - 1; i >= 0; i-- {
		overCount := s.opts.MaxRuns > 0 && count > s.opts.MaxRuns
		overBytes := s.opts.MaxBytes > 0 && total > s.opts.MaxBytes
		if !overCount && !overBytes {
			break
		}
		r := done[i]
		if s.isActive(r.ID) {
			continue
		}
		if err := os.RemoveAll(r.Dir); err != nil {
			s.log.Warn("trace: cannot remove old run", "dir", r.Dir, "err", err)
			continue
		}
		count--
		total -= r.bytes
	}
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Close closes every open session recorder. Task runs are closed by their owners.
func (s *Store) Close() error {
	s.mu.Lock()
	var recs []*SessionRecorder
	for _, r := range s.sessions {
		recs = append(recs, r)
	}
	s.mu.Unlock()
	var errs []error
	for _, r := range recs {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// writeFileAtomic writes b to path through a temporary file and a rename.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
