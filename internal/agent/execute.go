package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/operate"
)

// planned is one action of a decision, resolved against the step's screenshot.
type planned struct {
	trace  action.Trace
	at, to *geom.GlobalPoint
	path   []geom.GlobalPoint
	region geom.Rect // zoom region, global logical pixels
	toBy   string    // how To was found (located_by of a drag's to_ref)
	// err is a resolution problem (padding, target not found); the action is
	// not executed and the rest of the batch is skipped.
	err error
}

// frames are the two frames a step's points are read over: the one the model
// says it saw (its declared image size, or the image sent) and the one sent.
type frames struct{ model, sent geom.Frame }

// resolvePoint maps pt, read over frame f, to a global pixel through the
// resolver (a model's point is never rejected for lying off the image: it is
// clamped onto the display with a warning) and to the sent image's pixels.
func resolvePoint(pt action.Point, f geom.Frame, sent geom.Frame) (geom.ImagePoint, geom.Resolved, error) {
	r, err := pt.Resolve(f, nil, geom.AnyDistance)
	if err != nil {
		return geom.ImagePoint{}, geom.Resolved{}, err
	}
	return geom.MapImagePoint(r.Image, f, sent), r, nil
}

// resolve maps every action of d to screen coordinates, grounding named
// targets in one call to the grounder.
func (ru *run) resolve(d *llm.Decision, shot *imaging.Shot, img llm.Image) []planned {
	fs := frames{model: shot.Frame, sent: shot.Frame}
	if d.ImageSize != nil {
		fs.model = geom.ScaleFromDeclared(shot.Frame, *d.ImageSize)
	}
	grounded, groundErr := ru.ground(d.Actions, img)
	plan := make([]planned, len(d.Actions))
	for i, a := range d.Actions {
		p := &plan[i]
		p.trace.Action = a
		atFrame := fs.model
		if a.At == nil && a.Target != "" && a.Kind.UsesPoint() {
			g, ok := grounded[i]
			switch {
			case ok:
				a.At, atFrame = &g, fs.sent
				p.trace.LocatedBy = operate.ByGrounding
			case groundErr != nil:
				p.err = groundErr
				continue
			default:
				p.err = fmt.Errorf("the grounding model could not find %q on the screen", a.Target)
				continue
			}
		}
		if a.Ref != "" || a.ToRef != "" {
			if err := ru.placeRefs(p, a, fs.sent); err != nil {
				p.err = err
				continue
			}
		}
		ru.place(p, a, atFrame, fs)
	}
	return plan
}

// ground asks the grounding model, in one call, for the actions that name a
// target without a point; it returns the points found by action index.
func (ru *run) ground(acts []action.Action, img llm.Image) (map[int]action.Point, error) {
	if ru.o.Grounder == nil {
		return nil, nil
	}
	var targets []string
	var idx []int
	for i, a := range acts {
		if a.At == nil && a.Target != "" && a.Kind.UsesPoint() {
			targets, idx = append(targets, a.Target), append(idx, i)
		}
	}
	if len(targets) == 0 {
		return nil, nil
	}
	pts, u, err := ru.o.Grounder.Ground(ru.ctx, img, targets)
	if u.Calls == 0 {
		u.Calls = 1
	}
	ru.usage = ru.usage.Add(u)
	if err != nil {
		err = fmt.Errorf("the grounding model failed: %w", err)
	}
	out := map[int]action.Point{}
	for j, i := range idx {
		if j < len(pts) && pts[j] != nil {
			out[i] = *pts[j]
		}
	}
	return out, err
}

// place resolves a's points into p: At over atFrame (the grounder's points
// are over the sent frame), To and the path over the model's frame, and a
// zoom's region on the run's display.
func (ru *run) place(p *planned, a action.Action, atFrame geom.Frame, fs frames) {
	var warns []string
	if a.At != nil {
		ip, r, err := resolvePoint(*a.At, atFrame, fs.sent)
		if err != nil {
			p.err = fmt.Errorf("position %v: %w", a.At, err)
			return
		}
		g := r.Global
		p.trace.Image, p.trace.Global, p.at = &ip, &g, &g
		if r.Warning != "" {
			warns = append(warns, r.Warning)
		}
	}
	if a.To != nil {
		ip, r, err := resolvePoint(*a.To, fs.model, fs.sent)
		if err != nil {
			p.err = fmt.Errorf("end position %v: %w", a.To, err)
			return
		}
		g := r.Global
		p.trace.ImageTo, p.trace.GlobalTo, p.to = &ip, &g, &g
		if r.Warning != "" {
			warns = append(warns, r.Warning)
		}
	}
	for _, q := range a.Path {
		_, r, err := resolvePoint(q, fs.model, fs.sent)
		if err != nil {
			p.err = fmt.Errorf("drag path point %v: %w", q, err)
			return
		}
		p.path = append(p.path, r.Global)
	}
	if a.Kind == action.Zoom && p.at != nil && p.to != nil {
		region, err := geom.ZoomRegion(*p.at, *p.to, ru.display)
		if err != nil {
			p.err = err
			return
		}
		p.region = region
	}
	p.trace.Warning = strings.Join(warns, "; ")
}

// planTraces returns the traces of a plan, for loop detection.
func planTraces(plan []planned) []action.Trace {
	out := make([]action.Trace, len(plan))
	for i, p := range plan {
		out[i] = p.trace
	}
	return out
}

// executePlan performs the actions in order, checking between them for
// cancellation, deadline, kill switch and human takeover. halt is non-nil when
// the run must end; outcome describes what happened.
func (ru *run) executePlan(step int, plan []planned) (acts []action.Trace, halt *ending, outcome string) {
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
		desc := p.trace.String()
		ru.progressEvent(base+0.8*float64(i)/float64(k), fmt.Sprintf("Step %d action %d/%d: %s", step, i+1, k, desc))
		if p.err != nil {
			p.trace.Outcome, p.trace.Error = action.OutcomeNotExecuted, p.err.Error()
			acts = append(acts, ru.actionDone(step, p.trace))
			return acts, nil, fmt.Sprintf("action %d/%d (%s) was not executed: %v; the remaining actions were skipped", i+1, k, p.trace.Action.Kind, p.err)
		}
		t0 := time.Now()
		asked, askHalt, err := ru.performOrAsk(step, p)
		p.trace.Millis = time.Since(t0).Milliseconds()
		if asked != nil { // a confirmation is recorded before its action
			acts = append(acts, *asked)
		}
		if askHalt != nil {
			p.trace.Outcome = action.OutcomeNotExecuted
			if p.trace.Error == "" {
				p.trace.Error = askHalt.summary
			}
			acts = append(acts, ru.actionDone(step, p.trace))
			return acts, askHalt, fmt.Sprintf("action %d/%d (%s) was not executed: %s", i+1, k, p.trace.Action.Kind, askHalt.summary)
		}
		if err == nil {
			p.trace.Outcome = action.OutcomeOK
			acts = append(acts, ru.actionDone(step, p.trace))
			continue
		}
		p.trace.Outcome, p.trace.Error = action.OutcomeFailed, err.Error()
		acts = append(acts, ru.actionDone(step, p.trace))
		failed := fmt.Sprintf("action %d/%d (%s) failed: %v", i+1, k, desc, err)
		if e := ru.stopEnding(); e != nil {
			return acts, e, failed
		}
		var pe *operate.PolicyError
		switch {
		case errors.As(err, &pe):
			return acts, &ending{status: Blocked, blockReason: ReasonPolicy,
				summary: "blocked by the key policy: " + pe.Error(),
				next:    "press the combination yourself if it is intended, or allow it in the key policy configuration"}, failed
		case errors.Is(err, desktop.ErrUnsupported):
			return acts, &ending{status: Failed, summary: "the desktop backend cannot do this: " + err.Error()}, failed
		case errors.Is(err, operate.ErrInterrupted), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return acts, &ending{status: Cancelled, summary: "interrupted: " + err.Error()}, failed
		}
		return acts, nil, failed + "; the remaining actions were skipped"
	}
	return acts, nil, fmt.Sprintf("%d/%d actions executed", k, k)
}

func (ru *run) actionDone(step int, t action.Trace) action.Trace {
	cp := t
	ru.emit(Event{Kind: EvAction, Step: step, Action: &cp, Message: t.String()})
	return t
}

// performOrAsk executes one resolved action: an ask_user puts its question to
// the person, a zoom captures its region, and the rest go to the executor,
// which checks the key policy and has a combination that needs confirming
// confirmed first through confirmKeys (asked is that confirmation's trace).
// halt ends the run when a question got no answer.
func (ru *run) performOrAsk(step int, p *planned) (asked *action.Trace, halt *ending, err error) {
	a := p.trace.Action
	switch a.Kind {
	case action.AskUser:
		return nil, ru.askUser(step, p), nil
	case action.Zoom:
		return nil, nil, ru.zoom(step, p)
	}
	op := operate.Op{Action: a, At: placeOf(p.at, p.trace.Image, p.trace.LocatedBy), To: placeOf(p.to, p.trace.ImageTo, p.toBy),
		Who: "The agent", Stop: ru.stopErr,
		Confirm: func(_ context.Context, keys []desktop.Key, combo string) error {
			var refused error
			asked, halt, refused = ru.confirmKeys(step, keys, combo)
			if halt != nil {
				return errors.New(halt.summary)
			}
			return refused
		}}
	for _, g := range p.path {
		op.Path = append(op.Path, operate.Place{Global: g})
	}
	_, err = ru.o.Executor.Do(ru.ctx, op)
	if halt != nil {
		return asked, halt, nil
	}
	return asked, nil, err
}

// placeOf is a resolved point as the executor takes it (nil for none).
func placeOf(g *geom.GlobalPoint, img *geom.ImagePoint, by string) *operate.Place {
	if g == nil {
		return nil
	}
	return &operate.Place{Global: *g, Image: img, LocatedBy: by}
}

// stopErr is stopEnding as an error, for the executor's waits and holds.
func (ru *run) stopErr() error {
	if e := ru.stopEnding(); e != nil {
		return errors.New(e.summary)
	}
	return nil
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
func actedOnScreen(acts []action.Trace) bool {
	for _, a := range acts {
		if a.OK() && a.Action.Kind.ChangesScreen() {
			return true
		}
	}
	return false
}

// feedbackFor tells the model what happened to its previous actions.
func feedbackFor(acts []action.Trace, outcome string) string {
	if len(acts) == 0 {
		return ""
	}
	parts := make([]string, 0, len(acts))
	for _, a := range acts {
		s := a.String() + ": " + a.Outcome
		if a.Answer != "" {
			s += fmt.Sprintf(" (the user answered %q)", a.Answer)
		}
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
func stepLine(step int, d *llm.Decision, acts []action.Trace, outcome string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d:", step)
	if len(acts) > 0 {
		parts := make([]string, len(acts))
		for i, a := range acts {
			parts[i] = a.String()
			if a.Answer != "" {
				parts[i] += fmt.Sprintf(" (the user answered %q)", a.Answer)
			}
			if !a.OK() {
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
