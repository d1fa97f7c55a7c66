//go:build linux

package atspi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/atspi/atspitest"
	"github.com/guiagent/guiagent/internal/desktop"
)

// TestActor: on the GTK form, Text reads an entry, SetText replaces it (read
// back by the next snapshot too), a button offers no EditableText
// (ErrUnsupported), and Press runs a button's action.
func TestActor(t *testing.T) {
	s := newSession(t, atspi.ModeAuto)
	atspitest.Start(t, s.display, s.bus, "ready", atspitest.FormApp()...)
	snap := s.waitFor(t, desktop.ElementQuery{}, `a "Save" button`, hasName("Save"))
	ctx := context.Background()
	email := find(t, snap, "Email field")
	if got, err := s.c.Text(ctx, email.Handle); err != nil || got != "ada@example.org" {
		t.Fatalf("Text of the Email field: %q, %v", got, err)
	}
	if err := s.c.SetText(ctx, email.Handle, "grace@example.org"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.c.Text(ctx, email.Handle); err != nil || got != "grace@example.org" {
		t.Errorf("Text after SetText: %q, %v", got, err)
	}
	s.waitFor(t, desktop.ElementQuery{}, "the new address", func(sn *desktop.ElementSnapshot) bool {
		for _, e := range sn.Elements {
			if e.Value == "grace@example.org" {
				return true
			}
		}
		return false
	})
	save := find(t, snap, "Save button")
	if err := s.c.SetText(ctx, save.Handle, "x"); !errors.Is(err, desktop.ErrUnsupported) {
		t.Errorf("SetText on a button: %v, want ErrUnsupported", err)
	}
	if err := s.c.SetText(ctx, "nonsense", "x"); err == nil {
		t.Error("SetText on a bad handle succeeded")
	}
}

// TestActorPress presses the rows window's Ping button through Action.
func TestActorPress(t *testing.T) {
	s := newSession(t, atspi.ModeAuto)
	atspitest.Start(t, s.display, s.bus, "ready", atspitest.FormApp("--rows", "3")...)
	snap := s.waitFor(t, desktop.ElementQuery{}, "the Ping button", hasName("Ping 0"))
	if err := s.c.Press(context.Background(), find(t, snap, "Ping 0").Handle); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, desktop.ElementQuery{}, "the press counted", hasName("Ping 1"))
}
