package flow

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/vision"
)

// TaskRunner runs an act step's goal through the agent loop (*agent.Runner).
type TaskRunner interface {
	Run(ctx context.Context, t agent.Task, progress func(agent.Event)) agent.Result
}

// Options configure a Runner. Zero values are documented per field.
type Options struct {
	// Input is the desktop's input layer; required unless Executor is given.
	Input *desktop.Input
	// Executor performs every input action (the one shared with the agent,
	// the MCP tools and the Go API); nil = one over Input with Keys and Confirm.
	Executor *operate.Executor
	// Screen captures screenshots; nil = Input.Screen().
	Screen desktop.Screen
	// Shots encodes screenshots; nil = a new imaging.Pipeline.
	Shots *imaging.Pipeline
	// Shot are the options of the screenshots Seer locates on (with the
	// locating model's profile, vision.Service.LocateProfile); KeepPixels is
	// always set.
	Shot imaging.Options
	// AskProfile, when set, is the profile of the screenshots of assert,
	// wait_for and query (vision.Service.AskProfile); nil = Shot.Profile.
	AskProfile *geom.Profile
	// Seer locates, queries and asserts; nil = steps that need the model fail
	// with an error saying how to configure one (cached steps still replay).
	Seer vision.Seer
	// OCR locates the steps that name their element by text
	// (`click: {text: Submit}`) with no model; nil: such steps fail saying
	// how to install it.
	OCR *ocr.Reader
	// Model names Seer's model in cache entries.
	Model string
	// Tasks runs act steps; nil = act steps fail.
	Tasks TaskRunner
	// Keys vets key combinations when Executor is nil (the executor's own
	// policy decides otherwise); nil = none is blocked.
	Keys agent.KeyPolicy
	// Confirm, when set, is asked before a combination is pressed that the
	// key policy says needs a yes (without Executor: every combination):
	// nil lets it go, an error refuses it (GUI_AGENT_CONFIRM_HOTKEYS).
	Confirm func(ctx context.Context, keys []desktop.Key) error
	// NewRecorder, when set, records each flow run the way task runs are
	// recorded (trace.Store.Begin).
	NewRecorder func(runID string, t agent.Task) (agent.Recorder, error)
	// Settle bounds the wait for a still screen before a step looks at it;
	// zero = 2 s. Negative disables it.
	Settle time.Duration
	// Logger receives diagnostics; nil = slog.Default().
	Logger *slog.Logger
}

// Runner runs flows. It is safe for sequential use; callers serialise runs
// on one desktop.
type Runner struct {
	o Options
}

// NewRunner checks o and returns a Runner; it has no side effects.
func NewRunner(o Options) (*Runner, error) {
	if o.Input == nil && o.Executor != nil {
		o.Input = o.Executor.Input()
	}
	if o.Input == nil {
		return nil, errors.New("flow: Options.Input is nil: pass desktop.NewInput(screen)")
	}
	if o.Screen == nil {
		o.Screen = o.Input.Screen()
	}
	if o.Shots == nil {
		o.Shots = imaging.NewPipeline()
	}
	o.Shot.KeepPixels = true
	if o.Settle == 0 {
		o.Settle = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Runner{o: o}, nil
}

// Flow statuses.
const (
	Passed = "passed"
	Failed = "failed"
)

// Cache uses of a step.
const (
	CacheHit   = "hit"   // the fingerprint was found at the cached place
	CacheMoved = "moved" // found elsewhere on the screen by template matching
	CacheMiss  = "miss"  // no entry, or not found: the model was asked
	CacheNone  = ""      // the step does not locate, or the cache is off
)

// StepResult is what one step did.
type StepResult struct {
	Step        int    `json:"step"`
	Kind        Kind   `json:"kind"`
	Description string `json:"description"`
	Status      string `json:"status"` // passed or failed
	Error       string `json:"error,omitempty"`
	// Cache is how the step's target was found: hit, moved, miss or "".
	Cache string `json:"cache,omitempty"`
	// ModelCalls counts the plain-vision model calls of this step.
	ModelCalls int `json:"model_calls"`
	// Box is the located element in image pixels of the step's screenshot.
	Box *vision.Box `json:"box,omitempty"`
	// Value is a query's answer (JSON), a locate's "x,y" or an assert's reason.
	Value string `json:"value,omitempty"`
	// Data is the step's answer as JSON: a query's data as the model gave
	// it, a locate's rectangle and centre (LocateData), an evaluate's value.
	Data    json.RawMessage `json:"data,omitempty"`
	Actions []action.Trace  `json:"actions,omitempty"`
	// TaskRunID is the agent run of an act step.
	TaskRunID string `json:"task_run_id,omitempty"`
	Millis    int64  `json:"ms"`
}

// Result is what a flow run returns.
type Result struct {
	Flow    string       `json:"flow"`
	Status  string       `json:"status"`
	Summary string       `json:"summary"`
	Steps   []StepResult `json:"steps"`
	// Vars holds the variables at the end (--var values and save_as results).
	Vars map[string]string `json:"vars,omitempty"`
	// ModelCalls counts plain-vision model calls (act steps' agent calls are
	// in their own runs).
	ModelCalls int       `json:"model_calls"`
	CacheHits  int       `json:"cache_hits"`
	Usage      llm.Usage `json:"usage"`
	WallMillis int64     `json:"wall_ms"`
	Cache      string    `json:"cache,omitempty"` // the cache file, when one is used
	RunID      string    `json:"run_id"`
	RunDir     string    `json:"run_dir,omitempty"`
	Report     string    `json:"report,omitempty"`
}

// run is one flow run's state.
type run struct {
	r       *Runner
	ctx     context.Context
	f       *Flow
	id      string
	vars    map[string]string
	cache   *Cache
	rec     agent.Recorder
	display geom.Display
	res     Result
	ex      *operate.Executor
	// held is the release ledger of this run: what its actions leave held
	// (a replayed mouse_down) is released when it ends, however it ends.
	held *operate.Scope
	// shift is how far the last element found moved went (image pixels).
	shift image.Point
	// lastBy is how the last locate found its element afresh when not the
	// model (operate.ByAccessibility), else "".
	lastBy string
}

// Run executes f with vars (the --var values) and cache (nil = no cache),
// step by step, stopping at the first failed step that does not say
// continue_on_error. The cache file is saved at the end per its strategy.
func (r *Runner) Run(ctx context.Context, f *Flow, vars map[string]string, cache *Cache) Result {
	start := time.Now()
	ru := &run{r: r, ctx: ctx, f: f, id: newRunID(start), vars: maps.Clone(vars), cache: cache}
	if ru.vars == nil {
		ru.vars = map[string]string{}
	}
	ru.res = Result{Flow: f.Name, Status: Passed, Steps: []StepResult{}, RunID: ru.id}
	if cache != nil && cache.Strategy() != CacheOff {
		ru.res.Cache = cache.Path()
	}
	ru.ex = r.executor()
	ru.held = ru.ex.NewScope()
	ru.begin()
	ru.steps()
	if err := ru.held.Release(); err != nil {
		r.o.Logger.Warn("releasing what the flow left held failed", "flow", f.Name, "err", err)
	}
	if err := cache.Save(f.Name); err != nil {
		ru.res.Status, ru.res.Summary = Failed, err.Error()
	}
	ru.res.Vars = ru.vars
	ru.res.WallMillis = time.Since(start).Milliseconds()
	ru.finish()
	return ru.res
}

func (ru *run) steps() {
	ds, err := ru.r.o.Screen.Displays(ru.ctx)
	if err == nil {
		ru.display, err = geom.FindDisplay(ds, ru.f.Display)
	}
	if err != nil {
		ru.res.Status, ru.res.Summary = Failed, fmt.Sprintf("display %q: %v", ru.f.Display, err)
		return
	}
	passed := 0
	skipping := false // the rest of a group whose step failed (extra.go Group)
	for _, st := range ru.f.Steps {
		if skipping && st.Kind != Group {
			continue
		}
		skipping = false
		if err := ru.ctx.Err(); err != nil {
			ru.res.Status, ru.res.Summary = Failed, fmt.Sprintf("cancelled before step %d: %v", st.Index, err)
			return
		}
		sr := ru.step(st)
		ru.res.Steps = append(ru.res.Steps, sr)
		ru.res.ModelCalls += sr.ModelCalls
		if sr.Cache == CacheHit || sr.Cache == CacheMoved {
			ru.res.CacheHits++
		}
		if sr.Status == Failed && !st.ContinueOnError {
			ru.res.Status = Failed
			ru.res.Summary = fmt.Sprintf("step %d (%s) failed: %s", st.Index, sr.Description, sr.Error)
			return
		}
		if sr.Status == Passed {
			passed++
		} else {
			skipping = ru.inGroup(st)
		}
	}
	ru.res.Summary = fmt.Sprintf("%d of %d steps passed; %d model calls, %d cached steps replayed", passed, len(ru.f.Steps), ru.res.ModelCalls, ru.res.CacheHits)
}

// step runs one step and records it.
func (ru *run) step(st Step) StepResult {
	t0 := time.Now()
	sr := StepResult{Step: st.Index, Kind: st.Kind, Status: Passed}
	x := st
	var err error
	for i, p := range x.texts() {
		if *p, err = Expand(*p, ru.vars); err != nil {
			break
		}
		if err = checkExpanded(x.Kind, i, *p); err != nil {
			break
		}
	}
	sr.Description = x.Describe()
	var shot *imaging.Shot
	if err == nil {
		if x.Extra != nil && x.Extra.NoCache {
			cache := ru.cache
			ru.cache = nil
			shot, err = ru.exec(x, &sr)
			ru.cache = cache
		} else {
			shot, err = ru.exec(x, &sr)
		}
	}
	if err != nil {
		sr.Status, sr.Error = Failed, err.Error()
	}
	sr.Millis = time.Since(t0).Milliseconds()
	ru.record(x, sr, shot)
	return sr
}

// exec dispatches a step by kind; it returns the screenshot the step looked at.
func (ru *run) exec(st Step, sr *StepResult) (*imaging.Shot, error) {
	if shot, err, ok := ru.extraStep(st, sr); ok {
		return shot, err
	}
	switch st.Kind {
	case Act:
		return nil, ru.act(st, sr)
	case Sleep:
		return nil, sleep(ru.ctx, st.Duration)
	case Key, Hotkey:
		return nil, ru.keys(st, sr)
	case Type:
		return ru.typeText(st, sr)
	case Assert, WaitFor, Query:
		return ru.ask(st, sr)
	}
	return ru.pointStep(st, sr)
}

// act replays the step's cached actions, each verified on the screen; when
// there are none, or one does not verify (the screen diverged), the agent
// loop runs the task from that point. What the agent did is cached.
func (ru *run) act(st Step, sr *StepResult) error {
	task := st.Text
	var done []CachedAction
	if e := ru.cache.lookup(st.Index, Act, "", st.Text); e != nil && len(e.Actions) > 0 {
		n, complete, err := ru.replayAct(e, sr)
		if err != nil {
			return err
		}
		if complete {
			sr.Cache = CacheHit
			return nil
		}
		sr.Cache = CacheMiss
		done = e.Actions[:n]
		if n > 0 {
			var what []string
			for _, a := range done {
				what = append(what, a.Text)
			}
			task += fmt.Sprintf("\n\n(Already done for this task: %s. Continue from the screen as it is now.)", strings.Join(what, "; "))
		}
	}
	if ru.r.o.Tasks == nil {
		return errors.New("act steps need a model: set " + config.Vars("Provider", "Model", "APIKey"))
	}
	w := &actWatcher{task: task, shots: map[int]*image.RGBA{}, content: map[int]geom.Size{}}
	if obs, ok := ru.r.o.Tasks.(Observable); ok {
		remove := obs.AddObserver(w)
		defer remove()
	}
	res := ru.r.o.Tasks.Run(ru.ctx, agent.Task{Task: task, Display: ru.f.Display}, nil)
	sr.TaskRunID, sr.Value = res.RunID, res.Summary
	for _, s := range res.Trace {
		sr.Actions = append(sr.Actions, s.Actions...)
	}
	ru.res.Usage.InputTokens += res.Usage.InputTokens
	ru.res.Usage.OutputTokens += res.Usage.OutputTokens
	if res.Status != agent.Completed {
		return fmt.Errorf("the task ended %s: %s", res.Status, res.Summary)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runID != "" && !w.unsafe {
		ru.cache.store(&CacheEntry{Step: st.Index, Kind: Act, Description: st.Text, Model: ru.r.o.Model,
			Actions: append(slices.Clone(done), w.actions...), Updated: CacheTime{time.Now().UTC().Truncate(time.Second)}})
	}
	return nil
}

// executor is Options.Executor, else one over Options.Input that vets keys
// with Options.Keys and has every combination confirmed by Options.Confirm.
func (r *Runner) executor() *operate.Executor {
	if r.o.Executor != nil {
		return r.o.Executor
	}
	return operate.New(r.o.Input, operate.Options{Keys: flowKeys{r.o.Keys, r.o.Confirm != nil}, Logger: r.o.Logger})
}

// flowKeys is Options.Keys as an executor's key policy.
type flowKeys struct {
	check   agent.KeyPolicy
	confirm bool
}

func (k flowKeys) Check(keys []desktop.Key) error {
	if k.check == nil {
		return nil
	}
	return k.check.Check(keys)
}

func (k flowKeys) NeedsConfirm([]desktop.Key) (string, bool) { return "", k.confirm }

// do performs op through the executor as a step of this run and adds what
// it did to sr.
func (ru *run) do(op operate.Op, sr *StepResult) (operate.Result, error) {
	op.Scope, op.Who = ru.held, "A flow step"
	if c := ru.r.o.Confirm; c != nil {
		op.Confirm = func(ctx context.Context, keys []desktop.Key, _ string) error { return c(ctx, keys) }
	}
	res, err := ru.ex.Do(ru.ctx, op)
	sr.Actions = append(sr.Actions, res.Traces()...)
	return res, err
}

func (ru *run) keys(st Step, sr *StepResult) error {
	_, err := ru.do(operate.Op{Action: action.Action{Kind: action.KeyPress, Keys: st.Keys}}, sr)
	return err
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// newRunID returns a sortable, unique run id like the agent's, marked as a flow.
func newRunID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102-150405") + "-flow-" + hex.EncodeToString(b[:])
}
