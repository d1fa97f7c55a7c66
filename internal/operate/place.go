package operate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

type geomPoint = geom.GlobalPoint

// How a point was found, as a result's located_by says it.
const (
	ByCoordinates   = ""              // the caller gave the point (through the geom resolver)
	ByRef           = "ref"           // the caller named an element of its latest snapshot
	ByAccessibility = "accessibility" // the target's words matched an element of the accessibility tree (no model)
	ByOCR           = "ocr"           // the target's words were read on the screen (no model)
	ByVision        = "vision"        // a plain-vision model located the target's words
	ByGrounding     = "grounding"     // the agent's grounding model located them
	ByCache         = "cache"         // a flow cache's pixel fingerprint, verified on the screen
)

// Place is a point an action acts at, placed on the screen.
type Place struct {
	// Global is where input goes.
	Global geom.GlobalPoint
	// Image is the point in pixels of the image the caller shows the action
	// on (its screenshot); nil when there is none.
	Image *geom.ImagePoint
	// FrameID names that image's frame ("" when none).
	FrameID string
	// Display is the display the point lies on (zero when unknown).
	Display geom.Display
	// LocatedBy says how the point was found (ByCoordinates, ByVision, ...).
	LocatedBy string
	// Warning is a resolver's note (a point clamped onto the display).
	Warning string
	// Box is what a locate step found the point in (the element's box, the
	// text read, the model's box), in pixels of the image FrameID names; nil
	// for a point the caller gave.
	Box *geom.ImageRect
	// Note describes a located target for results ("located ... at box ...").
	Note string
}

// Target is what a Locator looks for: an element in words, on a display
// ("" = the default one). (A ref names its element without locating it:
// front ends place it themselves, located_by ByRef.)
type Target struct {
	Words   string
	Display string
}

// ErrNotFound is wrapped by a Locator's error when the target is not on the
// screen; a Chain then asks its next step.
var ErrNotFound = errors.New("not found on the screen")

// ErrAmbiguous is wrapped by a Locator's error when the target matches
// several places and the words do not say which: a Chain asks its next step,
// which may tell them apart (the vision model sees "the Submit button" where
// OCR reads "Submit" twice); the last step's ambiguity is the error.
var ErrAmbiguous = errors.New("several places match")

// Locator is one step of the locate chain (ref -> accessibility -> OCR ->
// vision): it places a target on the screen, or says why not.
type Locator interface {
	// By names the step, as located_by.
	By() string
	// Locate returns the target's place (LocatedBy set), an error wrapping
	// ErrNotFound when it is not there, or another error.
	Locate(ctx context.Context, t Target) (Place, error)
}

// Chain tries its steps in order: the first that places the target wins;
// one that does not find it, or finds several places, passes to the next. With no step left, the
// errors of all are returned together.
type Chain []Locator

// By names the chain's steps ("vision", "ocr, vision").
func (c Chain) By() string {
	names := make([]string, len(c))
	for i, l := range c {
		names[i] = l.By()
	}
	return strings.Join(names, ", ")
}

// Locate asks each step in turn.
func (c Chain) Locate(ctx context.Context, t Target) (Place, error) {
	var errs []error
	for _, l := range c {
		p, err := l.Locate(ctx, t)
		if err == nil {
			if p.LocatedBy == "" {
				p.LocatedBy = l.By()
			}
			return p, nil
		}
		errs = append(errs, err)
		if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrAmbiguous) {
			break // a failing step (a model error) is reported, not skipped over
		}
	}
	if len(errs) == 0 {
		return Place{}, fmt.Errorf("locating %q: no locate step is configured", t.Words)
	}
	return Place{}, errors.Join(errs...)
}

// place fills op.At from op.Locate when the action names a target instead of
// a point.
func (e *Executor) place(ctx context.Context, op *Op) error {
	a := op.Action
	if op.At != nil || a.Target == "" || !a.Kind.UsesPoint() {
		return nil
	}
	if op.Locate == nil {
		return fmt.Errorf("%s at %q %w: nothing can locate a target here; give coordinates", a.Kind, a.Target, ErrCannotPerform)
	}
	p, err := op.Locate.Locate(ctx, Target{Words: a.Target, Display: op.Display})
	if err != nil {
		return err
	}
	op.At = &p
	return nil
}

func globalOf(p *Place) *geom.GlobalPoint {
	if p == nil {
		return nil
	}
	g := p.Global
	return &g
}

// ComboText is keys as a combination ("ctrl+shift+End").
func ComboText(keys []desktop.Key) string { return desktop.ComboString(keys) }
