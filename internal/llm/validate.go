package llm

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// ValidateActions checks every action against the action schema and returns
// an error wrapping ErrBadOutput that names each problem ("actions[1] (click):
// ..."), or nil. Coordinates are checked for count (2 or 4), finiteness and,
// for normalized profiles, the range 0..Divisor (5% slack).
func ValidateActions(acts []Action, p geom.Profile) error {
	var probs []string
	for i, a := range acts {
		if err := validateAction(a, p); err != nil {
			probs = append(probs, fmt.Sprintf("actions[%d] (%s): %v", i, a.Kind, err))
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrBadOutput, strings.Join(probs, "; "))
}

// ValidateDecision checks the status and the actions of d (see ValidateActions).
func ValidateDecision(d *Decision, p geom.Profile) error {
	switch d.Status {
	case Continue, Done, Blocked, Failed:
	default:
		return fmt.Errorf("%w: status %q is not one of continue, done, blocked, failed", ErrBadOutput, d.Status)
	}
	if d.Status == Continue && len(d.Actions) == 0 {
		return fmt.Errorf("%w: status is continue but there are no actions: give at least one action, or status done/blocked/failed", ErrBadOutput)
	}
	return ValidateActions(d.Actions, p)
}

func validateAction(a Action, p geom.Profile) error {
	if !slices.Contains(ActionKinds, a.Kind) {
		return fmt.Errorf("unknown action %q: use one of %s", a.Kind, kindList())
	}
	needAt := func() error {
		if a.At == nil && strings.TrimSpace(a.Target) == "" {
			return errors.New("needs a position: give x and y (or a box)")
		}
		return nil
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if a.At != nil {
		add(checkCoords("position", a.At, p))
	}
	if a.To != nil {
		add(checkCoords("end position (to)", a.To, p))
	}
	for i, pt := range a.Path {
		if len(pt) != 2 {
			add(fmt.Errorf("path[%d] needs 2 numbers, got %d", i, len(pt)))
			continue
		}
		add(checkCoords(fmt.Sprintf("path[%d]", i), pt, p))
	}
	if a.Button != "" {
		_, err := desktop.ParseButton(a.Button)
		add(err)
	}
	if a.Amount < 0 {
		add(fmt.Errorf("amount %d is negative", a.Amount))
	}
	if a.DurationMS < 0 {
		add(fmt.Errorf("duration_ms %d is negative", a.DurationMS))
	}
	modifiers := func() {
		if len(a.Keys) > 0 {
			_, err := desktop.ParseKeys(a.Keys)
			add(err)
		}
	}
	switch a.Kind {
	case Click:
		add(needAt())
		if a.Clicks < 0 || a.Clicks > 3 {
			add(fmt.Errorf("clicks %d is out of range 1-3", a.Clicks))
		}
		modifiers()
	case DoubleClick, TripleClick, Move:
		add(needAt())
		modifiers()
	case Drag:
		add(needAt())
		if a.To == nil {
			add(errors.New("needs an end position: give to [x, y]"))
		}
	case Zoom:
		if a.At == nil || a.To == nil {
			add(errors.New("needs a region: give box [x1, y1, x2, y2]"))
		}
	case Scroll:
		if a.Direction == "" {
			add(errors.New("needs a direction: up, down, left or right"))
		} else if _, err := desktop.ParseDirection(a.Direction); err != nil {
			add(err)
		}
		modifiers()
	case TypeText:
		if a.Text == "" {
			add(errors.New("needs text to type"))
		}
	case KeyPress, HoldKey:
		if len(a.Keys) == 0 {
			add(errors.New("needs keys, such as [\"ctrl\", \"s\"] or [\"Return\"]"))
		} else {
			_, err := desktop.ParseKeys(a.Keys)
			add(err)
		}
		if a.Kind == HoldKey && a.DurationMS <= 0 {
			add(errors.New("needs duration_ms greater than 0"))
		}
	case MouseDown, MouseUp, Wait:
	}
	return errors.Join(errs...)
}

func checkCoords(what string, nums []float64, p geom.Profile) error {
	if len(nums) != 2 && len(nums) != 4 {
		return fmt.Errorf("%s needs 2 numbers (a point) or 4 (a box), got %d", what, len(nums))
	}
	for _, v := range nums {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s has a coordinate that is not a finite number", what)
		}
	}
	if p.Divisor > 0 {
		lo, hi := -0.05*p.Divisor, 1.05*p.Divisor
		for _, v := range nums {
			if v < lo || v > hi {
				return fmt.Errorf("%s coordinate %g is outside 0-%g: coordinates are normalized to 0-%g", what, v, p.Divisor, p.Divisor)
			}
		}
	} else {
		for _, v := range nums {
			if v < -1 {
				return fmt.Errorf("%s coordinate %g is negative: coordinates are pixels of the screenshot, from 0", what, v)
			}
		}
	}
	return nil
}

func kindList() string {
	s := make([]string, len(ActionKinds))
	for i, k := range ActionKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
