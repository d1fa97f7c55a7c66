package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // decode PNG screenshots for overlays
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
)

// Overlay encoding: JPEG at OverlayJPEGQuality with the long edge at most
// OverlayMaxLongEdge pixels; once a run has used 60% of its image budget,
// OverlaySmallQuality and OverlaySmallLongEdge.
const (
	OverlayJPEGQuality   = 70
	OverlayMaxLongEdge   = 1280
	OverlaySmallQuality  = 50
	OverlaySmallLongEdge = 960
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

type shot struct {
	step int
	rec  ImageRecord
	img  *llm.Image
}

// keepShots is how many recent screenshots the writer keeps for overlays.
const keepShots = 4

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

func (r *Run) enqueue(it item) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.queue = append(r.queue, it)
	if it.line.Kind == string(agent.EvFinish) {
		r.finishSeen = true
	}
	if it.line.Step > r.liveSteps && (r.kind == KindTask || it.line.Kind == KindTool) {
		r.liveSteps = it.line.Step
	}
	r.lastActivity = time.Now()
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// live returns the step under way (task runs) or the tool calls so far
// (session runs), and when the run last got an event.
func (r *Run) live() (steps int, last time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastActivity.IsZero() {
		return r.liveSteps, r.started
	}
	return r.liveSteps, r.lastActivity
}

// Flush waits until every event queued so far is written.
func (r *Run) Flush() {
	r.mu.Lock()
	for (len(r.queue) > 0 || r.busy) && !r.finished() {
		r.idle.Wait()
	}
	r.mu.Unlock()
}

func (r *Run) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
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

// writer drains the queue until Close, then finalizes the run.
func (r *Run) writer() {
	var timer *time.Timer
	var timerC <-chan time.Time
	dirty := false
	for {
		select {
		case <-r.wake:
		case <-timerC:
			timerC = nil
			if dirty && r.onIdle != nil {
				r.onIdle()
				dirty = false
			}
			continue
		}
		for {
			r.mu.Lock()
			batch := r.queue
			r.queue = nil
			closed := r.closed
			r.busy = len(batch) > 0
			if len(batch) == 0 {
				r.idle.Broadcast()
			}
			r.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					r.finalize()
					r.mu.Lock()
					r.busy = false
					close(r.done)
					r.idle.Broadcast()
					r.mu.Unlock()
					return
				}
				break
			}
			for _, it := range batch {
				r.write(it)
			}
			dirty = true
		}
		if r.onIdle != nil && dirty {
			if timer == nil {
				timer = time.NewTimer(r.onIdleWait)
			} else {
				timer.Reset(r.onIdleWait)
			}
			timerC = timer.C
		}
	}
}

func (r *Run) fail(what string, err error) {
	if err == nil {
		return
	}
	err = fmt.Errorf("trace: run %s: %s: %w", r.id, what, err)
	if r.err == nil {
		r.err = err
		r.log.Error("trace: recording failed; the run record will be incomplete (check free disk space and permissions of the runs folder)", "run", r.id, "err", err)
	}
}

// write processes one event on the writer goroutine.
func (r *Run) write(it item) {
	ln := it.line
	switch ln.Kind {
	case string(agent.EvScreenshot):
		if it.img != nil {
			rec := r.storeImage(it.img, ln.Step)
			ln.Image = &rec
		}
		if ln.Step > r.meta.Steps && r.kind == KindTask {
			r.meta.Steps = ln.Step
		}
	case string(agent.EvModel):
		ln.Files = r.writeModelFiles(ln.Step, ln.Decision, it.req, it.resp)
		ln.Decision = clipRecord(ln.Decision, MaxRecordLineBytes)
	case string(agent.EvStep):
		r.appendLine(ln)
		r.stepDone(ln)
		return
	case string(agent.EvFinish):
		r.result = ln.Result
	case KindTool:
		if it.img != nil {
			rec := r.storeImage(it.img, ln.Step)
			ln.Image = &rec
		}
		r.meta.Steps = ln.Step
		r.appendLine(ln)
		r.drawToolOverlay(ln, it)
		return
	default:
		if it.img != nil {
			rec := r.storeImage(it.img, ln.Step)
			ln.Image = &rec
		}
	}
	r.appendLine(ln)
}

func (r *Run) appendLine(ln Line) {
	if r.events == nil {
		return
	}
	b, err := json.Marshal(ln)
	if err != nil {
		r.fail("encode event", err)
		return
	}
	b = append(r.scrub.Bytes(b), '\n')
	_, err = r.events.Write(b) // one write per line: a killed process leaves whole lines
	r.fail("append to "+EventsFile, err)
}

func extFor(mime string) string {
	switch mime {
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/webp":
		return ".webp"
	}
	return ".img"
}

// storeImage writes img once per content and returns its record.
func (r *Run) storeImage(img *llm.Image, step int) ImageRecord {
	sum := sha256.Sum256(img.Data)
	rec := ImageRecord{MIME: img.MIME, Frame: img.Frame, Bytes: len(img.Data), SHA256: hex.EncodeToString(sum[:])}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(img.Data)); err == nil {
		rec.Width, rec.Height = cfg.Width, cfg.Height
	}
	if r.images {
		if ref, ok := r.hashes[sum]; ok {
			rec.Ref = ref
		} else if !r.fits(len(img.Data)) {
			rec.Omitted = r.budgetNote()
		} else {
			rec.Ref = r.imageName(img, step)
			err := os.WriteFile(filepath.Join(r.dir, filepath.FromSlash(rec.Ref)), img.Data, 0o600)
			if err != nil {
				r.fail("write image", err)
				rec.Ref = ""
			} else {
				r.hashes[sum] = rec.Ref
				r.imageBytes += int64(len(img.Data))
			}
		}
		if img.Ref != "" && img.Ref != rec.Ref {
			rec.SentAs = img.Ref
			if rec.Ref != "" {
				r.refs[img.Ref] = rec.Ref
			}
		}
	}
	r.shots = append(r.shots, shot{step: step, rec: rec, img: img})
	if len(r.shots) > keepShots {
		r.shots = r.shots[len(r.shots)-keepShots:]
	}
	return rec
}

// fits reports whether n more image bytes stay within the run's image budget.
func (r *Run) fits(n int) bool {
	return r.imageCap == 0 || r.imageBytes+int64(n) <= r.imageCap
}

// budgetNote explains an omitted image, and records a warning line the first time.
func (r *Run) budgetNote() string {
	msg := fmt.Sprintf("not stored: the run's image budget of %d MB is used up (raise it with trace.Options.MaxRunImageBytes)", r.imageCap>>20)
	if !r.capNoted {
		r.capNoted = true
		r.appendLine(Line{Time: time.Now(), RunID: r.id, Kind: string(agent.EvWarning), Message: "recorder: later images " + msg})
	}
	return msg
}

// imageName picks a new file name: the image's own Ref when it is a plain
// name under images/, else step-NNN, made unique.
func (r *Run) imageName(img *llm.Image, step int) string {
	ext := extFor(img.MIME)
	base := fmt.Sprintf("step-%03d", step)
	if r.kind == KindSession {
		base = fmt.Sprintf("call-%03d", step)
	}
	if dir, file := path.Split(img.Ref); dir == ImagesDir+"/" && file != "" && sanitizeID(file) == file {
		base, ext = strings.TrimSuffix(file, path.Ext(file)), path.Ext(file)
		if ext == "" {
			ext = extFor(img.MIME)
		}
	}
	name := ImagesDir + "/" + base + ext
	for i := 2; r.usedNames[name] || strings.HasPrefix(base, "overlay-"); i++ {
		name = fmt.Sprintf("%s/%s-%d%s", ImagesDir, base, i, ext)
		base = strings.TrimPrefix(base, "overlay-")
	}
	r.usedNames[name] = true
	return name
}

// writeModelFiles writes steps/NNN/{request,response,parsed,usage}.json.
func (r *Run) writeModelFiles(step int, decision json.RawMessage, req, resp []byte) []string {
	r.modelCalls[step]++
	n := r.modelCalls[step]
	suffix := ""
	if n > 1 {
		suffix = fmt.Sprintf("-%d", n)
	}
	rel := path.Join(StepsDir, fmt.Sprintf("%03d", step))
	dir := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.fail("create step folder", err)
		return nil
	}
	var files []string
	put := func(name string, b []byte) {
		if b == nil {
			return
		}
		name = name + suffix + ".json"
		b = r.scrub.Bytes(clipRecord(prettyJSON(b), MaxRecordFileBytes))
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			r.fail("write "+name, err)
			return
		}
		files = append(files, path.Join(rel, name))
	}
	put("request", r.rewriteRefs(req))
	put("response", resp)
	put("parsed", decision)
	var d llm.Decision
	if json.Unmarshal(decision, &d) == nil {
		put("usage", mustJSON(map[string]any{"usage": d.Usage}))
	}
	return files
}

// rewriteRefs points image references of a request body at the stored files.
func (r *Run) rewriteRefs(body []byte) []byte {
	if len(body) == 0 || len(r.refs) == 0 {
		return body
	}
	olds := make([]string, 0, len(r.refs))
	for o := range r.refs {
		olds = append(olds, o)
	}
	sort.Slice(olds, func(i, j int) bool { return len(olds[i]) > len(olds[j]) })
	pairs := make([]string, 0, 2*len(olds))
	for _, o := range olds {
		pairs = append(pairs, `"`+o+`"`, `"`+r.refs[o]+`"`)
	}
	return []byte(strings.NewReplacer(pairs...).Replace(string(body)))
}

func prettyJSON(b []byte) []byte {
	if !json.Valid(b) {
		return b
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return b
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// stepDone writes the step's usage and timings and its overlay.
func (r *Run) stepDone(ln Line) {
	var st agent.StepTrace
	if json.Unmarshal(ln.StepTrace, &st) != nil {
		return
	}
	if st.Step == 0 {
		st.Step = ln.Step
	}
	if st.Step > r.meta.Steps {
		r.meta.Steps = st.Step
	}
	rel := path.Join(StepsDir, fmt.Sprintf("%03d", st.Step))
	dir := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(dir, 0o700); err == nil {
		acts := make([]map[string]any, len(st.Actions))
		for i, a := range st.Actions {
			acts[i] = map[string]any{"kind": a.Action.Kind, "outcome": a.Outcome, "ms": a.Millis}
		}
		u := mustJSON(map[string]any{"usage": st.Usage, "model_ms": st.ModelMillis, "step_ms": st.StepMillis, "actions": acts})
		r.fail("write usage.json", os.WriteFile(filepath.Join(dir, "usage.json"), prettyJSON(u), 0o600))
	}
	r.drawOverlayFor(st)
}

// drawToolOverlay draws a session tool call's actions on the screenshot their
// image points refer to: it.frame (stored first unless a recent call already
// stored that frame; identical images share one file), else the call's own image.
func (r *Run) drawToolOverlay(ln Line, it item) {
	if !r.images || len(ln.Actions) == 0 || it.frame == nil && it.img == nil {
		return
	}
	var acts []action.Trace
	if json.Unmarshal(ln.Actions, &acts) != nil || !anyDrawn(acts) {
		return
	}
	if it.frame == nil {
		r.drawOverlay(ln.Step, acts)
		return
	}
	id := it.frame.Frame.ID
	if !r.hasShot(id) {
		r.storeImage(it.frame, ln.Step)
	}
	r.drawOverlay(ln.Step, acts, id)
}

// hasShot reports whether a recent screenshot has frame id.
func (r *Run) hasShot(id string) bool {
	for _, s := range r.shots {
		if id != "" && s.img.Frame.ID == id {
			return true
		}
	}
	return false
}

// drawOverlayFor draws a task step's actions on the screenshot it was decided on.
func (r *Run) drawOverlayFor(st agent.StepTrace) {
	r.drawOverlay(st.Step, st.Actions, st.FrameID)
}

// drawOverlay draws acts on the screenshot of frameID (else the last one of
// step or before) and records it; nothing when no action would show (none,
// or only questions to a person).
func (r *Run) drawOverlay(step int, acts []action.Trace, frameID ...string) {
	if !r.images || !anyDrawn(acts) {
		return
	}
	var src *shot
	for i := len(r.shots) - 1; i >= 0; i-- {
		s := &r.shots[i]
		if len(frameID) > 0 && frameID[0] != "" && s.img.Frame.ID == frameID[0] {
			src = s
			break
		}
		if src == nil && s.step <= step {
			src = s
		}
	}
	if src == nil || src.img == nil || len(src.img.Data) == 0 {
		return
	}
	im, _, err := image.Decode(bytes.NewReader(src.img.Data))
	if err != nil {
		r.fail(fmt.Sprintf("decode screenshot %s for the overlay", src.rec.Ref), err)
		return
	}
	edge, quality := OverlayMaxLongEdge, OverlayJPEGQuality
	if r.imageCap > 0 && r.imageBytes > r.imageCap*6/10 {
		edge, quality = OverlaySmallLongEdge, OverlaySmallQuality
	}
	im, acts = shrinkForOverlay(im, acts, edge)
	ov := DrawOverlay(im, acts)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, ov, &jpeg.Options{Quality: quality}); err != nil {
		r.fail("encode overlay", err)
		return
	}
	if !r.fits(buf.Len()) {
		r.budgetNote()
		return
	}
	r.imageBytes += int64(buf.Len())
	ref := fmt.Sprintf("%s/overlay-%03d.jpg", ImagesDir, step)
	if err := os.WriteFile(filepath.Join(r.dir, filepath.FromSlash(ref)), buf.Bytes(), 0o600); err != nil {
		r.fail("write overlay", err)
		return
	}
	r.usedNames[ref] = true
	r.appendLine(Line{Time: time.Now(), RunID: r.id, Kind: KindOverlay, Step: step,
		Image: &ImageRecord{Ref: ref, MIME: "image/jpeg", Frame: src.img.Frame, Bytes: buf.Len(), SentAs: src.rec.Ref,
			Width: ov.Bounds().Dx(), Height: ov.Bounds().Dy()}})
}

// shrinkForOverlay scales im down so its long edge is at most edge pixels,
// and the actions' image points with it.
func shrinkForOverlay(im image.Image, acts []action.Trace, edge int) (image.Image, []action.Trace) {
	b := im.Bounds()
	long := max(b.Dx(), b.Dy())
	if long <= edge {
		return im, acts
	}
	f := float64(edge) / float64(long)
	dst := image.NewRGBA(image.Rect(0, 0, max(1, int(float64(b.Dx())*f+0.5)), max(1, int(float64(b.Dy())*f+0.5))))
	xdraw.ApproxBiLinear.Scale(dst, dst.Bounds(), im, b, xdraw.Src, nil)
	scale := func(p *geom.ImagePoint) *geom.ImagePoint {
		if p == nil {
			return nil
		}
		// Pixel centres map to pixel centres.
		return &geom.ImagePoint{X: (p.X+0.5)*f - 0.5, Y: (p.Y+0.5)*f - 0.5}
	}
	out := make([]action.Trace, len(acts))
	for i, a := range acts {
		a.Image, a.ImageTo = scale(a.Image), scale(a.ImageTo)
		out[i] = a
	}
	return dst, out
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
