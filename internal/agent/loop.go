// The lifecycle of one run: start, the step loop's endings (stop, cancel,
// deadline), events, and the result.

package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/safety"
)

// run is one task execution.
type run struct {
	r        *Runner
	o        Options
	id       string
	task     Task
	started  time.Time
	progress func(Event)
	done     chan struct{}

	ctx      context.Context
	cancelFn context.CancelCauseFunc
	maxSteps int
	timeout  time.Duration
	deadline time.Time
	// deadlineTimer ends the run at deadline; it stands still while the run
	// waits for a person (holdDeadline, releaseDeadline).
	deadlineTimer *time.Timer
	heldSince     time.Time
	freeSteps     int // steps that only asked the user: they do not count toward maxSteps

	infoMu sync.Mutex
	step   int
	phase  string

	emitMu       sync.Mutex
	lastProgress float64
	recorder     Recorder

	session  llm.Session
	mem      *memory
	stuck    stuckDetector
	loop     loopDetector
	watcher  *safety.OverrideWatcher
	display  geom.Display
	usage    llm.Usage
	trace    []StepTrace
	warnings []string
	shotSeq  int

	recent   []llm.Image // screenshots of earlier steps, oldest first (at most K-1)
	zooms    []llm.Image // regions zoomed by the last decision
	prevShot *imaging.Shot
	prevActs bool         // whether the previous step acted on the screen
	nextWarn []string     // warnings for the next observation
	feedback string       // what happened to the previous decision's actions
	answers  []llm.Answer // the person's answers for the next observation
	asking   asking       // what a question asked at this step is about
	// elements is the current step's element snapshot, which the model's
	// refs name (nil with GUI_AGENT_ELEMENTS off); noElements is set once
	// the missing element source has been logged.
	elements   *stepElements
	noElements bool
}

// ending is how a run ends.
type ending struct {
	status      Status
	summary     string
	result      string
	blockReason string
	next        string
	checks      []string
}

func newRun(parent context.Context, r *Runner, id string, t Task, progress func(Event)) *run {
	o := r.o
	ctx, cancel := context.WithCancelCause(parent)
	maxSteps := o.MaxSteps
	if t.MaxSteps > 0 {
		maxSteps = t.MaxSteps
	}
	return &run{
		r: r, o: o, id: id, task: t, started: time.Now(), progress: progress,
		done: make(chan struct{}), maxSteps: maxSteps, phase: "queued",
		ctx: ctx, cancelFn: cancel,
		mem:   newMemory(o.MemoryModel, o.RecentBudgetChars, o.SummaryBudgetChars),
		stuck: stuckDetector{steps: o.Stuck.Steps, threshold: o.Stuck.Threshold},
	}
}

func (ru *run) info() RunInfo {
	ru.infoMu.Lock()
	defer ru.infoMu.Unlock()
	return RunInfo{RunID: ru.id, Task: ru.task.Task, Step: ru.step, MaxSteps: ru.maxSteps, Phase: ru.phase, Started: ru.started}
}

func (ru *run) setPhase(step int, phase string) {
	ru.infoMu.Lock()
	defer ru.infoMu.Unlock()
	ru.step, ru.phase = step, phase
}

// cancel stops the run with cause; safe at any time, even before it started.
func (ru *run) cancel(cause error) { ru.cancelFn(cause) }

// execute runs the loop and always returns a complete Result.
func (ru *run) execute() (res Result) {
	timeout := ru.o.Timeout
	if ru.task.Timeout > 0 {
		timeout = ru.task.Timeout
	}
	ru.infoMu.Lock()
	ru.started = time.Now()
	ru.infoMu.Unlock()
	ru.timeout, ru.deadline = timeout, ru.started.Add(timeout)
	ctx, cancelDeadline := context.WithCancelCause(ru.ctx)
	ru.deadlineTimer = time.AfterFunc(timeout, func() { cancelDeadline(errRunDeadline) })
	defer ru.deadlineTimer.Stop()
	defer cancelDeadline(nil)
	defer ru.cancelFn(nil)
	ru.ctx = ctx
	ru.setPhase(0, "starting")

	if ru.o.NewRecorder != nil {
		rec, err := ru.o.NewRecorder(ru.id, ru.task)
		if err != nil {
			ru.o.Logger.Warn("run recorder unavailable; the run is not recorded", "run", ru.id, "err", err)
			ru.warnings = append(ru.warnings, "run record not written: "+err.Error())
		} else {
			ru.recorder = rec
		}
	}
	ru.o.Logger.Info("task started", "run", ru.id, "max_steps", ru.maxSteps, "timeout", timeout)
	ru.emit(Event{Kind: EvStart, Message: ru.task.Task, Total: float64(ru.maxSteps)})

	end := ru.loopSafely()

	// Every exit path releases what input holds.
	if err := ru.o.Executor.ReleaseAll(); err != nil {
		ru.warnings = append(ru.warnings, "releasing held keys/buttons failed: "+err.Error())
	}
	if ru.watcher != nil {
		ru.watcher.Disarm()
	}
	res = ru.result(end)
	if ru.recorder != nil {
		res.RunDir, res.Report = ru.recorder.Dir(), ru.recorder.ReportPath()
	}
	ru.progressEvent(float64(ru.maxSteps), "Finished: "+string(res.Status))
	ru.emit(Event{Kind: EvFinish, Result: &res, Message: res.Summary})
	if ru.recorder != nil {
		if err := ru.recorder.Close(); err != nil {
			ru.o.Logger.Warn("closing the run record failed", "run", ru.id, "err", err)
		}
	}
	ru.o.Logger.Info("task finished", "run", ru.id, "status", res.Status, "steps", res.Steps,
		"model_calls", res.Usage.Calls, "input_tokens", res.Usage.InputTokens, "ms", res.Usage.WallMillis)
	return res
}

// loopSafely runs the loop, turning a panic into a failed ending (the deferred
// ReleaseAll in execute still runs).
func (ru *run) loopSafely() (end ending) {
	defer func() {
		if p := recover(); p != nil {
			ru.o.Logger.Error("agent loop panicked", "run", ru.id, "panic", p)
			end = ending{status: Failed, summary: fmt.Sprintf("internal error in the agent loop: %v", p)}
		}
	}()
	return ru.loopSteps()
}

func (ru *run) result(end ending) Result {
	u := ru.usage.Add(ru.mem.usage)
	warnings := append(append([]string(nil), ru.warnings...), ru.mem.warnings...)
	trace := ru.trace
	if trace == nil {
		trace = []StepTrace{}
	}
	return Result{
		Status: end.status, Summary: oneLine(end.summary), Result: end.result,
		BlockReason: end.blockReason, NextUserAction: end.next, SafetyChecks: end.checks,
		Steps: len(ru.trace), Memory: append([]string(nil), ru.mem.facts...), Warnings: dedupe(warnings),
		Trace: trace, Usage: RunUsage{Usage: u, WallMillis: time.Since(ru.started).Milliseconds()},
		RunID: ru.id,
	}
}

// emit stamps ev and delivers it to every observer and, for progress events,
// to the caller's progress function. Safe for concurrent use.
func (ru *run) emit(ev Event) {
	ev.Time = time.Now()
	ev.RunID = ru.id
	ru.emitMu.Lock()
	defer ru.emitMu.Unlock()
	if ru.recorder != nil {
		ru.recorder.OnEvent(ev)
	}
	for _, o := range ru.r.observerList() {
		o.OnEvent(ev)
	}
	if ev.Kind == EvProgress && ru.progress != nil {
		ru.progress(ev)
	}
}

// progressEvent emits a progress message; progress never goes backwards.
func (ru *run) progressEvent(progress float64, msg string) {
	ru.emitMu.Lock()
	progress = max(progress, ru.lastProgress)
	ru.lastProgress = progress
	ru.emitMu.Unlock()
	ru.emit(Event{Kind: EvProgress, Step: ru.info().Step, Message: msg, Progress: progress, Total: float64(ru.maxSteps)})
}

func (ru *run) warn(step int, msg string) {
	ru.warnings = append(ru.warnings, msg)
	ru.emit(Event{Kind: EvWarning, Step: step, Message: msg})
}

// stopEnding reports why the run must stop now (cancelled, superseded,
// deadline, kill switch, human takeover), or nil.
func (ru *run) stopEnding() *ending {
	if e := ru.ctxEnding(); e != nil {
		return e
	}
	if ru.o.KillSwitch != nil && ru.o.KillSwitch.Engaged() {
		return &ending{status: Blocked, blockReason: ReasonKillSwitch,
			summary: "stopped by the kill switch: all input is halted",
			next:    "remove the kill-switch file (" + config.Var("KillSwitchFile") + ") when input may resume, then run the task again"}
	}
	if ru.watcher != nil {
		if err := ru.watcher.Check(ru.ctx); err != nil {
			return &ending{status: Blocked, blockReason: ReasonHumanOverride,
				summary: "a human took over the pointer; the run stopped (" + err.Error() + ")",
				next:    "ask the user why they intervened and whether to continue from the current screen before running the task again"}
		}
	}
	return nil
}

// ctxEnding maps the run context's cancellation cause to an ending, or nil.
func (ru *run) ctxEnding() *ending {
	if ru.ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ru.ctx)
	var stop *stopError
	switch {
	case errors.Is(cause, errSuperseded):
		return &ending{status: Superseded, summary: "superseded: a newer task took over the desktop"}
	case errors.As(cause, &stop):
		return &ending{status: Cancelled, summary: "cancelled: " + stop.reason}
	case errors.Is(cause, errRunDeadline):
		return &ending{status: Timeout, summary: fmt.Sprintf("timed out: the task's deadline (%s) passed after %d steps; raise timeout_s or split the task",
			ru.timeout.Round(time.Second), len(ru.trace))}
	case errors.Is(cause, context.DeadlineExceeded):
		// The caller's context had a shorter deadline than the task's own.
		return &ending{status: Timeout, summary: fmt.Sprintf("timed out: the caller's request deadline passed after %d steps, before the task's own limit (%s); give the request more time or split the task",
			len(ru.trace), ru.timeout.Round(time.Second))}
	}
	return &ending{status: Cancelled, summary: "cancelled: the request was cancelled by the client"}
}

// holdDeadline stops the deadline's clock while the run waits for a person.
func (ru *run) holdDeadline() {
	if ru.deadlineTimer != nil && ru.deadlineTimer.Stop() {
		ru.heldSince = time.Now()
	}
}

// releaseDeadline starts the clock again after a wait: the deadline moves on
// by the wait beyond askCountsAtMost, and a deadline passed meanwhile ends the run now.
func (ru *run) releaseDeadline() {
	if ru.heldSince.IsZero() {
		return
	}
	waited := time.Since(ru.heldSince)
	ru.heldSince = time.Time{}
	ru.deadline = ru.deadline.Add(waited - min(waited, askCountsAtMost))
	ru.deadlineTimer.Reset(max(time.Until(ru.deadline), 0))
}

func (ru *run) tokensUsed() int {
	u := ru.usage.Add(ru.mem.usage)
	return u.InputTokens + u.OutputTokens
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return shorten(s, 400)
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
