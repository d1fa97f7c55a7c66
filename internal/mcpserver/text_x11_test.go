package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/ocr/tesseract"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// The text tools on real pixels: a private Xvfb, the sample app's buttons
// scene with white RED, GREEN and BLUE labels on saturated buttons, the X11
// backend, and Tesseract. No vision model is configured.

var colourLabels = map[string]string{"red": "RED", "green": "GREEN", "blue": "BLUE"}

type textEnv struct {
	cs  *mcp.ClientSession
	app *sampleapp.App
	ws  map[string]sampleapp.Widget
}

func startTextEnv(tb testing.TB, scene string, labels map[string]string, withOCR bool) *textEnv {
	tb.Helper()
	return startTextEnvWith(tb, scene, labels, withOCR, tesseract.Options{})
}

// startTextEnvWith is startTextEnv with the OCR engine's options o.
// with, when given, adjusts the server's options (a vision model).
func startTextEnvWith(tb testing.TB, scene string, labels map[string]string, withOCR bool, o tesseract.Options, with ...func(*Options)) *textEnv {
	tb.Helper()
	vd := xvfbtest.Start(tb, 1280, 800)
	be := x11.New(x11.Options{Display: vd.Display, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := be.Start(ctx); err != nil {
		tb.Fatalf("x11 backend on %s: %v", vd.Display, err)
	}
	tb.Cleanup(func() { _ = be.Close() })
	app, err := sampleapp.Start(ctx, sampleapp.Options{Display: vd.Display, Scene: scene, Width: 1280, Height: 800, Labels: labels})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { app.Close() })
	if _, err := app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "ready" }); err != nil {
		tb.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	opts := Options{Screen: be, Logger: slog.New(slog.DiscardHandler)}
	if !withOCR {
		o.Binary = "/nonexistent/tesseract"
	}
	e, err := tesseract.New(ctx, o)
	switch {
	case withOCR && err != nil:
		tb.Fatalf("tesseract: %v (CI installs tesseract-ocr and tesseract-ocr-eng)", err)
	case withOCR:
		tb.Cleanup(func() { e.Close() })
		opts.OCR = ocr.NewReader(e, 0)
	default:
		opts.OCRMissing = err
	}
	for _, f := range with {
		f(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close(); ss.Close() })
	lay, _ := sampleapp.Layout(scene, 1280, 800)
	ws := map[string]sampleapp.Widget{}
	for _, w := range lay {
		ws[w.Name] = w
	}
	return &textEnv{cs: cs, app: app, ws: ws}
}

type foundText struct {
	FrameID string `json:"frame_id"`
	Matches []struct {
		Text       string   `json:"text"`
		Box        ImageBox `json:"box"`
		Center     ImageXY  `json:"center"`
		Confidence float64  `json:"confidence"`
	} `json:"matches"`
	Lines []struct {
		Text string   `json:"text"`
		Box  ImageBox `json:"box"`
	} `json:"lines"`
}

func decodeText(t testing.TB, s string) foundText {
	t.Helper()
	var f foundText
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return f
}

// inside reports whether box lies in the widget (image pixels are the
// display's here: the frame is the display at its own size).
func inside(b ImageBox, w sampleapp.Widget) bool {
	return b.X1 >= float64(w.Rect.Min.X) && b.Y1 >= float64(w.Rect.Min.Y) && b.X2 <= float64(w.Rect.Max.X) && b.Y2 <= float64(w.Rect.Max.Y)
}

// TestFindTextOnColourNoModel: gui_find_text finds each white-on-colour
// label inside its button with no model configured; gui_read_text reads
// them among its lines; a bad regex and an off-screen region are clear errors.
func TestFindTextOnColourNoModel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb, the sample app and tesseract")
	}
	e := startTextEnv(t, sampleapp.SceneButtons, colourLabels, true)
	for name, label := range colourLabels {
		f := decodeText(t, ok(t, e.cs, "gui_find_text", map[string]any{"text": label}))
		if len(f.Matches) != 1 || !inside(f.Matches[0].Box, e.ws[name]) || f.FrameID == "" {
			t.Errorf("%s: %+v, want one match inside %v", label, f, e.ws[name].Rect)
		}
	}
	f := decodeText(t, ok(t, e.cs, "gui_read_text", map[string]any{}))
	var all []string
	for _, l := range f.Lines {
		all = append(all, l.Text)
	}
	for _, label := range colourLabels {
		if !strings.Contains(strings.Join(all, "\n"), label) {
			t.Errorf("gui_read_text lines %q lack %s", all, label)
		}
	}
	blue := e.ws["blue"].Rect
	f = decodeText(t, ok(t, e.cs, "gui_find_text", map[string]any{"text": "(?i)^(red|green|blue)$", "match": "regex",
		"region": map[string]any{"x1": blue.Min.X - 5, "y1": blue.Min.Y - 5, "x2": blue.Max.X + 5, "y2": blue.Max.Y + 5}}))
	if len(f.Matches) != 1 || f.Matches[0].Text != "BLUE" {
		t.Errorf("regex in the BLUE button's region: %+v, want BLUE alone", f.Matches)
	}
	fails(t, e.cs, "gui_find_text", map[string]any{"text": "Item (", "match": "regex"}, "does not compile", "RE2")
	fails(t, e.cs, "gui_find_text", map[string]any{"text": "BLUE", "region": map[string]any{"x1": 1200, "y1": 10, "x2": 1500, "y2": 90}}, "not inside", "1280x800")
}

// TestClickTextTargetNoModel: gui_click {target: "\"BLUE\""} clicks inside
// the BLUE button by OCR (located_by ocr, no model); an ambiguous target
// lists the candidates and clicks nothing.
func TestClickTextTargetNoModel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb, the sample app and tesseract")
	}
	e := startTextEnv(t, sampleapp.SceneButtons, map[string]string{"red": "BLUE", "green": "GREEN", "blue": "BLUE"}, true)
	msg := fails(t, e.cs, "gui_click", map[string]any{"target": `"BLUE"`}, "2 places", "first", "second", "say which")
	t.Logf("ambiguous: %s", msg)
	out := ok(t, e.cs, "gui_click", map[string]any{"target": `the second "BLUE"`})
	if !strings.Contains(out, "read \"BLUE\"") {
		t.Errorf("result %q does not say OCR read the target", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := e.app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "click" })
	if err != nil || ev.Target != "blue" {
		t.Fatalf("click: %+v %v, want it on the blue button (%s)", ev, err, out)
	}
}

// TestTextToolsWithoutTesseract: with the tesseract binary missing, the
// text tools are listed and say how to install it; a text target with no
// model says what is missing.
func TestTextToolsWithoutTesseract(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb and the sample app")
	}
	e := startTextEnv(t, sampleapp.SceneButtons, colourLabels, false)
	fails(t, e.cs, "gui_find_text", map[string]any{"text": "BLUE"}, "apt-get install tesseract-ocr")
	fails(t, e.cs, "gui_read_text", map[string]any{}, "apt-get install tesseract-ocr")
}
