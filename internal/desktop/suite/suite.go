package suite

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// eventTimeout bounds how long the suite waits for the application to see input.
const eventTimeout = 5 * time.Second

// Run runs every conformance subtest. newHarness is called once per subtest with
// that subtest's t and must return a started backend plus its observer; it
// registers its own cleanup with t.Cleanup. Harness.Events must return what
// arrived when its timeout passes, not fail the test: the suite decides.
//
// The suite drives the backend through desktop.Input, as the product does.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"Displays", testDisplays},
		{"CaptureFill", testCaptureFill},
		{"CaptureReusesBuffer", testCaptureReuse},
		{"MoveThenCursorPosition", testMove},
		{"Click", testClick},
		{"DoubleClick", testDoubleClick},
		{"ModifierClick", testModifierClick},
		{"Drag", testDrag},
		{"Scroll", testScroll},
		{"Hotkey", testHotkey},
		{"TypeASCII", typeTest("The quick brown fox, 42!")},
		{"TypeUnicode", typeTest("Grüße 世界 ✓ 42")},
		{"TypeLongMixed", typeTest(longMixedText)},
		{"Clipboard", testClipboard},
		{"CancelMidAction", testCancelMidAction},
	}
	var except map[string]string
	for _, tc := range tests {
		if reason, ok := except[tc.name]; ok {
			t.Logf("%s: not run on this backend: %s", tc.name, reason)
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if e, ok := h.(Excepter); ok && except == nil {
				except = e.Except()
				if reason, ok := except[tc.name]; ok {
					t.Logf("not run on this backend: %s", reason)
					return
				}
			}
			if h == nil || h.Screen() == nil {
				t.Fatal("newHarness returned no harness or no screen: start the backend before returning")
			}
			tc.fn(t, h)
		})
	}
}

// longMixedText is 120 characters of letters, digits, punctuation, spaces and
// non-ASCII text, the kind of input that breaks keymap-based typing.
var longMixedText = func() string {
	s := "Invoice #2024-117: Müller & Søn paid €1,250.75 (due 31/12); ping ops@example.org ~ [ok] {ref:A9} 東京 ✓ ünïcödé | 99% <ok>"
	r := []rune(s)
	if len(r) != 120 {
		panic(fmt.Sprintf("suite: long text has %d runes, want 120", len(r)))
	}
	return s
}()

// ctx returns a context bounded for one subtest.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func input(t *testing.T, h Harness) *desktop.Input {
	t.Helper()
	s := h.Screen()
	if _, ok := s.(desktop.Pointer); !ok {
		t.Fatalf("backend %q does not implement desktop.Pointer: every backend must inject pointer input", s.Name())
	}
	if _, ok := s.(desktop.Keyboard); !ok {
		t.Fatalf("backend %q does not implement desktop.Keyboard: every backend must inject key input", s.Name())
	}
	in := desktop.NewInput(s)
	t.Cleanup(func() { _ = in.ReleaseAll() })
	return in
}

func displays(t *testing.T, h Harness) []geom.Display {
	t.Helper()
	ds, err := h.Screen().Displays(testCtx(t))
	if err != nil {
		t.Fatalf("Displays: %v", err)
	}
	if len(ds) == 0 {
		t.Fatal("Displays returned no display")
	}
	return ds
}

func primary(t *testing.T, h Harness) geom.Display {
	t.Helper()
	d, err := geom.FindDisplay(displays(t, h), "")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// at returns the point at fractions fx, fy of display d.
func at(d geom.Display, fx, fy float64) geom.GlobalPoint {
	return geom.GlobalPoint{X: d.Bounds.X + int(float64(d.Bounds.W)*fx), Y: d.Bounds.Y + int(float64(d.Bounds.H)*fy)}
}

// collect gathers events until cond holds for all gathered so far or the timeout passes.
func collect(t *testing.T, h Harness, timeout time.Duration, cond func([]Received) bool) []Received {
	t.Helper()
	var evs []Received
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return evs
		}
		evs = append(evs, h.Events(t, 1, min(left, 250*time.Millisecond))...)
		if cond(evs) {
			return evs
		}
	}
}

// only returns the events of the given kinds.
func only(evs []Received, kinds ...string) []Received {
	var out []Received
	for _, e := range evs {
		if slices.Contains(kinds, e.Kind) {
			out = append(out, e)
		}
	}
	return out
}

func format(evs []Received) string {
	var b strings.Builder
	for i, e := range evs {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(e.Kind)
		switch {
		case strings.HasPrefix(e.Kind, "button"):
			fmt.Fprintf(&b, "(%s)%v", e.Button, e.At)
		case strings.HasPrefix(e.Kind, "key"):
			fmt.Fprintf(&b, "(%s)", e.Key)
		case e.Kind == "scroll":
			fmt.Fprintf(&b, "(%s)%v", e.Direction, e.At)
		default:
			b.WriteString(e.At.String())
		}
		if len(e.Modifiers) > 0 {
			fmt.Fprintf(&b, "%v", e.Modifiers)
		}
	}
	return b.String()
}

func testDisplays(t *testing.T, h Harness) {
	ds := displays(t, h)
	ids := map[string]bool{}
	primaries := 0
	for i, d := range ds {
		if d.ID == "" {
			t.Errorf("display %d has an empty ID", i)
		}
		if ids[d.ID] {
			t.Errorf("display ID %q appears twice", d.ID)
		}
		ids[d.ID] = true
		if d.Bounds.Empty() {
			t.Errorf("display %q has empty bounds %v", d.ID, d.Bounds)
		}
		if d.Scale < 0 || d.ScaleFactor() < 0.5 || d.ScaleFactor() > 4 {
			t.Errorf("display %q has implausible scale %v", d.ID, d.Scale)
		}
		if d.Primary {
			primaries++
			if d.Bounds.X != 0 || d.Bounds.Y != 0 {
				t.Errorf("primary display %q is at %v; global coordinates have their origin at the primary display's top-left", d.ID, d.Bounds)
			}
		}
		for _, o := range ds[:i] {
			if !d.Bounds.Intersect(o.Bounds).Empty() {
				t.Errorf("displays %q %v and %q %v overlap", o.ID, o.Bounds, d.ID, d.Bounds)
			}
		}
	}
	if primaries != 1 {
		t.Errorf("%d displays are marked primary, want exactly 1: %+v", primaries, ds)
	}
}

// near reports whether two colours match within a small tolerance per channel.
func near(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return max(x, y)-min(x, y) <= 8 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
}

func rgbaAt(img *image.RGBA, x, y int) color.RGBA {
	return img.RGBAAt(img.Rect.Min.X+x, img.Rect.Min.Y+y)
}

var displayColours = []color.RGBA{
	{R: 220, G: 30, B: 40, A: 255},
	{R: 30, G: 200, B: 60, A: 255},
	{R: 40, G: 60, B: 230, A: 255},
	{R: 230, G: 200, B: 20, A: 255},
}

var background = color.RGBA{R: 128, G: 128, B: 128, A: 255}

// checkFill verifies that img (a capture of region on display d at physical
// resolution) shows fill (global logical pixels) in colour c and the background
// just around it.
func checkFill(t *testing.T, d geom.Display, region, fill geom.Rect, img *image.RGBA, c color.RGBA) {
	t.Helper()
	s := d.ScaleFactor()
	ps := geom.Size{W: int(float64(region.W)*s + 0.5), H: int(float64(region.H)*s + 0.5)}
	if b := img.Bounds(); b.Min != (image.Point{}) || abs(b.Dx()-ps.W) > 1 || abs(b.Dy()-ps.H) > 1 {
		t.Fatalf("display %q: capture of %v at scale %v has bounds %v, want (0,0)-(%d,%d) physical pixels", d.ID, region, s, b, ps.W, ps.H)
	}
	// Physical pixel span of the fill inside the captured image.
	x0, x1 := float64(fill.X-region.X)*s, float64(fill.X+fill.W-region.X)*s
	y0, y1 := float64(fill.Y-region.Y)*s, float64(fill.Y+fill.H-region.Y)*s
	inside := []image.Point{
		{int(x0) + 2, int(y0) + 2}, {int(x1) - 3, int(y0) + 2}, {int(x0) + 2, int(y1) - 3},
		{int(x1) - 3, int(y1) - 3}, {int((x0 + x1) / 2), int((y0 + y1) / 2)},
	}
	outside := []image.Point{
		{int(x0) - 3, int((y0 + y1) / 2)}, {int(x1) + 2, int((y0 + y1) / 2)},
		{int((x0 + x1) / 2), int(y0) - 3}, {int((x0 + x1) / 2), int(y1) + 2},
	}
	for _, p := range inside {
		if got := rgbaAt(img, p.X, p.Y); !near(got, c) {
			t.Errorf("display %q (scale %v): physical pixel %v of capture %v is %v, want the filled colour %v (fill %v)", d.ID, s, p, region, got, c, fill)
		}
	}
	for _, p := range outside {
		if got := rgbaAt(img, p.X, p.Y); !near(got, background) {
			t.Errorf("display %q (scale %v): physical pixel %v of capture %v is %v, want the background %v just outside fill %v", d.ID, s, p, region, got, background, fill)
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func testCaptureFill(t *testing.T, h Harness) {
	ctx := testCtx(t)
	ds := displays(t, h)
	for i, d := range ds {
		c := displayColours[i%len(displayColours)]
		o := geom.GlobalPoint{X: d.Bounds.X, Y: d.Bounds.Y}
		region := geom.Rect{X: o.X + 40, Y: o.Y + 30, W: 240, H: 160}
		fill := geom.Rect{X: o.X + 100, Y: o.Y + 70, W: 90, H: 50}
		h.Fill(t, region, background)
		h.Fill(t, fill, c)
		img, err := h.Screen().Capture(ctx, region, nil)
		if err != nil {
			t.Fatalf("Capture(%v) on display %q: %v", region, d.ID, err)
		}
		checkFill(t, d, region, fill, img, c)

		// The whole display: its physical size, the fill at its physical place.
		full, err := h.Screen().Capture(ctx, d.Bounds, nil)
		if err != nil {
			t.Fatalf("Capture(%v) of all of display %q: %v", d.Bounds, d.ID, err)
		}
		checkFill(t, d, d.Bounds, fill, full, c)
	}
}

func testCaptureReuse(t *testing.T, h Harness) {
	ctx := testCtx(t)
	d := primary(t, h)
	region := geom.Rect{X: d.Bounds.X + 50, Y: d.Bounds.Y + 50, W: 160, H: 120}
	fill := geom.Rect{X: region.X + 40, Y: region.Y + 30, W: 60, H: 40}
	h.Fill(t, region, background)
	h.Fill(t, fill, displayColours[2])
	s := d.ScaleFactor()
	big := image.NewRGBA(image.Rect(0, 0, int(float64(region.W)*s)+64, int(float64(region.H)*s)+64))
	out, err := h.Screen().Capture(ctx, region, big)
	if err != nil {
		t.Fatalf("Capture into a large dst: %v", err)
	}
	if len(out.Pix) == 0 || &out.Pix[0] != &big.Pix[0] {
		t.Errorf("Capture(%v) into a %v dst allocated a new buffer; it must reuse dst when dst is large enough", region, big.Bounds())
	}
	checkFill(t, d, region, fill, out, displayColours[2])

	small := image.NewRGBA(image.Rect(0, 0, 8, 8))
	out2, err := h.Screen().Capture(ctx, region, small)
	if err != nil {
		t.Fatalf("Capture into a too small dst: %v", err)
	}
	checkFill(t, d, region, fill, out2, displayColours[2])
}

func testMove(t *testing.T, h Harness) {
	ctx := testCtx(t)
	in := input(t, h)
	for _, d := range displays(t, h) {
		for _, p := range []geom.GlobalPoint{at(d, 0.25, 0.3), at(d, 0.7, 0.6), {X: d.Bounds.X + 1, Y: d.Bounds.Y + 1}} {
			if err := in.Move(ctx, p); err != nil {
				t.Fatalf("Move(%v) on display %q: %v", p, d.ID, err)
			}
			got, err := in.CursorPosition(ctx)
			if err != nil {
				t.Fatalf("CursorPosition: %v", err)
			}
			if got != p {
				t.Errorf("after Move(%v) on display %q, CursorPosition = %v", p, d.ID, got)
			}
		}
	}
}

// clickPairs checks that evs holds, in order, count (down, up) pairs of b at p.
func clickPairs(evs []Received, p geom.GlobalPoint, b desktop.Button, count int) error {
	btn := only(evs, "button_down", "button_up")
	if len(btn) != 2*count {
		return fmt.Errorf("want %d button events, got %d: %s", 2*count, len(btn), format(evs))
	}
	for i, e := range btn {
		want := "button_down"
		if i%2 == 1 {
			want = "button_up"
		}
		if e.Kind != want || e.Button != b || e.At != p {
			return fmt.Errorf("event %d is %s(%s) at %v, want %s(%s) at %v: %s", i, e.Kind, e.Button, e.At, want, b, p, format(evs))
		}
	}
	return nil
}

func countKinds(n int, kinds ...string) func([]Received) bool {
	return func(evs []Received) bool { return len(only(evs, kinds...)) >= n }
}

func testClick(t *testing.T, h Harness) {
	ctx := testCtx(t)
	in := input(t, h)
	d := primary(t, h)
	for i, b := range []desktop.Button{desktop.Left, desktop.Right, desktop.Middle} {
		h.ResetText(t)
		p := at(d, 0.3+0.1*float64(i), 0.4)
		if err := in.Click(ctx, &p, b, 1, nil); err != nil {
			t.Fatalf("Click(%v, %s): %v", p, b, err)
		}
		evs := collect(t, h, eventTimeout, countKinds(2, "button_down", "button_up"))
		if err := clickPairs(evs, p, b, 1); err != nil {
			t.Errorf("%s click at %v: %v", b, p, err)
		}
	}
}

func testDoubleClick(t *testing.T, h Harness) {
	ctx := testCtx(t)
	in := input(t, h)
	h.ResetText(t)
	p := at(primary(t, h), 0.45, 0.55)
	if err := in.Click(ctx, &p, desktop.Left, 2, nil); err != nil {
		t.Fatalf("double Click(%v): %v", p, err)
	}
	evs := collect(t, h, eventTimeout, countKinds(4, "button_down", "button_up"))
	if err := clickPairs(evs, p, desktop.Left, 2); err != nil {
		t.Errorf("double click at %v: %v", p, err)
	}
}

func testModifierClick(t *testing.T, h Harness) {
	ctx := testCtx(t)
	in := input(t, h)
	d := primary(t, h)
	h.ResetText(t)
	p := at(d, 0.35, 0.45)
	if err := in.Click(ctx, &p, desktop.Left, 1, []desktop.Key{desktop.Ctrl}); err != nil {
		t.Fatalf("ctrl+Click(%v): %v", p, err)
	}
	evs := collect(t, h, eventTimeout, countKinds(2, "button_down", "button_up"))
	btn := only(evs, "button_down", "button_up")
	if err := clickPairs(evs, p, desktop.Left, 1); err != nil {
		t.Fatalf("ctrl+click at %v: %v", p, err)
	}
	if !slices.Contains(btn[0].Modifiers, "ctrl") {
		t.Errorf("ctrl+click: button_down arrived with modifiers %v, want ctrl held: %s", btn[0].Modifiers, format(evs))
	}
	if k, b := in.Held(); len(k)+len(b) > 0 {
		t.Errorf("ctrl+click left keys held in the ledger: %v", heldString(in))
	}
	// The modifier must be released: a plain click now arrives without ctrl.
	h.ResetText(t)
	q := at(d, 0.5, 0.45)
	if err := in.Click(ctx, &q, desktop.Left, 1, nil); err != nil {
		t.Fatalf("Click(%v): %v", q, err)
	}
	evs = collect(t, h, eventTimeout, countKinds(2, "button_down", "button_up"))
	if err := clickPairs(evs, q, desktop.Left, 1); err != nil {
		t.Fatalf("plain click after ctrl+click: %v", err)
	}
	if mods := only(evs, "button_down")[0].Modifiers; len(mods) != 0 {
		t.Errorf("plain click after ctrl+click arrived with modifiers %v: ctrl was not released", mods)
	}
}

func heldString(in *desktop.Input) string {
	k, b := in.Held()
	return fmt.Sprintf("keys %v buttons %v", k, b)
}

func testDrag(t *testing.T, h Harness) {
	ctx := testCtx(t)
	in := input(t, h)
	d := primary(t, h)
	h.ResetText(t)
	from, to := at(d, 0.25, 0.3), at(d, 0.6, 0.55)
	if err := in.Drag(ctx, from, nil, to, desktop.Left); err != nil {
		t.Fatalf("Drag(%v -> %v): %v", from, to, err)
	}
	evs := collect(t, h, eventTimeout, countKinds(1, "button_up"))
	down := slices.IndexFunc(evs, func(e Received) bool { return e.Kind == "button_down" })
	up := slices.IndexFunc(evs, func(e Received) bool { return e.Kind == "button_up" })
	if down < 0 || up < 0 || up < down {
		t.Fatalf("drag: want button_down then button_up, got %s", format(evs))
	}
	if evs[down].At != from || evs[down].Button != desktop.Left {
		t.Errorf("drag: button_down(%s) at %v, want left at %v", evs[down].Button, evs[down].At, from)
	}
	if evs[up].At != to || evs[up].Button != desktop.Left {
		t.Errorf("drag: button_up(%s) at %v, want left at %v", evs[up].Button, evs[up].At, to)
	}
	moved := 0
	for _, e := range evs[down+1 : up] {
		if e.Kind == "motion" && e.At != from {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("drag: no motion between button_down and button_up, applications will not see a drag: %s", format(evs))
	}
	if n := len(only(evs, "button_down")); n != 1 {
		t.Errorf("drag: %d button_down events, want 1: %s", n, format(evs))
	}
}

func testScroll(t *testing.T, h Harness) {
	ctx := testCtx(t)
	in := input(t, h)
	d := primary(t, h)
	for _, dir := range []desktop.Direction{desktop.Up, desktop.Down, desktop.LeftD, desktop.RightD} {
		h.ResetText(t)
		p := at(d, 0.5, 0.5)
		if err := in.Scroll(ctx, &p, dir, 2, nil); err != nil {
			t.Fatalf("Scroll(%v, %s): %v", p, dir, err)
		}
		evs := collect(t, h, eventTimeout, countKinds(1, "scroll"))
		sc := only(evs, "scroll")
		if len(sc) == 0 {
			t.Errorf("scroll %s at %v: no scroll event arrived: %s", dir, p, format(evs))
			continue
		}
		for _, e := range sc {
			if e.Direction != dir || e.At != p {
				t.Errorf("scroll %s at %v arrived as %s at %v", dir, p, e.Direction, e.At)
			}
		}
	}
}

func keyNames(evs []Received) []string {
	var out []string
	for _, e := range evs {
		out = append(out, strings.ToLower(string(e.Key)))
	}
	return out
}

func testHotkey(t *testing.T, h Harness) {
	ctx := testCtx(t)
	in := input(t, h)
	keys, err := desktop.ParseCombo("ctrl+shift+t")
	if err != nil {
		t.Fatal(err)
	}
	h.ResetText(t)
	if err := in.Hotkey(ctx, keys); err != nil {
		t.Fatalf("Hotkey(ctrl+shift+t): %v", err)
	}
	evs := only(collect(t, h, eventTimeout, countKinds(6, "key_down", "key_up")), "key_down", "key_up")
	want := []string{"key_down control_l", "key_down shift_l", "key_down t", "key_up t", "key_up shift_l", "key_up control_l"}
	var got []string
	for i, e := range evs {
		got = append(got, e.Kind+" "+keyNames(evs[i : i+1])[0])
	}
	if !slices.Equal(got, want) {
		t.Errorf("ctrl+shift+t arrived as %q, want %q", got, want)
	}
	if k, b := in.Held(); len(k)+len(b) > 0 {
		t.Errorf("after the hotkey the ledger still holds %v %v", k, b)
	}
}

func typeTest(text string) func(t *testing.T, h Harness) {
	return func(t *testing.T, h Harness) {
		ctx := testCtx(t)
		in := input(t, h)
		h.ResetText(t)
		if err := in.Type(ctx, text); err != nil {
			t.Fatalf("Type(%q): %v", text, err)
		}
		if got := h.Text(t, text, eventTimeout+time.Duration(utf8.RuneCountInString(text))*50*time.Millisecond); got != text {
			t.Errorf("typed %q (%d runes), the application holds %q", text, utf8.RuneCountInString(text), got)
		}
		if k, b := in.Held(); len(k)+len(b) > 0 {
			t.Errorf("typing left %v %v held", k, b)
		}
	}
}

func testClipboard(t *testing.T, h Harness) {
	ctx := testCtx(t)
	cb, ok := h.Screen().(desktop.Clipboard)
	if !ok {
		t.Fatalf("backend %q does not implement desktop.Clipboard: every backend must read and write the clipboard", h.Screen().Name())
	}
	for _, want := range []string{"plain clipboard text 42", "Grüße 世界 ✓\nsecond line"} {
		if err := cb.WriteClipboard(ctx, want); err != nil {
			t.Fatalf("WriteClipboard(%q): %v", want, err)
		}
		got, err := cb.ReadClipboard(ctx)
		if err != nil {
			t.Fatalf("ReadClipboard: %v", err)
		}
		if got != want {
			t.Errorf("clipboard round trip: wrote %q, read %q", want, got)
		}
	}
	// Typing (which may go through the clipboard for non-ASCII) leaves the user's clipboard as it was.
	const saved = "the user's clipboard ✓"
	if err := cb.WriteClipboard(ctx, saved); err != nil {
		t.Fatalf("WriteClipboard: %v", err)
	}
	in := input(t, h)
	h.ResetText(t)
	const typed = "Grüße 世界 ✓ 42"
	if err := in.Type(ctx, typed); err != nil {
		t.Fatalf("Type(%q): %v", typed, err)
	}
	if got := h.Text(t, typed, eventTimeout); got != typed {
		t.Errorf("typed %q, the application holds %q", typed, got)
	}
	got, err := cb.ReadClipboard(ctx)
	if err != nil {
		t.Fatalf("ReadClipboard after typing: %v", err)
	}
	if got != saved {
		t.Errorf("after typing, the clipboard holds %q, want the user's %q restored", got, saved)
	}
}

// testCancelMidAction cancels the context after k primitives of several
// actions and checks that nothing stays pressed, in the ledger and as the
// application saw it.
func testCancelMidAction(t *testing.T, h Harness) {
	in := input(t, h)
	d := primary(t, h)
	p, q := at(d, 0.3, 0.35), at(d, 0.55, 0.5)
	marker := at(d, 0.62, 0.62)
	ctrlShift := []desktop.Key{desktop.Ctrl, desktop.Shift}
	actions := []struct {
		name  string
		steps int // primitives the action passes through Gate when not cancelled
		run   func(ctx context.Context) error
	}{
		{"ctrl+shift+click", 4, func(ctx context.Context) error { return in.Click(ctx, &p, desktop.Left, 1, ctrlShift) }},
		{"drag", 10, func(ctx context.Context) error { return in.Drag(ctx, p, nil, q, desktop.Left) }},
		{"hotkey", 3, func(ctx context.Context) error {
			return in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, desktop.Shift, desktop.Key("y")})
		}},
		{"ctrl+scroll", 3, func(ctx context.Context) error {
			return in.Scroll(ctx, &q, desktop.Down, 1, []desktop.Key{desktop.Ctrl})
		}},
	}
	for _, a := range actions {
		for k := 0; k < a.steps; k++ {
			h.ResetText(t)
			ctx, cancel := context.WithCancel(context.Background())
			n := 0
			in.Gate = func(ctx context.Context) error {
				n++
				if n > k {
					cancel()
					return ctx.Err()
				}
				return nil
			}
			err := a.run(ctx)
			in.Gate = nil
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s cancelled after %d primitives returned %v, want context.Canceled", a.name, k, err)
			}
			if keys, btns := in.Held(); len(keys)+len(btns) > 0 {
				t.Errorf("%s cancelled after %d primitives: ledger still holds keys %v buttons %v", a.name, k, keys, btns)
			}
			// A final move to a marker point: once the application sees it, it has
			// seen everything the cancelled action sent.
			mctx, mcancel := context.WithTimeout(context.Background(), eventTimeout)
			merr := in.Move(mctx, marker)
			mcancel()
			if merr != nil {
				t.Fatalf("Move to marker %v: %v", marker, merr)
			}
			evs := collect(t, h, eventTimeout, func(evs []Received) bool {
				return slices.ContainsFunc(evs, func(e Received) bool { return e.Kind == "motion" && e.At == marker })
			})
			if !slices.ContainsFunc(evs, func(e Received) bool { return e.Kind == "motion" && e.At == marker }) {
				t.Fatalf("%s: the marker move to %v never arrived: %s", a.name, marker, format(evs))
			}
			if s := stuck(evs); s != "" {
				t.Errorf("%s cancelled after %d primitives left %s pressed: %s", a.name, k, s, format(evs))
			}
			// Move off the marker so the next round's marker move is a real motion.
			_ = in.Move(context.Background(), p)
		}
	}
}

// stuck names keys and buttons that went down in evs without coming up after.
func stuck(evs []Received) string {
	keys := map[string]int{}
	btns := map[desktop.Button]int{}
	for _, e := range evs {
		k := strings.ToLower(string(e.Key))
		switch e.Kind {
		case "key_down":
			keys[k]++
		case "key_up":
			keys[k] = 0
		case "button_down":
			btns[e.Button]++
		case "button_up":
			btns[e.Button] = 0
		}
	}
	var out []string
	for k, n := range keys {
		if n > 0 {
			out = append(out, "key "+k)
		}
	}
	for b, n := range btns {
		if n > 0 {
			out = append(out, "button "+b.String())
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
