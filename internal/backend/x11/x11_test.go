package x11_test

import (
	"context"
	"errors"
	"image"
	"image/color"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/backend/x11/x11probe"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestConformanceXvfb runs the shared backend suite on one private Xvfb, with a
// fresh backend and probe per subtest.
func TestConformanceXvfb(t *testing.T) {
	vd := xvfbtest.Start(t, 1280, 800)
	suite.Run(t, func(t *testing.T) suite.Harness { return newHarness(t, vd.Display) })
}

// TestConformanceDualMonitors runs the suite on two 1920x1080 monitors (Xorg dummy).
func TestConformanceDualMonitors(t *testing.T) {
	vd := xvfbtest.StartDual(t)
	suite.Run(t, func(t *testing.T) suite.Harness { return newHarness(t, vd.Display) })
}

func TestDualMonitorsLayoutCaptureAndClick(t *testing.T) {
	vd := xvfbtest.StartDual(t)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	ds, err := h.b.Displays(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 {
		t.Fatalf("Displays = %+v, want two monitors", ds)
	}
	want := []geom.Rect{{X: 0, Y: 0, W: 1920, H: 1080}, {X: 1920, Y: 0, W: 1920, H: 1080}}
	for i, d := range ds {
		if d.ID != []string{"0", "1"}[i] || d.Bounds != want[i] || d.Scale != 1 || d.Primary != (i == 0) || d.Name == "" {
			t.Errorf("display %d = %+v, want id %d bounds %v scale 1 primary=%v and a name", i, d, i, want[i], i == 0)
		}
	}
	second := ds[1]
	magenta := color.RGBA{R: 200, G: 20, B: 180, A: 255}
	h.Fill(t, second.Bounds, color.RGBA{R: 128, G: 128, B: 128, A: 255})
	fill := geom.Rect{X: second.Bounds.X + 700, Y: 400, W: 120, H: 80}
	h.Fill(t, fill, magenta)
	img, err := h.b.Capture(ctx, second.Bounds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.RGBAAt(760, 440); got != magenta {
		t.Errorf("capture of display 1 at local (760,440) = %v, want the painted %v", got, magenta)
	}
	if got := img.RGBAAt(100, 100); got == magenta {
		t.Errorf("capture of display 1 at local (100,100) shows the fill colour outside the fill")
	}
	first, err := h.b.Capture(ctx, ds[0].Bounds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := first.RGBAAt(760, 440); got == magenta {
		t.Errorf("display 0 shows the colour painted on display 1")
	}

	in := desktop.NewInput(h.b)
	h.ResetText(t)
	p := geom.GlobalPoint{X: second.Bounds.X + 333, Y: 222}
	if err := in.Click(ctx, &p, desktop.Left, 1, nil); err != nil {
		t.Fatal(err)
	}
	evs := h.Events(t, 3, 5*time.Second)
	var downs []suite.Received
	for _, e := range evs {
		if e.Kind == "button_down" {
			downs = append(downs, e)
		}
	}
	if len(downs) != 1 || downs[0].At != p {
		t.Fatalf("click at %v on display 1 arrived as %+v", p, evs)
	}
}

func TestTypeUnicodeAndLongText(t *testing.T) {
	vd := xvfbtest.Start(t, 1024, 768)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	for _, text := range []string{
		"Grüße 世界 ✓ 42",
		"a😀b é ß Ω ✓✓ 世", // repeated and astral characters keep their keycodes
		"Mixed long text: Ünïcödé, 日本語, emoji 🚀, symbols ±§¶ and plain ASCII to pass fifty runes!",
		"line one\nline two\ttabbed",
	} {
		h.ResetText(t)
		if err := h.b.TypeText(ctx, text); err != nil {
			t.Fatalf("TypeText(%q): %v", text, err)
		}
		if got := h.Text(t, text, 10*time.Second); got != text {
			t.Errorf("TypeText(%q): the application holds %q", text, got)
		}
	}
	// The spare keycodes were restored: the keymap has as many spare keycodes as at the start.
	fresh := x11.New(x11.Options{Display: vd.Display})
	if err := fresh.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if a, b := h.b.SpareKeycodes(), fresh.SpareKeycodes(); a != b || a == 0 {
		t.Errorf("spare keycodes: backend sees %d, server has %d; typing must restore the keyboard mapping", a, b)
	}
	if err := h.b.TypeText(ctx, "bell\a"); err == nil || !strings.Contains(err.Error(), "U+0007") {
		t.Errorf("TypeText with a control character: err = %v, want an error naming U+0007", err)
	}
}

func TestPasteRestoresUsersClipboard(t *testing.T) {
	vd := xvfbtest.Start(t, 1024, 768)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	long := strings.Repeat("Paste → 世界 and more text, ", 4) // > 50 runes: pasted

	// The user's application owns the clipboard.
	const users = "the user's own clipboard ✓"
	h.Own(t, users)
	h.ResetText(t)
	if err := h.b.TypeText(ctx, long); err != nil {
		t.Fatalf("TypeText(long): %v", err)
	}
	if got := h.Text(t, long, 10*time.Second); got != long {
		t.Fatalf("long text arrived as %q, want %q", got, long)
	}
	got, err := h.b.ReadClipboard(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != users {
		t.Errorf("after pasting, the clipboard holds %q, want the user's %q", got, users)
	}

	// An empty clipboard stays empty.
	if err := h.b.DropClipboard(); err != nil {
		t.Fatal(err)
	}
	h.ResetText(t)
	if err := h.b.TypeText(ctx, long); err != nil {
		t.Fatalf("TypeText(long) with an empty clipboard: %v", err)
	}
	if got := h.Text(t, long, 10*time.Second); got != long {
		t.Fatalf("long text arrived as %q", got)
	}
	if got, err := h.b.ReadClipboard(ctx); err != nil || got != "" {
		t.Errorf("after pasting into an empty clipboard, ReadClipboard = %q, %v; want it empty again", got, err)
	}

	// The clipboard the probe owns is read across clients.
	h.Own(t, "from the probe")
	if got, err := h.b.ReadClipboard(ctx); err != nil || got != "from the probe" {
		t.Errorf("ReadClipboard of another client's text = %q, %v", got, err)
	}
	if err := h.b.WriteClipboard(ctx, "ours now"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for h.OwnsClipboard() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if h.OwnsClipboard() {
		t.Error("after WriteClipboard the probe still believes it owns the clipboard")
	}
}

func TestHeldKeysReleasedOnCancel(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	h := newHarness(t, vd.Display)
	in := desktop.NewInput(h.b)
	h.ResetText(t)
	if err := in.KeyDown(ctxT(t), desktop.Shift); err != nil { // hold_key
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	in.Gate = func(ctx context.Context) error {
		if n++; n == 3 { // after ctrl and alt went down
			cancel()
			return ctx.Err()
		}
		return nil
	}
	err := in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, desktop.Alt, "t"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Hotkey with a cancelled context: %v", err)
	}
	in.Gate = nil
	if keys, _ := in.Held(); !slices.Equal(keys, []desktop.Key{desktop.Shift}) {
		t.Fatalf("after the cancelled hotkey the ledger holds %v, want only the held shift", keys)
	}
	if err := in.ReleaseAll(); err != nil {
		t.Fatal(err)
	}
	h.Drain(t)
	evs := h.Events(t, 0, 0)
	balance := map[desktop.Key]int{}
	for _, e := range evs {
		switch e.Kind {
		case "key_down":
			balance[e.Key]++
		case "key_up":
			balance[e.Key]--
		}
	}
	for _, k := range []desktop.Key{desktop.Shift, desktop.Ctrl, desktop.Alt} {
		if balance[k] != 0 {
			t.Errorf("key %s: %d more key_down than key_up seen by the application: %+v", k, balance[k], evs)
		}
	}
	if balance[desktop.Ctrl] == 0 && !slices.ContainsFunc(evs, func(e suite.Received) bool { return e.Kind == "key_up" && e.Key == desktop.Ctrl }) {
		t.Errorf("the application never saw ctrl go down and up: %+v", evs)
	}
	if slices.ContainsFunc(evs, func(e suite.Received) bool { return e.Key == "t" }) {
		t.Errorf("the key after the cancellation was sent: %+v", evs)
	}
}

func TestKeyDownNeedsShiftAndUnmappedKeys(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	in := desktop.NewInput(h.b)
	h.ResetText(t)
	if err := in.PressKey(ctx, "!", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := in.PressKey(ctx, "ä", 2, nil); err != nil { // not on the us keymap
		t.Fatal(err)
	}
	if got := h.Text(t, "!ää", 5*time.Second); got != "!ää" {
		t.Errorf("PressKey(!) and PressKey(ä)x2 gave %q", got)
	}
}

func TestDescribeAndActiveWindowTitle(t *testing.T) {
	vd := xvfbtest.Start(t, 1280, 800)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	d := h.b.Describe(ctx)
	for k, want := range map[string]string{"xtest": "yes", "mit-shm": "yes", "randr": "yes", "xfixes": "yes", "screen": "1280x800", "display": vd.Display} {
		if !strings.Contains(d[k], want) {
			t.Errorf("Describe()[%q] = %q, want it to contain %q (all: %v)", k, d[k], want, d)
		}
	}
	if !strings.Contains(d["keymap"], "spare keycodes") {
		t.Errorf("Describe keymap = %q", d["keymap"])
	}
	caps := desktop.CapabilitiesOf(ctx, h.b)
	if !caps.Capture || !caps.Input || !caps.Clipboard || !caps.Windows {
		t.Errorf("capabilities %+v, want all", caps)
	}
	title, err := h.b.ActiveWindowTitle(ctx)
	if err != nil || title != x11probe.Title {
		t.Errorf("ActiveWindowTitle = %q, %v; want the focused probe window's %q", title, err, x11probe.Title)
	}
}

func TestLifecycleErrors(t *testing.T) {
	b := x11.New(x11.Options{Display: ":999"})
	if err := b.Close(); err != nil {
		t.Errorf("Close before Start: %v", err)
	}
	b = x11.New(x11.Options{Display: ":999"})
	err := b.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), ":999") || !strings.Contains(err.Error(), "--virtual-display") {
		t.Errorf("Start on a missing display: %v; want an error naming :999 and --virtual-display", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close after a failed Start: %v", err)
	}
	if _, err := b.Capture(context.Background(), geom.Rect{W: 1, H: 1}, nil); err == nil {
		t.Error("Capture on a backend that never started succeeded")
	}
	vd := xvfbtest.Start(t, 640, 480)
	b = x11.New(x11.Options{Display: vd.Display})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Capture(context.Background(), geom.Rect{X: 600, Y: 0, W: 100, H: 10}, nil); err == nil || !strings.Contains(err.Error(), "outside the screen") {
		t.Errorf("Capture beyond the screen: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCaptureWithoutShmMatches(t *testing.T) {
	vd := xvfbtest.Start(t, 1920, 1080)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	for i := range 8 {
		h.Fill(t, geom.Rect{X: i * 200, Y: i * 100, W: 190, H: 95}, color.RGBA{R: uint8(30 * i), G: uint8(255 - 30*i), B: uint8(7 * i), A: 255})
	}
	full := geom.Rect{W: 1920, H: 1080}
	a, err := h.b.Capture(ctx, full, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.b.DisableShm() // force the chunked GetImage path
	reuse := image.NewRGBA(image.Rect(0, 0, 2000, 1100))
	c, err := h.b.Capture(ctx, full, reuse)
	if err != nil {
		t.Fatal(err)
	}
	if c != reuse || c.Bounds() != a.Bounds() {
		t.Fatalf("GetImage capture bounds %v (reused %v), want %v in the given buffer", c.Bounds(), c == reuse, a.Bounds())
	}
	if !slices.Equal(a.Pix, c.Pix) {
		t.Fatal("MIT-SHM and GetImage captures differ")
	}
	if got := c.RGBAAt(7*200+10, 7*100+10); got != (color.RGBA{R: 210, G: 45, B: 49, A: 255}) {
		t.Errorf("pixel of the last fill = %v", got)
	}
}

func benchCapture(b *testing.B, w, h int) {
	vd := xvfbtest.Start(b, w, h)
	be := x11.New(x11.Options{Display: vd.Display})
	if err := be.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	if !be.HasShm() {
		b.Fatal("MIT-SHM is missing on the benchmark Xvfb")
	}
	var dst *image.RGBA
	region := geom.Rect{W: w, H: h}
	b.SetBytes(int64(w * h * 4))
	for b.Loop() {
		img, err := be.Capture(context.Background(), region, dst)
		if err != nil {
			b.Fatal(err)
		}
		dst = img
	}
}

// BenchmarkCapture1080 measures a full-screen 1920x1080 capture (MIT-SHM).
func BenchmarkCapture1080(b *testing.B) { benchCapture(b, 1920, 1080) }

// BenchmarkCapture4K measures a full-screen 3840x2160 capture (MIT-SHM).
func BenchmarkCapture4K(b *testing.B) { benchCapture(b, 3840, 2160) }

// Describe may run while a capture gives up MIT-SHM (run with -race).
func TestDescribeWhileShmIsDropped(t *testing.T) {
	vd := xvfbtest.Start(t, 640, 480)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Millisecond)
		h.b.DisableShm()
	}()
	var d map[string]string
	for range 20 {
		d = h.b.Describe(ctx)
	}
	<-done
	if m := d["mit-shm"]; m != "no" && !strings.HasPrefix(m, "yes ") {
		t.Errorf("Describe()[mit-shm] = %q, want yes or no", m)
	}
	if d := h.b.Describe(ctx); d["mit-shm"] != "no" {
		t.Errorf("after MIT-SHM was dropped Describe()[mit-shm] = %q, want no", d["mit-shm"])
	}
}
