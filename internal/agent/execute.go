package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
)

// defaultScrollNotches is the wheel notches of a scroll without an amount.
const defaultScrollNotches = 3

// maxKeyRepeat bounds the repeat count of one key action.
const maxKeyRepeat = 50

// maxScrollNotches bounds one scroll action (a model asking for thousands of
// notches would spin the wheel for minutes).
const maxScrollNotches = 50

// planned is one action of a decision, resolved against the step's screenshot.
type planned struct {
	trace  ActionTrace
	at, to *geom.GlobalPoint
	path   []geom.GlobalPoint
	region geom.Rect // zoom region, global logical pixels
	// err is a resolution problem (padding, target not found); the action is
	// not executed and the rest of the batch is skipped.
	err error
}

// policyError is a key combination refused by the key policy.
type policyError struct{ err error }

func (e *policyError) Error() string { return e.err.Error() }
func (e *policyError) Unwrap() error { return e.err }

// errInterrupted ends a wait or hold early; stopEnding says why.
var errInterrupted = errors.New("interrupted")

// toSentImage maps a point of frame from (a declared size) into the pixels of
// frame to (the image actually sent).
func toSentImage(p geom.ImagePoint, from, to geom.Frame) geom.ImagePoint {
	a, b := from.ImageSize(), to.ImageSize()
	if a == b {
		return p
	}
	return geom.ImagePoint{X: (p.X+0.5)*float64(b.W)/float64(a.W) - 0.5, Y: (p.Y+0.5)*float64(b.H)/float64(a.H) - 0.5}
}

// resolvePoint maps model numbers through profile and the model's frame to a
// global pixel, and the point in the sent image's pixels.
func resolvePoint(prof geom.Profile, nums []float64, modelFrame, sent geom.Frame) (geom.ImagePoint, geom.Resolved, error) {
	ip, err := prof.ToImage(nums, modelFrame)
	if err != nil {
		return geom.ImagePoint{}, geom.Resolved{}, err
	}
	r, err := modelFrame.Resolve(ip, false)
	if err != nil {
		return geom.ImagePoint{}, geom.Resolved{}, err
	}
	return toSentImage(ip, modelFrame, sent), r, nil
}

// resolve maps every action of d to screen coordinates, grounding named
// targets in one call to the grounder.
func (ru *run) resolve(d *llm.Decision, shot *imaging.Shot, img llm.Image) []planned {
	sent := shot.Frame
	mf := sent
	if d.ImageSize != nil {
		mf = geom.ScaleFromDeclared(sent, *d.ImageSize)
	}
	prof := ru.o.Adapter.Profile()
	plan := make([]planned, len(d.Actions))

	grounded := map[int][]float64{}
	var groundErr error
	if ru.o.Grounder != nil {
		var targets []string
		var idx []int
		for i, a := range d.Actions {
			if a.At == nil && strings.TrimSpace(a.Target) != "" && usesPoint(a.Kind) {
				targets, idx = append(targets, a.Target), append(idx, i)
			}
		}
		if len(targets) > 0 {
			pts, u, err := ru.o.Grounder.Ground(ru.ctx, img, targets)
			if u.Calls == 0 {
				u.Calls = 1
			}
			ru.usage = ru.usage.Add(u)
			if err != nil {
				groundErr = fmt.Errorf("the grounding model failed: %w", err)
			}
			for j, i := range idx {
				if j < len(pts) && pts[j] != nil {
					grounded[i] = pts[j]
				}
			}
		}
	}

	for i, a := range d.Actions {
		p := &plan[i]
		p.trace.Action = a
		atNums, atProf, atFrame := a.At, prof, mf
		if atNums == nil && strings.TrimSpace(a.Target) != "" && usesPoint(a.Kind) {
			g, ok := grounded[i]
			switch {
			case ok:
				atNums, atProf, atFrame = g, ru.o.Grounder.Profile(), sent
			case groundErr != nil:
				p.err = groundErr
				continue
			default:
				p.err = fmt.Errorf("the grounding model could not find %q on the screen", a.Target)
				continue
			}
		}
		var warns []string
		if atNums != nil {
			ip, r, err := resolvePoint(atProf, atNums, atFrame, sent)
			if err != nil {
				p.err = fmt.Errorf("position %v: %w", atNums, err)
				continue
			}
			g := r.Global
			p.trace.Image, p.trace.Global, p.at = &ip, &g, &g
			if r.Warning != "" {
				warns = append(warns, r.Warning)
			}
		}
		if a.To != nil {
			ip, r, err := resolvePoint(prof, a.To, mf, sent)
			if err != nil {
				p.err = fmt.Errorf("end position %v: %w", a.To, err)
				continue
			}
			g := r.Global
			p.trace.ImageTo, p.trace.GlobalTo, p.to = &ip, &g, &g
			if r.Warning != "" {
				warns = append(warns, r.Warning)
			}
		}
		for _, q := range a.Path {
			_, r, err := resolvePoint(prof, q, mf, sent)
			if err != nil {
				p.err = fmt.Errorf("drag path point %v: %w", q, err)
				break
			}
			p.path = append(p.path, r.Global)
		}
		if p.err != nil {
			continue
		}
		if a.Kind == llm.Zoom && p.at != nil && p.to != nil {
			x0, y0 := min(p.at.X, p.to.X), min(p.at.Y, p.to.Y)
			x1, y1 := max(p.at.X, p.to.X), max(p.at.Y, p.to.Y)
			p.region = geom.Rect{X: x0, Y: y0, W: x1 - x0 + 1, H: y1 - y0 + 1}.Intersect(ru.display.Bounds)
			if p.region.W < 8 || p.region.H < 8 {
				p.err = fmt.Errorf("zoom region %v is too small: give a region at least 8x8 screen pixels", p.region)
				continue
			}
		}
		p.trace.Warning = strings.Join(warns, "; ")
	}
	return plan
}

// planTraces returns the traces of a plan, for loop detection.
func planTraces(plan []planned) []ActionTrace {
	out := make([]ActionTrace, len(plan))
	for i, p := range plan {
		out[i] = p.trace
	}
	return out
}

// executePlan performs the actions in order, checking between them for
// cancellation, deadline, kill switch and human takeover. halt is non-nil when
// the run must end; outcome describes what happened.
func (ru *run) executePlan(step int, plan []planned) (acts []ActionTrace, halt *ending, outcome string) {
	k := len(plan)
	if k == 0 {
		return nil, nil, "no actions"
	}
	base := float64(step-1) + 0.2
	for i := range plan {
		p := &plan[i]
		if e := ru.stopEnding(); e != nil {
			return acts, e, fmt.Sprintf("stopped before action %d/%d: %s", i+1, k, e.summary)
		}
		desc := describeAction(p.trace)
		ru.progressEvent(base+0.8*float64(i)/float64(k), fmt.Sprintf("Step %d action %d/%d: %s", step, i+1, k, desc))
		if p.err != nil {
			p.trace.Outcome, p.trace.Error = "not executed", p.err.Error()
			acts = append(acts, ru.actionDone(step, p.trace))
			return acts, nil, fmt.Sprintf("action %d/%d (%s) was not executed: %v; the remaining actions were skipped", i+1, k, p.trace.Action.Kind, p.err)
		}
		t0 := time.Now()
		err := ru.perform(step, p)
		p.trace.Millis = time.Since(t0).Milliseconds()
		if err == nil {
			p.trace.Outcome = "ok"
			acts = append(acts, ru.actionDone(step, p.trace))
			continue
		}
		p.trace.Outcome, p.trace.Error = "failed", err.Error()
		acts = append(acts, ru.actionDone(step, p.trace))
		failed := fmt.Sprintf("action %d/%d (%s) failed: %v", i+1, k, desc, err)
		if e := ru.stopEnding(); e != nil {
			return acts, e, failed
		}
		var pe *policyError
		switch {
		case errors.As(err, &pe):
			return acts, &ending{status: Blocked, blockReason: ReasonPolicy,
				summary: "blocked by the key policy: " + pe.Error(),
				next:    "press the combination yourself if it is intended, or allow it in the key policy configuration"}, failed
		case errors.Is(err, desktop.ErrUnsupported):
			return acts, &ending{status: Failed, summary: "the desktop backend cannot do this: " + err.Error()}, failed
		case errors.Is(err, errInterrupted), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return acts, &ending{status: Cancelled, summary: "interrupted: " + err.Error()}, failed
		}
		return acts, nil, failed + "; the remaining actions were skipped"
	}
	return acts, nil, fmt.Sprintf("%d/%d actions executed", k, k)
}

func (ru *run) actionDone(step int, t ActionTrace) ActionTrace {
	cp := t
	ru.emit(Event{Kind: EvAction, Step: step, Action: &cp, Message: describeAction(t)})
	return t
}

// keysFor parses key names and checks them against the policy.
func (ru *run) keysFor(names []string) ([]desktop.Key, error) {
	if len(names) == 0 {
		return nil, nil
	}
	keys, err := desktop.ParseKeys(names)
	if err != nil {
		return nil, err
	}
	if ru.o.Policy != nil {
		if err := ru.o.Policy.Check(keys); err != nil {
			return nil, &policyError{err}
		}
	}
	return keys, nil
}

// perform executes one resolved action through Input.
func (ru *run) perform(step int, p *planned) error {
	in, ctx, a := ru.o.Input, ru.ctx, p.trace.Action
	btn, err := desktop.ParseButton(a.Button)
	if err != nil {
		return err
	}
	switch a.Kind {
	case llm.Click, llm.DoubleClick, llm.TripleClick:
		count := map[llm.ActionKind]int{llm.Click: max(a.Clicks, 1), llm.DoubleClick: 2, llm.TripleClick: 3}[a.Kind]
		mods, err := ru.keysFor(a.Keys)
		if err != nil {
			return err
		}
		return in.Click(ctx, p.at, btn, count, mods)
	case llm.Move:
		if p.at == nil {
			return errors.New("move needs a position")
		}
		return in.Move(ctx, *p.at)
	case llm.Drag:
		if p.at == nil || p.to == nil {
			return errors.New("drag needs a start and an end position")
		}
		return in.Drag(ctx, *p.at, p.path, *p.to, btn)
	case llm.Scroll:
		d, err := desktop.ParseDirection(a.Direction)
		if err != nil {
			return err
		}
		mods, err := ru.keysFor(a.Keys)
		if err != nil {
			return err
		}
		n := a.Amount
		if n <= 0 {
			n = defaultScrollNotches
		}
		return in.Scroll(ctx, p.at, d, min(n, maxScrollNotches), mods)
	case llm.TypeText:
		return in.Type(ctx, a.Text)
	case llm.KeyPress:
		keys, err := ru.keysFor(a.Keys)
		if err != nil {
			return err
		}
		repeat := min(max(a.Amount, 1), maxKeyRepeat)
		last := keys[len(keys)-1]
		if !last.IsModifier() {
			return in.PressKey(ctx, last, repeat, keys[:len(keys)-1])
		}
		for range repeat {
			if err := in.Hotkey(ctx, keys); err != nil {
				return err
			}
		}
		return nil
	case llm.HoldKey:
		keys, err := ru.keysFor(a.Keys)
		if err != nil {
			return err
		}
		return ru.holdKeys(keys, time.Duration(a.DurationMS)*time.Millisecond)
	case llm.MouseDown:
		return in.MouseDown(ctx, p.at, btn)
	case llm.MouseUp:
		return in.MouseUp(ctx, p.at, btn)
	case llm.Wait:
		d := time.Duration(a.DurationMS) * time.Millisecond
		if d <= 0 {
			d = time.Second
		}
		return ru.pause(min(d, ru.o.MaxWaitAction))
	case llm.Zoom:
		return ru.zoom(step, p)
	}
	return fmt.Errorf("action %q is not supported", a.Kind)
}

// holdKeys presses keys, holds them for d (bounded, interruptible) and
// releases them in reverse order, whatever happens.
func (ru *run) holdKeys(keys []desktop.Key, d time.Duration) (err error) {
	in := ru.o.Input
	var pressed []desktop.Key
	defer func() {
		rel := context.WithoutCancel(ru.ctx)
		for i := len(pressed) - 1; i >= 0; i-- {
			if uerr := in.KeyUp(rel, pressed[i]); uerr != nil && err == nil {
				err = uerr
			}
		}
	}()
	for _, k := range keys {
		if err := in.KeyDown(ru.ctx, k); err != nil {
			return err
		}
		pressed = append(pressed, k)
	}
	return ru.pause(min(d, ru.o.MaxWaitAction))
}

// pause waits d, checking every 100 ms for anything that must stop the run.
func (ru *run) pause(d time.Duration) error {
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		if !sleepCtx(ru.ctx, min(left, 100*time.Millisecond)) {
			return fmt.Errorf("%w: %v", errInterrupted, context.Cause(ru.ctx))
		}
		if e := ru.stopEnding(); e != nil {
			return fmt.Errorf("%w: %s", errInterrupted, e.summary)
		}
	}
}

// zoom captures the action's region for the next observation.
func (ru *run) zoom(step int, p *planned) error {
	shot, err := ru.shoot(p.region)
	if err != nil {
		return fmt.Errorf("zoom capture failed: %w", err)
	}
	img := ru.imageOf(shot, step, fmt.Sprintf("images/step-%03d-zoom-%d", step, len(ru.zooms)+1))
	ru.zooms = append(ru.zooms, img)
	ru.emit(Event{Kind: EvScreenshot, Step: step, Image: &img, Message: "zoom " + p.region.String()})
	return nil
}

// actedOnScreen reports whether any action that should change the screen ran.
func actedOnScreen(acts []ActionTrace) bool {
	for _, a := range acts {
		if a.Outcome == "ok" && a.Action.Kind != llm.Wait && a.Action.Kind != llm.Zoom {
			return true
		}
	}
	return false
}

// describeAction renders an action for progress, history and feedback:
// "click at (640,200)", "type \"hello\"", "key ctrl+s".
func describeAction(t ActionTrace) string {
	a := t.Action
	var b strings.Builder
	b.WriteString(string(a.Kind))
	if a.Button != "" && a.Button != "left" {
		b.WriteString(" " + a.Button)
	}
	if t.Global != nil {
		b.WriteString(" at " + t.Global.String())
	} else if a.Target != "" {
		b.WriteString(" on " + strconv.Quote(shorten(a.Target, 40)))
	}
	if t.GlobalTo != nil {
		b.WriteString(" to " + t.GlobalTo.String())
	}
	if a.Text != "" {
		b.WriteString(" " + strconv.Quote(shorten(a.Text, 40)))
	}
	if len(a.Keys) > 0 {
		b.WriteString(" " + strings.Join(a.Keys, "+"))
	}
	if a.Direction != "" {
		b.WriteString(" " + a.Direction)
	}
	if a.Amount > 1 {
		b.WriteString(" x" + strconv.Itoa(a.Amount))
	}
	if a.DurationMS > 0 {
		b.WriteString(" " + strconv.Itoa(a.DurationMS) + "ms")
	}
	return b.String()
}

// feedbackFor tells the model what happened to its previous actions.
func feedbackFor(acts []ActionTrace, outcome string) string {
	if len(acts) == 0 {
		return ""
	}
	parts := make([]string, 0, len(acts))
	for _, a := range acts {
		s := describeAction(a) + ": " + a.Outcome
		if a.Error != "" {
			s += " (" + a.Error + ")"
		}
		if a.Warning != "" {
			s += " [" + a.Warning + "]"
		}
		parts = append(parts, s)
	}
	return "Previous actions: " + strings.Join(parts, "; ") + ". " + outcome + "."
}

// stepLine is a step's line in the history.
func stepLine(step int, d *llm.Decision, acts []ActionTrace, outcome string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d:", step)
	if len(acts) > 0 {
		parts := make([]string, len(acts))
		for i, a := range acts {
			parts[i] = describeAction(a)
			if a.Outcome != "ok" {
				parts[i] += " (" + a.Outcome + ")"
			}
		}
		b.WriteString(" " + strings.Join(parts, "; "))
	}
	if outcome != "" {
		b.WriteString(" -> " + outcome)
	}
	if d != nil && d.ExpectedOutcome != "" {
		b.WriteString(". Expected: " + shorten(d.ExpectedOutcome, 120))
	}
	return shorten(b.String(), 400)
}
