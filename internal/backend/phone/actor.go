package phone

import (
	"context"
	"fmt"
	"image"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Actor is a phone backend's element actor (Press, Text and SetText of
// desktop.ElementActor) on a tree it reads anew for each call: what the
// three phones share, with what each does its own way as functions.
type Actor struct {
	// System names the backend in the error of a string that is not a
	// Handle ("an android").
	System string
	// Read reads the tree.
	Read func(ctx context.Context) ([]*Node, error)
	// Role is the backend's RoleOf.
	Role func(*Node) desktop.Role
	// Tap touches p (device pixels).
	Tap func(ctx context.Context, p image.Point) error
	// Replace taps the text field n at c and puts text in place of its
	// text.
	Replace func(ctx context.Context, c image.Point, n *Node, text string) error
}

func (a Actor) find(ctx context.Context, handle string) (*Node, error) {
	roots, err := a.Read(ctx)
	if err != nil {
		return nil, err
	}
	return Lookup(roots, handle)
}

// Press taps the element's centre.
func (a Actor) Press(ctx context.Context, handle string) error {
	c, err := HandleCentre(handle, a.System)
	if err != nil {
		return err
	}
	return a.Tap(ctx, c)
}

// Text reads an element's text from a new tree (textOf: never a password
// field's).
func (a Actor) Text(ctx context.Context, handle string) (string, error) {
	n, err := a.find(ctx, handle)
	if err != nil {
		return "", err
	}
	return textOf(n)
}

// SetText replaces a text field's text and reads the field back from a new
// tree (a password field's text cannot be read back).
func (a Actor) SetText(ctx context.Context, handle, text string) error {
	c, err := HandleCentre(handle, a.System)
	if err != nil {
		return err
	}
	n, err := a.find(ctx, handle)
	if err != nil {
		return err
	}
	if a.Role(n) != desktop.RoleTextbox {
		return fmt.Errorf("%s is not a text field: %w", n.Class, desktop.ErrUnsupported)
	}
	if err := a.Replace(ctx, c, n, text); err != nil {
		return err
	}
	if n.Password {
		return nil
	}
	return readBack(ctx, a.find, handle, text)
}
