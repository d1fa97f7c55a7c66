package flow

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/flow/flowtest"
)

// TestGroupsAndPointerKinds: the kinds flows built in Go use act at the
// located element (a right click with the right button, a double click
// with two presses, a hover with no press); a failed step of a group that
// continues on error skips the rest of that group only, and a locate's
// data is its rectangle and centre in screen pixels.
func TestGroupsAndPointerKinds(t *testing.T) {
	b := fakeDesk(t) // the Submit button at (360,470) 200x64
	f := &Flow{Name: "groups", Steps: []Step{
		{Kind: Group, Target: "pointer"},
		{Kind: RightClick, Target: "the Submit button"},
		{Kind: DoubleClick, Target: "the Submit button"},
		{Kind: Hover, Target: "the Submit button"},
		{Kind: Locate, Target: "the Submit button"},
		{Kind: Group, Target: "optional", ContinueOnError: true},
		{Kind: Assert, Text: "the OK button is visible", ContinueOnError: true, Extra: &Extra{ErrorMessage: "no OK"}},
		{Kind: Click, Target: "the Submit button", ContinueOnError: true},
		{Kind: Group, Target: "after"},
		{Kind: Record, Target: "the end", Text: "a note"},
	}}
	for i := range f.Steps {
		f.Steps[i].Index = i + 1
	}
	res := fakeRunner(t, b, &flowtest.ColorSeer{}, nil, nil).Run(context.Background(), f, nil, nil)
	if res.Status != Passed {
		t.Fatalf("%s: %s", res.Status, res.Summary)
	}
	var ran []string
	for _, s := range res.Steps {
		ran = append(ran, string(s.Kind)+":"+s.Status)
	}
	if got := strings.Join(ran, " "); got != "group:passed right_click:passed double_click:passed hover:passed locate:passed group:passed assert:failed group:passed record:passed" {
		t.Fatalf("steps %s", got)
	}
	if e := res.Steps[6].Error; !strings.Contains(e, "no OK") {
		t.Fatalf("assert error %q", e)
	}
	var downs []desktop.Button
	moved := 0
	for _, ev := range b.Events() {
		if ev.Op == fake.OpButtonDown {
			downs = append(downs, ev.Button)
			if ev.At.X < 360 || ev.At.X > 560 || ev.At.Y < 470 || ev.At.Y > 534 {
				t.Errorf("pressed at %v, outside the button", ev.At)
			}
		}
		if ev.Op == fake.OpMove {
			moved++
		}
	}
	if len(downs) != 3 || downs[0] != desktop.Right || downs[1] != desktop.Left || downs[2] != desktop.Left || moved < 3 {
		t.Fatalf("presses %v, %d moves: want right, then two lefts, and the hover's move", downs, moved)
	}
	var d LocateData
	if err := json.Unmarshal(res.Steps[4].Data, &d); err != nil {
		t.Fatalf("locate data %s: %v", res.Steps[4].Data, err)
	}
	if d.Rect.Left < 358 || d.Rect.Left > 362 || d.Rect.Width < 196 || d.Rect.Width > 204 || d.Center[0] < 440 || d.Center[0] > 480 {
		t.Fatalf("locate data %+v", d)
	}
}

// TestBrowserKindsNeedTheirBackend: navigate, launch, evaluate and
// set_cookies on a desktop without pages or apps fail saying which
// backend they need.
func TestBrowserKindsNeedTheirBackend(t *testing.T) {
	b := fakeDesk(t)
	for _, st := range []Step{
		{Kind: Navigate, Target: "https://example.com"},
		{Kind: Launch, Target: "com.android.settings"},
		{Kind: Evaluate, Text: "document.title"},
		{Kind: SetCookies, Target: "c.json"},
	} {
		st.Index = 1
		res := fakeRunner(t, b, nil, nil, nil).Run(context.Background(), &Flow{Name: "x", Steps: []Step{st}}, nil, nil)
		if res.Status != Failed || !strings.Contains(res.Summary, "--backend") {
			t.Errorf("%s: %s %s", st.Kind, res.Status, res.Summary)
		}
	}
}
