package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// loopRepeats is how many times the same action batch may be repeated in a row
// before a warning; one more repetition ends the run.
const loopRepeats = 3

// samePointTolerancePx is how far apart (global logical pixels) two points may
// be and still count as the same target for loop detection.
const samePointTolerancePx = 12

// verdict is what a detector concluded after a step.
type verdict int

const (
	verdictOK verdict = iota
	verdictWarn
	verdictFail
)

// stuckDetector counts consecutive steps whose actions did not change the
// screen. At Steps it warns; one step later it fails.
type stuckDetector struct {
	steps     int
	threshold float64
	unchanged int
}

// observe records the difference (0..1) between the screenshot a step acted on
// and the one after it. acted is false for steps that only waited or looked.
func (d *stuckDetector) observe(diff float64, acted bool) (verdict, string) {
	if !acted {
		return verdictOK, ""
	}
	if diff >= d.threshold {
		d.unchanged = 0
		return verdictOK, ""
	}
	d.unchanged++
	switch {
	case d.unchanged > d.steps:
		return verdictFail, fmt.Sprintf("stuck: the screen did not change after the actions of %d steps in a row", d.unchanged)
	case d.unchanged == d.steps:
		return verdictWarn, fmt.Sprintf("The screen has not changed after your last %d steps: your actions have no visible effect. "+
			"Check the screenshot, then try a different approach (another element, a keyboard shortcut, scrolling) or report blocked.", d.steps)
	}
	return verdictOK, ""
}

// actionSig is an action reduced to what makes two actions "the same".
type actionSig struct {
	kind      action.Kind
	at, to    *geom.GlobalPoint
	text      string
	keys      string
	direction desktop.Direction
	button    desktop.Button
}

func (a actionSig) same(b actionSig) bool {
	return a.kind == b.kind && a.text == b.text && a.keys == b.keys && a.direction == b.direction &&
		a.button == b.button && nearPt(a.at, b.at) && nearPt(a.to, b.to)
}

func nearPt(a, b *geom.GlobalPoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	dx, dy := a.X-b.X, a.Y-b.Y
	return dx*dx+dy*dy <= samePointTolerancePx*samePointTolerancePx
}

// loopDetector notices the model repeating the same batch of actions step
// after step. At loopRepeats it warns; one more repetition fails.
type loopDetector struct {
	last    []actionSig
	repeats int
}

func sigOf(at action.Trace) actionSig {
	a := at.Action
	s := actionSig{kind: a.Kind, at: at.Global, to: at.GlobalTo, text: a.Text,
		keys: desktop.ComboString(a.Keys), direction: a.Direction, button: a.ButtonOrLeft()}
	if s.at == nil && a.Target != "" {
		s.text += "\x00" + a.Target
	}
	return s
}

// observe records a step's executed actions. Steps with only waits or zooms
// neither count nor reset the streak.
func (d *loopDetector) observe(actions []action.Trace) (verdict, string) {
	var sig []actionSig
	for _, a := range actions {
		if !a.Action.Kind.ChangesScreen() {
			continue
		}
		sig = append(sig, sigOf(a))
	}
	if len(sig) == 0 {
		return verdictOK, ""
	}
	if slices.EqualFunc(sig, d.last, actionSig.same) {
		d.repeats++
	} else {
		d.last, d.repeats = sig, 1
	}
	switch {
	case d.repeats > loopRepeats:
		return verdictFail, fmt.Sprintf("loop: the same action (%s) was repeated %d times in a row without progress", describeSig(sig), d.repeats)
	case d.repeats == loopRepeats:
		return verdictWarn, fmt.Sprintf("You have repeated the same action (%s) %d times in a row. It is not working: "+
			"do something different, or report blocked if the task cannot continue.", describeSig(sig), d.repeats)
	}
	return verdictOK, ""
}

func describeSig(sig []actionSig) string {
	parts := make([]string, 0, len(sig))
	for _, s := range sig {
		p := string(s.kind)
		if s.at != nil {
			p += " at " + s.at.String()
		}
		if s.keys != "" {
			p += " " + s.keys
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}
