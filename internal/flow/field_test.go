package flow

import (
	"context"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/flow/flowtest"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

func TestTypesInto(t *testing.T) {
	f := mustParse(t, `name: kinds
steps:
  - click: the Submit button
  - type: {target: the Name box, text: x}
  - click: Email
  - type: {text: y}
  - click: Email
  - locate: the City field
  - locate: the OK button
  - click: the search input
  - click: the Go button
  - type: {text: z}
  - drag: {from: the Name field, to: the City field}
`, nil)
	ru := &run{f: f}
	// "Email" has no role word: a field when a type step without a target
	// follows its click; a drag does not type into either end.
	want := []bool{false, true, true, false, false, true, false, true, false, false, false}
	for i, st := range f.Steps {
		if st.Kind == Type && st.Target == "" {
			continue
		}
		if got := ru.typesInto(st, "", st.Target); got != want[i] {
			t.Errorf("step %d (%s): typesInto %v, want %v", st.Index, st.Describe(), got, want[i])
		}
	}
	if ru.typesInto(f.Steps[1], "to", f.Steps[1].Target) {
		t.Error("a role other than the target's is a field")
	}
}

// formDesk is a fake desktop showing the sample form's Name field (its
// colour) with a label left of it; text paints bars inside it.
func formDesk(t *testing.T, label int, text int, dx, dy int) *fake.Backend {
	t.Helper()
	b := fake.New(fake.Options{Displays: []geom.Display{{Bounds: geom.Rect{W: 1280, H: 800}}}, Background: color.RGBA{220, 220, 220, 255}})
	for i := range 5 {
		x := 250 + dx + i*8 + (label*(i+1))%3
		b.Fill(geom.Rect{X: x, Y: 180 + dy, W: 3, H: 14}, color.RGBA{0, 0, 0, 255})
	}
	b.Fill(geom.Rect{X: 360 + dx, Y: 160 + dy, W: 560, H: 56}, sampleapp.NameFieldColor.ToRGBA())
	for i := range text {
		b.Fill(geom.Rect{X: 372 + dx + i*8, Y: 178 + dy, W: 4, H: 18}, color.RGBA{0, 0, 0, 255})
	}
	return b
}

// TestFieldCacheReplaysWhateverTheFieldHolds: a type step's entry is a field
// fingerprint (kind, hole and label in the file, the hole transparent); it
// replays with text in the field and after a move, refuses another label,
// and an entry edited so that its hole leaves nothing to verify is ignored.
func TestFieldCacheReplaysWhateverTheFieldHolds(t *testing.T) {
	f := mustParse(t, "name: f\nsteps:\n  - type: {target: the Name field, text: Ada, mode: replace}\n", nil)
	path := filepath.Join(t.TempDir(), "f.cache.yaml")
	runOn := func(b *fake.Backend) Result {
		t.Helper()
		c, err := OpenCache(path, ReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		res := fakeRunner(t, b, &flowtest.ColorSeer{}, nil, nil).Run(context.Background(), f, nil, c)
		if res.Status != Passed {
			t.Fatalf("%s: %s", res.Status, res.Summary)
		}
		return res
	}
	if res := runOn(formDesk(t, 1, 0, 0, 0)); res.ModelCalls != 1 {
		t.Fatalf("first run: %d model calls", res.ModelCalls)
	}
	y, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fingerprint_kind: field", "fingerprint_hole: [", "fingerprint_label: ["} {
		if !strings.Contains(string(y), want) {
			t.Errorf("the cache lacks %q:\n%s", want, y)
		}
	}
	e := readCache(t, path).Entries[0]
	fp, err := e.fingerprint()
	if err != nil {
		t.Fatal(err)
	}
	if p := fp.Pix.RGBAAt(fp.Hole.Min.X-fp.Rect.Min.X+20, fp.Hole.Min.Y-fp.Rect.Min.Y+20); p.A != 0 {
		t.Errorf("the field's inside is kept in the cache: %v", p)
	}
	for _, c := range []struct {
		name      string
		b         *fake.Backend
		calls     int
		cacheUsed string
	}{
		{"text in the field", formDesk(t, 1, 6, 0, 0), 0, CacheHit},
		{"moved, other text", formDesk(t, 1, 3, 120, 75), 0, CacheMoved},
		{"another label", formDesk(t, 2, 6, 0, 0), 1, CacheMiss},
	} {
		if res := runOn(c.b); res.ModelCalls != c.calls || res.Steps[0].Cache != c.cacheUsed {
			t.Errorf("%s: %d model calls, cache %q; want %d, %q", c.name, res.ModelCalls, res.Steps[0].Cache, c.calls, c.cacheUsed)
		}
		if c.calls == 0 { // the move is cached: start the next case from the field's first place
			runOn(formDesk(t, 1, 0, 0, 0))
		}
	}
	// An entry whose hole is its whole place verifies nothing.
	runOn(formDesk(t, 1, 0, 0, 0))
	c := readCache(t, path)
	c.Entries[0].FingerprintHole = c.Entries[0].FingerprintRect
	c.Entries[0].FingerprintLabel = [4]int{}
	if _, err := c.Entries[0].fingerprint(); err == nil || !strings.Contains(err.Error(), "to verify") {
		t.Errorf("a hole over the whole place: %v", err)
	}
	c.Entries[0].FingerprintKind = "fuzzy"
	if _, err := c.Entries[0].fingerprint(); err == nil {
		t.Error("an unknown fingerprint kind was accepted")
	}
}
