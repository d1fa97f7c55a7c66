package desktop_test

import (
	"context"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

// embedded wraps the fake by embedding it, as the agent's tests do.
type embedded struct{ *fake.Backend }

// field wraps a Screen in a field and says so through Unwrap.
type field struct{ s desktop.Screen }

func (f field) Name() string                                         { return "wrapped " + f.s.Name() }
func (f field) DisplayName() string                                  { return f.s.DisplayName() }
func (f field) Displays(ctx context.Context) ([]geom.Display, error) { return f.s.Displays(ctx) }
func (f field) Close() error                                         { return f.s.Close() }
func (f field) Unwrap() desktop.Screen                               { return f.s }
func (f field) Capture(ctx context.Context, r geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	return f.s.Capture(ctx, r, dst)
}

// opaque wraps a Screen in a field and does not say so: its capabilities are lost.
type opaque struct{ s desktop.Screen }

func (o opaque) Name() string                                         { return o.s.Name() }
func (o opaque) DisplayName() string                                  { return o.s.DisplayName() }
func (o opaque) Displays(ctx context.Context) ([]geom.Display, error) { return o.s.Displays(ctx) }
func (o opaque) Close() error                                         { return o.s.Close() }
func (o opaque) Capture(ctx context.Context, r geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	return o.s.Capture(ctx, r, dst)
}

// gated has the Elements method but no source attached.
type gated struct{ *fake.Backend }

func (gated) ElementsAvailable() bool { return false }

func TestElementsOfSurvivesWrapping(t *testing.T) {
	b := fake.New(fake.Options{})
	b.SetElements([]desktop.Element{{Role: desktop.RoleWindow, Name: "Fake Window", Box: geom.Rect{W: 100, H: 100}}})
	for _, c := range []struct {
		name string
		s    desktop.Screen
		want bool
	}{
		{"the fake", b, true},
		{"embedding wrapper", embedded{b}, true},
		{"field wrapper with Unwrap", field{b}, true},
		{"two wrappers", field{embedded{b}}, true},
		{"gated backend without a source", gated{b}, false},
		{"wrapper that hides the backend", opaque{b}, false},
	} {
		src, ok := desktop.ElementsOf(c.s)
		if ok != c.want {
			t.Errorf("%s: ElementsOf found=%v, want %v", c.name, ok, c.want)
			continue
		}
		if !ok {
			continue
		}
		snap, err := src.Elements(context.Background(), desktop.ElementQuery{})
		if err != nil || len(snap.Elements) != 1 || snap.Elements[0].Name != "Fake Window" {
			t.Errorf("%s: Elements = %+v, %v", c.name, snap, err)
		}
		if !desktop.CapabilitiesOf(context.Background(), c.s).Elements {
			t.Errorf("%s: CapabilitiesOf does not report elements", c.name)
		}
	}
}

func TestElementQueryNormalize(t *testing.T) {
	q, err := desktop.ElementQuery{}.Normalize()
	if err != nil || q.Scope != desktop.ScopeFocused || q.MaxElements != desktop.DefaultMaxElements ||
		q.Budget != desktop.DefaultBudget || q.MaxDepth != desktop.DefaultMaxDepth {
		t.Errorf("zero query normalized to %+v, %v", q, err)
	}
	for _, c := range []struct {
		q    desktop.ElementQuery
		want string
	}{
		{desktop.ElementQuery{MaxElements: desktop.MaxElementsCap + 1}, "max_elements 5001 is over the cap 5000"},
		{desktop.ElementQuery{MaxDepth: -1}, "max_depth -1 is negative"},
		{desktop.ElementQuery{Budget: time.Minute}, "budget 60000 is over the cap 10000"},
		{desktop.ElementQuery{Scope: "window"}, `unknown scope "window": use focused, all or app`},
		{desktop.ElementQuery{Scope: desktop.ScopeApp}, "needs the application's name"},
	} {
		if _, err := c.q.Normalize(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Normalize(%+v) = %v, want an error containing %q", c.q, err, c.want)
		}
	}
}

func TestFakeElements(t *testing.T) {
	b := fake.New(fake.Options{Displays: []geom.Display{{Bounds: geom.Rect{W: 800, H: 600}}}})
	b.SetActiveWindow("Form")
	b.SetElements([]desktop.Element{
		{Depth: 0, PlatformRole: "frame", Name: "Other", App: "other", Box: geom.Rect{W: 300, H: 300}},
		{Depth: 1, PlatformRole: "push button", Name: "Elsewhere", App: "other", Box: geom.Rect{X: 10, Y: 10, W: 50, H: 20}},
		{Depth: 0, PlatformRole: "frame", Name: "Form", App: "form", Box: geom.Rect{W: 400, H: 300}},
		{Depth: 1, PlatformRole: "filler", App: "form", Box: geom.Rect{W: 400, H: 300}},
		{Depth: 2, PlatformRole: "label", Name: "Name", App: "form", Box: geom.Rect{X: 10, Y: 10, W: 50, H: 20}},
		{Depth: 2, PlatformRole: "text", App: "form", States: desktop.States{Editable: true, Enabled: true}, Box: geom.Rect{X: 70, Y: 8, W: 200, H: 24}},
		{Depth: 2, PlatformRole: "push button", Name: "Off screen", App: "form", Box: geom.Rect{X: 900, Y: 10, W: 50, H: 20}},
		{Depth: 2, PlatformRole: "push button", Name: "Half on", App: "form", Box: geom.Rect{X: 780, Y: 10, W: 50, H: 20}},
	})
	snap, err := b.Elements(context.Background(), desktop.ElementQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range snap.Elements {
		got = append(got, e.Ref+":"+string(e.Role)+":"+e.Name+":"+e.Parent)
	}
	want := "e1:window:Form: e2:text:Name:e1 e3:textbox:Name:e1 e4:button:Half on:e1"
	if strings.Join(got, " ") != want {
		t.Errorf("focused window elements\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if e, _ := snap.Lookup("e4"); e.Box != (geom.Rect{X: 780, Y: 10, W: 20, H: 20}) {
		t.Errorf("half-visible button box %v, want it clipped to the screen", e.Box)
	}
	if e, _ := snap.Lookup("e3"); e.NameFrom != desktop.NameFromLabel {
		t.Errorf("unnamed field name_from %q, want label", e.NameFrom)
	}
	all, _ := b.Elements(context.Background(), desktop.ElementQuery{Scope: desktop.ScopeAll, MaxElements: 3})
	if !all.Truncated || all.TruncatedBy != "max_elements" || len(all.Elements) != 3 {
		t.Errorf("max_elements 3 of all windows: %d elements, truncated=%v by %q", len(all.Elements), all.Truncated, all.TruncatedBy)
	}
	app, _ := b.Elements(context.Background(), desktop.ElementQuery{Scope: desktop.ScopeApp, App: "OTHER"})
	if len(app.Elements) != 2 || app.Elements[1].Name != "Elsewhere" {
		t.Errorf("scope app OTHER: %+v", app.Elements)
	}
	b.FailNext(fake.OpElements, errors.New("bus gone"))
	if _, err := b.Elements(context.Background(), desktop.ElementQuery{}); err == nil || err.Error() != "bus gone" {
		t.Errorf("injected failure: %v", err)
	}
}
