package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
)

// Recorder-only event kinds written to events.jsonl besides agent.EventKind values.
const (
	KindOverlay = "overlay" // Image = the overlay drawn for Step
	KindTool    = "tool"    // an atomic tool call of a session
)

// ImageRecord is how events.jsonl refers to a stored image.
type ImageRecord struct {
	// Ref is the path relative to the run directory ("images/step-003.jpg");
	// empty when images are not stored (DebugImages off).
	Ref    string     `json:"ref,omitempty"`
	MIME   string     `json:"mime"`
	Frame  geom.Frame `json:"frame"`
	Bytes  int        `json:"bytes"`
	SHA256 string     `json:"sha256,omitempty"`
	// Width and Height are the stored image's size in its own pixels.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Omitted says why an image was not stored (the run's image budget).
	Omitted string `json:"omitted,omitempty"`
	// SentAs is the reference the model request used, when it differs from Ref.
	SentAs string `json:"sent_as,omitempty"`
}

// Line is one line of events.jsonl: an agent.Event (with the image as a file
// reference and the model's request/response bodies in step files), an
// overlay, or a session's tool call.
type Line struct {
	Time     time.Time       `json:"time"`
	RunID    string          `json:"run_id"`
	Kind     string          `json:"kind"`
	Step     int             `json:"step,omitempty"`
	Message  string          `json:"message,omitempty"`
	Progress float64         `json:"progress,omitempty"`
	Total    float64         `json:"total,omitempty"`
	Image    *ImageRecord    `json:"image,omitempty"`
	Decision json.RawMessage `json:"decision,omitempty"`
	// Files are the step files written for a model event, relative to the run directory.
	Files     []string        `json:"files,omitempty"`
	Action    json.RawMessage `json:"action,omitempty"`
	StepTrace json.RawMessage `json:"step_trace,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	// Tool call fields (Kind == KindTool).
	Tool       string          `json:"tool,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	ToolResult string          `json:"tool_result,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	Actions    json.RawMessage `json:"actions,omitempty"`
	Millis     int64           `json:"ms,omitempty"`
}

// item is one queued event, snapshotted on the caller's goroutine.
type item struct {
	line Line
	img  *llm.Image // shallow copy; Data is shared (never modified after the event)
	// frame is the screenshot a tool call's actions refer to (KindTool only).
	frame *llm.Image
	req   []byte
	resp  []byte
}

// Run records one run. OnEvent may be called from one goroutine at a time;
// Flush, Close and Finish from any.
type Run struct {
	store   *Store
	kind    string
	id, dir string
	images  bool
	scrub   *secret.Scrubber
	log     *slog.Logger
	started time.Time

	mu         sync.Mutex
	queue      []item
	busy       bool
	closed     bool
	idle       *sync.Cond
	wake       chan struct{}
	done       chan struct{}
	finishSeen bool // a finish event was queued; guarded by mu
	closeOnce  sync.Once
	closeErr   error
	onIdle     func() // session report refresh
	onIdleWait time.Duration
	// liveSteps and lastActivity are kept as events are queued, so
	// a listing of a running run is current; guarded by mu.
	liveSteps    int
	lastActivity time.Time

	// Writer goroutine state.
	events     *os.File
	meta       RunInfo
	hashes     map[[32]byte]string
	usedNames  map[string]bool
	refs       map[string]string // reference the request used -> stored ref
	shots      []shot            // recent screenshots, newest last
	modelCalls map[int]int
	result     json.RawMessage
	err        error
	imageBytes int64 // stored image bytes
	imageCap   int64 // 0 = no cap
	capNoted   bool
}

var _ agent.Observer = (*Run)(nil)

func newRun(s *Store, kind, id, dir string, scrub *secret.Scrubber) *Run {
	r := &Run{store: s, kind: kind, id: id, dir: dir, images: s.opts.DebugImages, scrub: scrub, log: s.log, started: time.Now(),
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		hashes: map[[32]byte]string{}, usedNames: map[string]bool{}, refs: map[string]string{}, modelCalls: map[int]int{}}
	r.idle = sync.NewCond(&r.mu)
	if s.opts.MaxRunImageBytes > 0 {
		r.imageCap = s.opts.MaxRunImageBytes
	}
	return r
}

// ID returns the run id (the directory name).
func (r *Run) ID() string { return r.id }

// Dir returns the run directory.
func (r *Run) Dir() string { return r.dir }

// ReportPath returns where report.html is written by Close.
func (r *Run) ReportPath() string { return filepath.Join(r.dir, ReportFile) }

func (r *Run) open(task, cfg []byte) error {
	if err := os.WriteFile(filepath.Join(r.dir, TaskFile), task, 0o600); err != nil {
		return fmt.Errorf("trace: cannot write %s: %w", TaskFile, err)
	}
	if err := os.WriteFile(filepath.Join(r.dir, ConfigFile), cfg, 0o600); err != nil {
		return fmt.Errorf("trace: cannot write %s: %w", ConfigFile, err)
	}
	if err := r.writeMeta(); err != nil {
		return err
	}
	if r.images {
		if err := os.Mkdir(filepath.Join(r.dir, ImagesDir), 0o700); err != nil {
			return fmt.Errorf("trace: cannot create images folder: %w", err)
		}
	}
	f, err := os.OpenFile(filepath.Join(r.dir, EventsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("trace: cannot create %s: %w", EventsFile, err)
	}
	r.events = f
	return nil
}

func (r *Run) writeMeta() error {
	b, _ := json.MarshalIndent(r.meta, "", "  ")
	if err := writeFileAtomic(filepath.Join(r.dir, MetaFile), b); err != nil {
		return fmt.Errorf("trace: cannot write %s: %w", MetaFile, err)
	}
	return nil
}

// OnEvent records ev. It snapshots what ev points to (the Image's data is
// shared, never copied) and returns; files are written by a writer goroutine.
// Events after Close are dropped.
func (r *Run) OnEvent(ev agent.Event) {
	it := item{line: Line{Time: ev.Time, RunID: ev.RunID, Kind: string(ev.Kind), Step: ev.Step, Message: ev.Message, Progress: ev.Progress, Total: ev.Total}}
	if it.line.Time.IsZero() {
		it.line.Time = time.Now()
	}
	if ev.Image != nil {
		img := *ev.Image
		it.img = &img
	}
	if ev.Decision != nil {
		it.line.Decision = mustJSON(ev.Decision)
		it.req = bytes.Clone(ev.Decision.Request)
		it.resp = bytes.Clone(ev.Decision.Response)
	}
	if ev.Action != nil {
		it.line.Action = mustJSON(ev.Action)
	}
	if ev.StepDone != nil {
		it.line.StepTrace = mustJSON(ev.StepDone)
	}
	if ev.Result != nil {
		it.line.Result = mustJSON(ev.Result)
	}
	r.enqueue(it)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"marshal_error": err.Error()})
	}
	return b
}

// Finish records res as the finish event (unless one was recorded) and closes the run.
func (r *Run) Finish(res *agent.Result) error {
	r.mu.Lock()
	has := r.finishSeen
	r.mu.Unlock()
	if !has && res != nil {
		r.OnEvent(agent.Event{Time: time.Now(), RunID: r.id, Kind: agent.EvFinish, Result: res})
	}
	return r.Close()
}

// Close writes the queued events, result.json, run.json and report.html, and
// stops the writer. It is safe to call more than once.
func (r *Run) Close() error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		select {
		case r.wake <- struct{}{}:
		default:
		}
		<-r.done
		r.closeErr = r.err
	})
	return r.closeErr
}

// finalize writes result.json, run.json and the report; writer goroutine.
func (r *Run) finalize() {
	now := time.Now().UTC()
	r.meta.Finished = &now
	switch {
	case r.result != nil:
		var res agent.Result
		if json.Unmarshal(r.result, &res) == nil {
			r.meta.Status = string(res.Status)
			r.meta.Summary = r.scrub.String(res.Summary)
			if res.Steps > 0 {
				r.meta.Steps = res.Steps
			}
			// Point the result at this record.
			res.RunDir, res.Report = r.dir, r.ReportPath()
			if res.RunID == "" {
				res.RunID = r.id
			}
			b, _ := json.MarshalIndent(res, "", "  ")
			r.fail("write "+ResultFile, os.WriteFile(filepath.Join(r.dir, ResultFile), r.scrub.Bytes(b), 0o600))
		}
	case r.kind == KindSession:
		r.meta.Status = StatusRecorded
	default:
		r.meta.Status = StatusIncomplete
	}
	if r.events != nil {
		r.fail("close "+EventsFile, r.events.Close())
		r.events = nil
	}
	r.fail("write "+MetaFile, r.writeMeta())
	r.fail("write "+ReportFile, writeReport(r.dir, r.scrub, false))
	r.store.release(r.id) // after the last write: retention may remove the run from now on
	r.shots = nil
	r.store.prune()
}
