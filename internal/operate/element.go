package operate

import (
	"context"
	"errors"
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/uitree"
)

// The accessibility step of the locate chain: a target's words matched
// against the elements of a snapshot (uitree.Find: the exact name, then a
// name that contains them, then a close one; role words narrow the role). No
// model is asked.

// elementMiss is a target the tree has no element for: the chain's next
// step (OCR, vision) is asked.
type elementMiss struct{ err error }

func (e elementMiss) Error() string        { return "accessibility tree: " + e.err.Error() }
func (e elementMiss) Unwrap() error        { return e.err }
func (e elementMiss) Is(target error) bool { return target == ErrNotFound }

// elementAmbiguous is a target several elements match: the chain's next
// step (the vision model) may tell them apart; when none can, the
// *uitree.MatchError listing the candidates with their refs is the error.
type elementAmbiguous struct{ err error }

func (e elementAmbiguous) Error() string        { return "accessibility tree: " + e.err.Error() }
func (e elementAmbiguous) Unwrap() error        { return e.err }
func (e elementAmbiguous) Is(target error) bool { return target == ErrAmbiguous }

// FindElement takes a snapshot of src as q asks and finds the element the
// target phrase words means in it. The snapshot is returned whenever one was
// taken. No match, or no snapshot (no accessibility bus, an application that
// exposes no tree), is an error wrapping ErrNotFound, so a Chain asks its
// next step; an ambiguous match wraps ErrAmbiguous and the
// *uitree.MatchError listing the candidates with their refs: the chain asks
// its next step (a model that sees "the OK button of the dialog" may tell
// them apart), and never guesses among them itself.
func FindElement(ctx context.Context, src desktop.ElementSource, q desktop.ElementQuery, words string) (desktop.Element, *desktop.ElementSnapshot, string, error) {
	if src == nil {
		return desktop.Element{}, nil, "", elementMiss{errors.New("no element source")}
	}
	snap, err := src.Elements(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return desktop.Element{}, nil, "", err
		}
		return desktop.Element{}, nil, "", elementMiss{fmt.Errorf("no snapshot: %w", err)}
	}
	e, how, err := uitree.Find(snap.Elements, words)
	var me *uitree.MatchError
	switch {
	case errors.As(err, &me) && !me.Ambiguous:
		return desktop.Element{}, snap, "", elementMiss{err}
	case errors.As(err, &me):
		return desktop.Element{}, snap, "", elementAmbiguous{err}
	case err != nil:
		return desktop.Element{}, snap, "", err
	}
	return e, snap, how, nil
}
