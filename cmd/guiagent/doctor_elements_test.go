package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/wayland"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

type row struct{ level, name, detail, fix string }

func collect(rows *[]row) func(level, name, detail, fix string) {
	return func(level, name, detail, fix string) { *rows = append(*rows, row{level, name, detail, fix}) }
}

// noElements is a screen without an element source.
type noElements struct{ desktop.Screen }

func TestDoctorElementTree(t *testing.T) {
	ctx := context.Background()
	b := fake.New(fake.Options{})
	b.SetElements([]desktop.Element{
		{Depth: 0, Role: desktop.RoleWindow, Name: "Form", Box: geom.Rect{W: 400, H: 300}},
		{Depth: 1, Role: desktop.RoleButton, Name: "OK", Box: geom.Rect{X: 10, Y: 10, W: 80, H: 30}},
	})
	var rows []row
	checkElements(ctx, b, collect(&rows))
	if len(rows) != 1 || rows[0].level != "ok" || !strings.Contains(rows[0].detail, "fake: 2 elements") {
		t.Errorf("a working source: %+v", rows)
	}

	rows = nil
	b.FailNext(fake.OpElements, errors.New("grant Accessibility to guiagent"))
	checkElements(ctx, b, collect(&rows))
	if len(rows) != 1 || rows[0].level != "warn" || !strings.Contains(rows[0].detail, "grant Accessibility") {
		t.Errorf("a failing source: %+v", rows)
	}

	rows = nil
	checkElements(ctx, noElements{b}, collect(&rows))
	if len(rows) != 1 || rows[0].level != "warn" || !strings.Contains(rows[0].fix, "GUI_AGENT_ACCESSIBILITY=auto") {
		t.Errorf("no source: %+v", rows)
	}

	// GNOME and KDE through the portal: the compositor does not say where
	// windows are, and no setting changes that.
	rows = nil
	checkElements(ctx, named{noElements{b}, "portal"}, collect(&rows))
	if len(rows) != 1 || rows[0].level != "warn" || !strings.Contains(rows[0].detail, "do not tell a client where windows are") || rows[0].fix != "" {
		t.Errorf("the portal backend: %+v", rows)
	}
	// The Wayland backend on a wlroots compositor without such an IPC.
	rows = nil
	checkElements(ctx, unplaced{noElements{b}}, collect(&rows))
	if len(rows) != 1 || rows[0].level != "warn" || !strings.Contains(rows[0].detail, "river does not tell") || rows[0].fix != "" {
		t.Errorf("a compositor that does not place windows: %+v", rows)
	}
}

// named is a screen by another name.
type named struct {
	desktop.Screen
	name string
}

func (n named) Name() string { return n.name }

// unplaced is a screen that says why it has no element source, as the
// Wayland backend does on river.
type unplaced struct{ desktop.Screen }

func (unplaced) WhyNoElements() string { return wayland.NoPlacer("river") }
