package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/action"
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

// loopSteps is the agent loop: capture, settle, ask, validate, execute, record.
func (ru *run) loopSteps() ending {
	if e := ru.ctxEnding(); e != nil {
		return *e
	}
	ds, err := ru.o.Screen.Displays(ru.ctx)
	if err != nil {
		return ending{status: Failed, summary: "cannot list the displays: " + err.Error()}
	}
	if ru.display, err = geom.FindDisplay(ds, ru.task.Display); err != nil {
		return ending{status: Failed, summary: err.Error()}
	}
	if !ru.o.DisableHumanOverride {
		w := safety.NewOverrideWatcher(ru.o.Input, ru.o.OverrideTolerancePx)
		if err := w.Arm(ru.ctx); err == nil {
			ru.watcher = w
		} else {
			ru.warnings = append(ru.warnings, "human-override detection is off for this run: "+err.Error())
		}
	}
	ru.session = ru.o.Adapter.NewSession(ru.task.Task)

	for step := 1; ; step++ {
		if step-ru.freeSteps > ru.maxSteps {
			return ending{status: Failed, summary: fmt.Sprintf(
				"reached the step limit (%d) before the task was done; raise max_steps or split the task", ru.maxSteps)}
		}
		if e := ru.stopEnding(); e != nil {
			return *e
		}
		if end, stop := ru.doStep(step); stop {
			return end
		}
	}
}

// doStep runs one step; stop is true when the run ends with end.
func (ru *run) doStep(step int) (end ending, stop bool) {
	stepStart := time.Now()
	obs, shot, end, stop := ru.observe(step)
	if stop {
		return end, true
	}
	st := StepTrace{Step: step, FrameID: shot.Frame.ID, Warnings: obs.Warnings}
	// stopAfter records the step as ended by end and ends the run.
	stopAfter := func(end ending) (ending, bool) {
		st.Outcome = end.summary
		st.StepMillis = time.Since(stepStart).Milliseconds()
		ru.recordStep(st)
		return end, true
	}
	dec, modelMS, end, stop := ru.decide(step, obs)
	st.ModelMillis = modelMS
	if stop {
		if dec != nil {
			st.Usage = dec.Usage
		}
		return stopAfter(end)
	}
	st.Observation, st.Reasoning, st.ExpectedOutcome = dec.Observation, dec.Reasoning, dec.ExpectedOutcome
	st.ModelStatus, st.Usage = dec.Status, dec.Usage
	ru.mem.addFacts(dec.MemoryUpdate)
	ru.keepScreenshot(obs.Screenshot, shot)

	if end, stop := ru.terminal(dec, step); stop && len(dec.Actions) == 0 || stop && dec.Status != llm.Done {
		defer ru.mem.finishStep(ru.ctx, stepLine(step, dec, nil, end.summary))
		return stopAfter(end)
	}
	if ru.o.TokenBudget > 0 && ru.tokensUsed() > ru.o.TokenBudget && dec.Status != llm.Done {
		return stopAfter(ending{status: Failed, summary: fmt.Sprintf(
			"token budget exhausted: %d tokens used of %d; the last decision was not executed", ru.tokensUsed(), ru.o.TokenBudget)})
	}

	// Resolve the whole batch against this screenshot, then execute it in order.
	ru.setPhase(step, "acting")
	ru.asking = asking{screen: dec.Observation, image: obs.Screenshot, checks: dec.SafetyChecks}
	if onlyAsks(dec.Actions) && ru.freeSteps < ru.maxSteps {
		ru.freeSteps++
	}
	plan := ru.resolve(dec, shot, obs.Screenshot)
	if v, msg := ru.loop.observe(planTraces(plan)); v == verdictFail {
		return stopAfter(ending{status: Failed, summary: msg + "; the run was ended"})
	} else if v == verdictWarn {
		ru.warn(step, msg)
		ru.nextWarn = append(ru.nextWarn, msg)
	}
	acts, halt, outcome := ru.executePlan(step, plan)
	st.Actions, st.Outcome = acts, outcome
	// Every early end of executePlan halts or leaves a trace that is not ok,
	// so all traces ok means the whole batch ran.
	allOK := ru.afterActions(step, &st, acts, outcome)
	if halt == nil && ru.o.StepDelay > 0 {
		sleepCtx(ru.ctx, ru.o.StepDelay)
	}
	st.StepMillis = time.Since(stepStart).Milliseconds()
	ru.recordStep(st)
	ru.mem.finishStep(ru.ctx, stepLine(step, dec, acts, outcome))
	if halt != nil {
		return *halt, true
	}
	// A "done" whose own actions did not all run is not done: the model sees
	// the feedback and decides again.
	if end, stop := ru.terminal(dec, step); stop && allOK {
		return end, true
	}
	return ending{}, false
}

// observe captures the settled screen, checks whether the previous step's
// actions changed it, and builds the step's observation. stop is set when the
// run must end (end says why).
func (ru *run) observe(step int) (obs llm.Observation, shot *imaging.Shot, end ending, stop bool) {
	ru.setPhase(step, "capturing")
	if step == 1 {
		ru.progressEvent(float64(step-1), "Capturing the screen")
	} else {
		ru.progressEvent(float64(step-1), fmt.Sprintf("Capturing the updated screen after step %d", step-1))
	}
	shot, settleWarn, err := ru.captureSettled(step)
	if err != nil {
		if e := ru.stopEnding(); e != nil {
			return obs, nil, *e, true
		}
		return obs, nil, ending{status: Failed, summary: "cannot capture the screen: " + err.Error()}, true
	}
	warnings := ru.nextWarn
	ru.nextWarn = nil
	if settleWarn != "" {
		warnings = append(warnings, settleWarn)
		ru.warnings = append(ru.warnings, fmt.Sprintf("step %d: %s", step, settleWarn))
	}
	// Stuck detection: did the previous step's actions change the screen?
	if ru.prevShot != nil {
		v, msg := ru.stuck.observe(imaging.Diff(ru.prevShot.Thumb, shot.Thumb), ru.prevActs)
		switch v {
		case verdictFail:
			return obs, nil, ending{status: Failed, summary: msg + "; the run was ended"}, true
		case verdictWarn:
			ru.warn(step, msg)
			warnings = append(warnings, msg)
		}
	}
	img := ru.imageOf(shot, step, fmt.Sprintf("images/step-%03d", step))
	ru.emit(Event{Kind: EvScreenshot, Step: step, Image: &img})
	obs = llm.Observation{
		Step: step, Task: ru.task.Task, Screenshot: img, Recent: ru.recentImages(),
		Memory: ru.mem.text(), History: ru.mem.history(), Warnings: warnings, Feedback: ru.feedback,
		Answers: ru.answers,
	}
	ru.answers = nil
	// Where the pointer is, in the screenshot's pixels (native tools ask for it).
	if p, err := ru.o.Input.CursorPosition(ru.ctx); err == nil && shot.Frame.Region.Contains(p) {
		ip := shot.Frame.GlobalToImage(p)
		obs.Cursor = &ip
	}
	if len(ru.zooms) > 0 {
		obs.Feedback = strings.TrimSpace(obs.Feedback + fmt.Sprintf(
			"\nThe %d zoomed region(s) you asked for are the last earlier image(s), just before the current screenshot.", len(ru.zooms)))
	}
	return obs, shot, ending{}, false
}

// onlyAsks reports whether acts are all ask_user actions (and there is one).
func onlyAsks(acts []action.Action) bool {
	for _, a := range acts {
		if a.Kind != action.AskUser {
			return false
		}
	}
	return len(acts) > 0
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

// keepScreenshot adds the step's screenshot to the history the next call
// carries (the last KeepImages-1) and makes it the one the next step compares with.
func (ru *run) keepScreenshot(img llm.Image, shot *imaging.Shot) {
	ru.recent = append(ru.recent, img)
	if k := ru.o.KeepImages - 1; len(ru.recent) > k {
		ru.recent = append([]llm.Image(nil), ru.recent[len(ru.recent)-k:]...)
	}
	ru.zooms = nil
	ru.prevShot = shot
}

// afterActions notes what the executed actions mean for the next step
// (feedback, whether the screen should change, warnings) and reports whether
// every one of them ran without error.
func (ru *run) afterActions(step int, st *StepTrace, acts []action.Trace, outcome string) (allOK bool) {
	ru.prevActs = actedOnScreen(acts)
	ru.feedback = feedbackFor(acts, outcome)
	allOK = true
	for _, a := range acts {
		if a.Warning != "" {
			st.Warnings = append(st.Warnings, a.Warning)
			ru.nextWarn = append(ru.nextWarn, a.Warning)
			ru.warnings = append(ru.warnings, fmt.Sprintf("step %d: %s", step, a.Warning))
		}
		allOK = allOK && a.OK()
	}
	return allOK
}

func (ru *run) tokensUsed() int {
	u := ru.usage.Add(ru.mem.usage)
	return u.InputTokens + u.OutputTokens
}

func (ru *run) recordStep(st StepTrace) {
	ru.trace = append(ru.trace, st)
	cp := st
	ru.emit(Event{Kind: EvStep, Step: st.Step, StepDone: &cp})
}

// terminal maps a decision's status to an ending; stop is false for continue.
func (ru *run) terminal(d *llm.Decision, step int) (ending, bool) {
	switch d.Status {
	case llm.Done:
		sum := fmt.Sprintf("completed in %d step(s)", step)
		if d.Result != "" {
			sum += ": " + d.Result
		}
		return ending{status: Completed, summary: sum, result: d.Result}, true
	case llm.Blocked:
		e := ending{status: Blocked, blockReason: ReasonModel, result: d.Result, next: d.NextUserAction}
		reason := firstNonEmpty(d.BlockReason, d.Result, "the model needs a human to continue")
		if len(d.SafetyChecks) > 0 {
			e.blockReason, e.checks = ReasonSafetyCheck, append([]string(nil), d.SafetyChecks...)
			e.summary = "blocked: the provider raised safety checks that need a human: " + strings.Join(d.SafetyChecks, "; ")
			if e.next == "" {
				e.next = "review the safety checks; run the task again only if the action is intended"
			}
		} else {
			e.summary = "blocked: " + reason
			if e.next == "" {
				e.next = reason
			}
		}
		return e, true
	case llm.Failed:
		return ending{status: Failed, result: d.Result,
			summary: "the model gave up: " + firstNonEmpty(d.Result, d.BlockReason, d.Observation, "no reason given")}, true
	}
	return ending{}, false
}

// decide asks the model for this step, re-asking once when the answer is invalid.
func (ru *run) decide(step int, obs llm.Observation) (*llm.Decision, int64, ending, bool) {
	var total int64
	for attempt := 0; ; attempt++ {
		dec, ms, err := ru.ask(step, obs)
		total += ms
		if err == nil {
			err = ru.validate(dec, obs.Screenshot.Frame)
		}
		if err == nil {
			ru.emit(Event{Kind: EvModel, Step: step, Decision: dec})
			return dec, total, ending{}, false
		}
		if e := ru.ctxEnding(); e != nil {
			return dec, total, *e, true
		}
		if !errors.Is(err, llm.ErrBadOutput) {
			return dec, total, ending{status: Failed, summary: "the model provider failed: " + err.Error()}, true
		}
		if dec != nil {
			ru.emit(Event{Kind: EvModel, Step: step, Decision: dec, Message: err.Error()})
		}
		if attempt >= 1 {
			return dec, total, ending{status: Failed, summary: "the model's answer was invalid twice in a row: " + err.Error()}, true
		}
		msg := fmt.Sprintf("the model's answer for step %d was invalid; asking again: %v", step, err)
		ru.warn(step, msg)
		obs.ReAsk = true
		// The adapter frames the re-ask in its own wire format; Feedback carries
		// only what was wrong (llm.Observation.Feedback).
		obs.Feedback = err.Error() + ". No action of that answer was executed; answer again for the same screenshot."
	}
}

// ask makes one model call, with "still waiting" progress while it runs.
func (ru *run) ask(step int, obs llm.Observation) (*llm.Decision, int64, error) {
	ru.setPhase(step, "waiting for the model")
	base := float64(step-1) + 0.1
	if obs.ReAsk {
		ru.progressEvent(base, fmt.Sprintf("Asking the model again for step %d (invalid answer)", step))
	} else {
		ru.progressEvent(base, fmt.Sprintf("Asking the model for step %d", step))
	}
	start := time.Now()
	stopTick := ru.tick(func(waited time.Duration) {
		ru.progressEvent(base, fmt.Sprintf("Still waiting for the model for step %d (%s)", step, waited.Round(time.Second)))
	})
	dec, err := ru.session.Next(ru.ctx, obs)
	stopTick()
	ms := time.Since(start).Milliseconds()
	if dec == nil || !dec.Released {
		ru.usage.Calls++
	}
	if dec != nil {
		ru.usage.InputTokens += dec.Usage.InputTokens
		ru.usage.OutputTokens += dec.Usage.OutputTokens
	}
	return dec, ms, err
}

// validate checks a decision against the action schema and what this run can
// do, and each point against the image the model saw (sent, the frame of the
// screenshot sent, or the size the model declared).
func (ru *run) validate(d *llm.Decision, sent geom.Frame) error {
	if d == nil {
		return fmt.Errorf("%w: empty answer", llm.ErrBadOutput)
	}
	if d.Status == "" && len(d.Actions) > 0 {
		d.Status = llm.Continue
	}
	if err := llm.ValidateDecision(d); err != nil {
		return err
	}
	if d.ImageSize != nil {
		sent = geom.ScaleFromDeclared(sent, *d.ImageSize)
	}
	for i, a := range d.Actions {
		if err := a.CheckNear(sent); err != nil {
			return fmt.Errorf("%w: actions[%d] (%s): %v", llm.ErrBadOutput, i, a.Kind, err)
		}
	}
	if ru.o.Grounder == nil {
		for i, a := range d.Actions {
			if a.At == nil && a.Target != "" && a.Kind.UsesPoint() {
				return fmt.Errorf("%w: actions[%d] (%s) names target %q without coordinates, and no grounding model is configured: give the coordinates",
					llm.ErrBadOutput, i, a.Kind, a.Target)
			}
		}
	}
	return nil
}

// recentImages returns the earlier screenshots and the zoomed regions for the next call.
func (ru *run) recentImages() []llm.Image {
	if len(ru.recent) == 0 && len(ru.zooms) == 0 {
		return nil
	}
	out := make([]llm.Image, 0, len(ru.recent)+len(ru.zooms))
	out = append(out, ru.recent...)
	return append(out, ru.zooms...)
}

// captureSettled takes a screenshot once the screen stops changing (bounded).
func (ru *run) captureSettled(step int) (*imaging.Shot, string, error) {
	if ru.o.Settle.MaxWait < 0 {
		shot, err := ru.shoot(geom.Rect{})
		return shot, "", err
	}
	// The wait compares thumbnails of bare captures (no scaling, no encoding);
	// only the settled screen is encoded for the model.
	thumb, err := ru.thumb()
	if err != nil {
		return nil, "", err
	}
	limit := time.Now().Add(ru.o.Settle.MaxWait)
	// After acting, an application may not have repainted yet: a screen still
	// identical to the one the actions were planned on is "still" but stale.
	// Give it a moment (bounded, so a step that really changed nothing costs
	// little) to show the change before waiting for stillness.
	if ru.prevActs && ru.prevShot != nil {
		changeBy := time.Now().Add(min(ru.o.Settle.MaxWait, expectChangeWait))
		for imaging.Diff(ru.prevShot.Thumb, thumb) < ru.stuck.threshold && time.Now().Before(changeBy) {
			if !sleepCtx(ru.ctx, ru.o.Settle.Interval) {
				return nil, "", context.Cause(ru.ctx)
			}
			if thumb, err = ru.thumb(); err != nil {
				return nil, "", err
			}
		}
	}
	warn := ""
	for {
		if !sleepCtx(ru.ctx, ru.o.Settle.Interval) {
			return nil, "", context.Cause(ru.ctx)
		}
		next, err := ru.thumb()
		if err != nil {
			return nil, "", err
		}
		if imaging.Diff(thumb, next) < ru.o.Settle.Threshold {
			break
		}
		thumb = next
		if time.Now().After(limit) {
			warn = fmt.Sprintf("the screen was still changing after %s; this screenshot may show a transition", ru.o.Settle.MaxWait)
			break
		}
	}
	shot, err := ru.shoot(geom.Rect{})
	return shot, warn, err
}

// thumb captures the run's display and returns only its thumbnail.
func (ru *run) thumb() (imaging.Thumb, error) {
	return ru.o.Shots.Thumb(ru.ctx, ru.o.Screen, ru.display, geom.Rect{})
}

// shoot captures region (zero = the run's whole display).
func (ru *run) shoot(region geom.Rect) (*imaging.Shot, error) {
	ru.shotSeq++
	return ru.o.Shots.Shoot(ru.ctx, ru.o.Screen, ru.display, region, ru.o.Shot, fmt.Sprintf("%s-f%d", ru.id, ru.shotSeq))
}

// imageOf wraps a shot as the llm.Image of a step.
func (ru *run) imageOf(s *imaging.Shot, step int, ref string) llm.Image {
	ext := ".jpg"
	if s.MIME == "image/png" {
		ext = ".png"
	}
	return llm.Image{MIME: s.MIME, Data: s.Data, Frame: s.Frame, Step: step, Ref: ref + ext}
}

// expectChangeWait bounds how long a step waits for its actions to show on
// screen before it takes the unchanged screen as the answer.
const expectChangeWait = 800 * time.Millisecond

// sleepCtx waits d or until ctx ends; it reports whether the full wait passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
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
