package tesseract

import (
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// The real-pixel tests: a private Xvfb, the Tk form of testdata/form.tcl
// (which reports its widgets' geometry as Tk has it) and the sample app,
// captured through the screenshot pipeline, read by the engine.

func newEngine(tb testing.TB, o Options) *Engine {
	tb.Helper()
	e, err := New(context.Background(), o)
	if err != nil {
		tb.Fatalf("tesseract engine: %v (CI installs tesseract-ocr and tesseract-ocr-eng)", err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// findIn returns the one exact, case-sensitive match of text lying inside
// the widget rect, failing with what was read otherwise.
func findIn(t *testing.T, p ocr.Page, text string, rect geom.ImageRect) ocr.Match {
	t.Helper()
	ms, err := ocr.Find(p, ocr.Query{Text: text, CaseSensitive: true})
	if err != nil {
		t.Fatal(err)
	}
	var inside []ocr.Match
	for _, m := range ms {
		if m.Box.In(rect) {
			inside = append(inside, m)
		}
	}
	if len(inside) != 1 {
		t.Errorf("%q: %d matches inside its widget %v (all matches %v); the page read:\n%s", text, len(inside), rect, ms, p.Text())
		return ocr.Match{}
	}
	return inside[0]
}

// TestTkFormEveryLabelInsideItsWidget: every text of the Tk form (labels,
// field contents, buttons, white labels on red, green and blue buttons, list
// rows, a dark-mode panel) is found, each box inside its widget as Tk
// reports it.
func TestTkFormEveryLabelInsideItsWidget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb, Tk and tesseract")
	}
	s := startScreen(t, 1280, 800)
	ws := s.startForm(t, 40, 30)
	img := s.shoot(t)
	p, err := newEngine(t, Options{}).Read(context.Background(), img, geom.ImageRect{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) < 20 {
		t.Fatalf("the form reported %d widgets, want at least 20", len(ws))
	}
	for _, w := range ws {
		m := findIn(t, p, w.text, w.rect)
		if m.Text != "" && m.Conf < 50 {
			t.Errorf("%q read with confidence %.0f", w.text, m.Conf)
		}
	}
	// A quoted target picks its button alone.
	for _, w := range ws {
		if !strings.HasPrefix(w.name, "colour_") {
			continue
		}
		target, ok := ocr.ParseTarget(`the "` + w.text + `" button`)
		ms, _ := ocr.Find(p, target.Query())
		m, err := ocr.Pick(ms, target)
		if !ok || err != nil || !m.Box.In(w.rect) {
			t.Errorf("target %q: %+v %v, want its button %v", w.text, m, err, w.rect)
		}
	}
	checkOracle(t, img, p)
}

// checkOracle runs tesseract as installed on the raw screenshot, one shot
// from the command line, and checks that every word it reads with high
// confidence the engine reads too, at an overlapping place.
func checkOracle(t *testing.T, img image.Image, p ocr.Page) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "screen.png")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command("tesseract", file, "-", "tsv").Output()
	if err != nil {
		t.Fatalf("tesseract on the raw screen: %v", err)
	}
	var rows [][]string
	for _, l := range strings.Split(string(out), "\n") {
		rows = append(rows, strings.Split(l, "\t"))
	}
	raw := parseWords(rows)
	checked := 0
	for _, w := range raw {
		if w.conf < 90 || len(w.text) < 3 || strings.ContainsAny(w.text, ".,:;-|") {
			continue
		}
		checked++
		box := geom.ImageRect{X: w.box.Min.X, Y: w.box.Min.Y, W: w.box.Dx(), H: w.box.Dy()}
		ms, _ := ocr.Find(p, ocr.Query{Text: w.text, Match: ocr.Contains}) // case aside: its reads are not always right
		ok := false
		for _, m := range ms {
			ok = ok || !m.Box.Intersect(box).Empty()
		}
		if !ok {
			t.Errorf("tesseract on the raw screen reads %q at %v (confidence %.0f); the engine does not (it read %v)", w.text, box, w.conf, ms)
		}
	}
	if checked < 5 {
		t.Errorf("tesseract on the raw screen read only %d confident words: %v", checked, raw)
	}
	t.Logf("tesseract on the raw screen: %d words, %d confident ones all read by the engine too", len(raw), checked)
}

// startSample starts the sample app's scene on s with labels relabelled.
func startSample(t *testing.T, s *screen, scene string, labels map[string]string) *sampleapp.App {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	app, err := sampleapp.Start(ctx, sampleapp.Options{Display: s.display, Scene: scene, Width: 1280, Height: 800, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	if _, err := app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "ready" }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	return app
}

func widgetRect(w sampleapp.Widget) geom.ImageRect {
	return geom.ImageRect{X: w.Rect.Min.X, Y: w.Rect.Min.Y, W: w.Rect.Dx(), H: w.Rect.Dy()}
}

// TestSampleAppButtonsOnColour: the sample app's buttons scene with the
// red, green and blue buttons labelled RED, GREEN and BLUE in white (what
// Tesseract alone misses on the whole screen): every label found inside its
// button.
func TestSampleAppButtonsOnColour(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb, the sample app and tesseract")
	}
	s := startScreen(t, 1280, 800)
	startSample(t, s, sampleapp.SceneButtons, map[string]string{"red": "RED", "green": "GREEN", "blue": "BLUE"})
	img := s.shoot(t)
	p, err := newEngine(t, Options{}).Read(context.Background(), img, geom.ImageRect{})
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := sampleapp.Layout(sampleapp.SceneButtons, 1280, 800)
	for _, w := range ws {
		label := map[string]string{"red": "RED", "green": "GREEN", "blue": "BLUE"}[w.Name]
		if label == "" {
			label = w.Label
		}
		findIn(t, p, label, widgetRect(w))
	}
}

// TestClickByOCRTarget: the dialog scene driven by text alone. "Next" is
// written twice (the title says "press Next"), so "the Next button" is
// ambiguous and "the second Next button" is not; it is clicked, the app says
// the click landed on the Next button, and the second screen's OK and
// Cancel are found in their buttons.
func TestClickByOCRTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb, the sample app and tesseract")
	}
	s := startScreen(t, 1280, 800)
	app := startSample(t, s, sampleapp.SceneDialog, nil)
	r := ocr.NewReader(newEngine(t, Options{}), 0)
	ws, _ := sampleapp.Layout(sampleapp.SceneDialog, 1280, 800)
	byName := map[string]geom.ImageRect{}
	for _, w := range ws {
		byName[w.Name] = widgetRect(w)
	}
	img := s.shoot(t)
	target, ok := ocr.ParseTarget("the Next button")
	if !ok {
		t.Fatal("the Next button is a text target")
	}
	ms, _, err := r.Find(context.Background(), "f1", img, target.Query())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocr.Pick(ms, target); !errors.Is(err, ocr.ErrAmbiguous) {
		t.Errorf("the Next button, with Next in the title too: %v, want an ambiguity listing both", err)
	}
	target, _ = ocr.ParseTarget("the second Next button")
	ms, _, _ = r.Find(context.Background(), "f1", img, target.Query()) // the cached page
	m, err := ocr.Pick(ms, target)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Box.Center()
	at := geom.GlobalPoint{X: int(c.X + 0.5), Y: int(c.Y + 0.5)} // the frame is the display at its own size
	if err := desktop.NewInput(s.be).Click(context.Background(), &at, desktop.Left, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "click" })
	if err != nil || ev.Target != "next" {
		t.Fatalf("click at %v (OCR box %v): %+v %v, want a click on the Next button", at, m.Box, ev, err)
	}
	if _, err := app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "screen" }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	p, err := r.Read(context.Background(), "f2", s.shoot(t), geom.ImageRect{})
	if err != nil {
		t.Fatal(err)
	}
	findIn(t, p, "OK", byName["ok"])
	findIn(t, p, "Cancel", byName["cancel"])
}

// TestReadRegion: reading a region returns only its text, boxes in the
// whole image's pixels; a region off the image is an error naming its size.
func TestReadRegion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb, Tk and tesseract")
	}
	s := startScreen(t, 1280, 800)
	ws := s.startForm(t, 40, 30)
	img := s.shoot(t)
	e := newEngine(t, Options{})
	var red, blue geom.ImageRect
	for _, w := range ws {
		switch w.name {
		case "colour_red":
			red = w.rect
		case "colour_blue":
			blue = w.rect
		}
	}
	region := red.Union(blue)
	p, err := e.Read(context.Background(), img, region)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(p.Text()); strings.Join(got, " ") != "RED GREEN BLUE" {
		t.Errorf("region %v reads %q, want RED GREEN BLUE", region, p.Text())
	}
	findIn(t, p, "BLUE", blue)
	for _, bad := range []geom.ImageRect{{X: 1200, Y: 700, W: 100, H: 200}, {X: -5, Y: 0, W: 10, H: 10}} {
		if _, err := e.Read(context.Background(), img, bad); !errors.Is(err, ocr.ErrRegion) || !strings.Contains(err.Error(), "1280x800") {
			t.Errorf("region %v: %v, want ErrRegion naming the 1280x800 image", bad, err)
		}
	}
}
