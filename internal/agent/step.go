// The step pipeline of a run: observe, decide (ask the model, validate),
// act, record, and the checks between steps.

package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/safety"
)

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
	switch {
	case ru.o.DisableHumanOverride:
	case !ru.o.Input.ObservesPointer():
		ru.warnings = append(ru.warnings, "human-override detection is off for this run: this desktop shows guiagent no pointer position "+
			"(Wayland, the desktop portal and VNC do not), so a person moving the mouse cannot be noticed; stop the task from the dashboard or the kill switch")
	default:
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
	st := StepTrace{Step: step, FrameID: shot.Frame.ID, Warnings: obs.Warnings,
		Elements: ru.elements.record(ru.o.Elements, shot.Frame, ru.o.Shot.Profile)}
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
	if ru.o.Elements.text() {
		obs.Elements = ru.elements.outline(shot.Frame, ru.o.Shot.Profile)
	}
	obs.Marked = ru.elements != nil && ru.elements.marked > 0
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

// recordStep keeps st for the result and sends it to the observers: the
// run record's step event carries the elements' outline, the result (what
// gui_execute_task returns) only their summary.
func (ru *run) recordStep(st StepTrace) {
	cp := st
	ru.emit(Event{Kind: EvStep, Step: st.Step, StepDone: &cp})
	if st.Elements != nil {
		e := *st.Elements
		e.Outline = ""
		st.Elements = &e
	}
	ru.trace = append(ru.trace, st)
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

// imageOf wraps a shot as the llm.Image of a step.
func (ru *run) imageOf(s *imaging.Shot, step int, ref string) llm.Image {
	ext := ".jpg"
	if s.MIME == "image/png" {
		ext = ".png"
	}
	return llm.Image{MIME: s.MIME, Data: s.Data, Frame: s.Frame, Step: step, Ref: ref + ext}
}
