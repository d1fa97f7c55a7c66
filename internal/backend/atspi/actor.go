package atspi

import (
	"context"
	"fmt"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/desktop"
)

// The element actor: acting on an element of a snapshot (its Handle: the
// application's bus name and the object's path) through AT-SPI2's
// EditableText, Text and Action interfaces, not through input.

const (
	ifaceEditable = "org.a11y.atspi.EditableText"
	ifaceAction   = "org.a11y.atspi.Action"
)

var _ desktop.ElementActor = (*Client)(nil)

// object returns where calls to the element with handle h go.
func (c *Client) object(ctx context.Context, h string) (peer, dbus.ObjectPath, error) {
	i := strings.Index(h, "/")
	if i <= 0 {
		return peer{}, "", fmt.Errorf("element handle %q is not an AT-SPI object (bus name and path): take a new snapshot", h)
	}
	conn, err := c.bus(ctx)
	if err != nil {
		return peer{}, "", err
	}
	return c.peerOf(ctx, conn, h[:i]), dbus.ObjectPath(h[i:]), nil
}

// invoke calls member of iface on the element and stores its reply in out.
// An element without the interface gives an error wrapping
// desktop.ErrUnsupported.
func (c *Client) invoke(ctx context.Context, h, iface, member string, out any, args ...any) error {
	p, path, err := c.object(ctx, h)
	if err != nil {
		return err
	}
	call, err := p.do(ctx, c.o.CallTimeout, path, iface, member, args...)
	switch {
	case err != nil && unknownMethod(err):
		return fmt.Errorf("the element offers no %s: %w", strings.TrimPrefix(iface, "org.a11y.atspi."), desktop.ErrUnsupported)
	case err != nil:
		return fmt.Errorf("%s.%s: %w", strings.TrimPrefix(iface, "org.a11y.atspi."), member, err)
	}
	return call.Store(out)
}

// SetText replaces the element's whole text (EditableText.SetTextContents).
func (c *Client) SetText(ctx context.Context, handle, text string) error {
	var ok bool
	if err := c.invoke(ctx, handle, ifaceEditable, "SetTextContents", &ok, text); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("the application refused to set the element's text (a read-only field?)")
	}
	return nil
}

// Text reads the element's whole text (Text.GetText from 0 to the end).
func (c *Client) Text(ctx context.Context, handle string) (string, error) {
	var s string
	err := c.invoke(ctx, handle, ifaceText, "GetText", &s, int32(0), int32(-1))
	return s, err
}

// Press performs the element's first action (Action.DoAction(0): press,
// click, activate).
func (c *Client) Press(ctx context.Context, handle string) error {
	var ok bool
	if err := c.invoke(ctx, handle, ifaceAction, "DoAction", &ok, int32(0)); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("the application did not perform the element's action")
	}
	return nil
}
