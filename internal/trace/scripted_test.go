package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math/rand"
	"testing"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// canary is a fake API key that must appear nowhere in a run record.
const canary = "sk-CANARY-h7-0123456789abcdef"

var words = []string{"File", "Edit", "View", "Settings", "Save", "Open", "Search", "invoice", "total", "Cancel", "OK",
	"Name", "Address", "the", "quick", "report", "2024", "Q3", "download", "Apply", "Help", "Tools", "window", "account"}

// desktopImage draws a desktop-like screen: a soft wallpaper, a taskbar and
// windows full of text, varied by seed, so encoded sizes are like real screenshots.
func desktopImage(w, h int, seed int64) *image.RGBA {
	rng := rand.New(rand.NewSource(seed))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			n := uint8(rng.Intn(6))
			img.SetRGBA(x, y, color.RGBA{uint8(40 + 60*x/w + int(n)), uint8(70 + 50*y/h + int(n)), uint8(120 + 40*(x+y)/(w+h)), 255})
		}
	}
	fill := func(r image.Rectangle, c color.RGBA) { draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src) }
	fill(image.Rect(0, h-36, w, h), color.RGBA{30, 30, 36, 255})
	text := func(x, y int, s string, c color.RGBA) {
		d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
		d.DrawString(s)
	}
	for wi := 0; wi < 3; wi++ {
		x0, y0 := rng.Intn(w/2), rng.Intn(h/3)
		ww, wh := w/3+rng.Intn(w/3), h/3+rng.Intn(h/3)
		r := image.Rect(x0, y0, min(x0+ww, w), min(y0+wh, h-40))
		fill(r, color.RGBA{250, 250, 250, 255})
		fill(image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+28), color.RGBA{225, 228, 235, 255})
		text(r.Min.X+10, r.Min.Y+19, "Window "+words[rng.Intn(len(words))], color.RGBA{20, 20, 20, 255})
		for ly := r.Min.Y + 48; ly < r.Max.Y-10; ly += 18 {
			lx := r.Min.X + 12
			for lx < r.Max.X-80 {
				wd := words[rng.Intn(len(words))]
				text(lx, ly, wd, color.RGBA{40, 40, 50, 255})
				lx += 7*len(wd) + 7
			}
		}
		fill(image.Rect(r.Max.X-90, r.Max.Y-40, r.Max.X-12, r.Max.Y-14), color.RGBA{47, 95, 208, 255})
		text(r.Max.X-70, r.Max.Y-22, "Apply", color.RGBA{255, 255, 255, 255})
	}
	return img
}

func encodeJPEG(t testing.TB, img image.Image) []byte {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 75}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodePNG(t testing.TB, img image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// script describes a synthetic run.
type script struct {
	steps      int
	w, h       int  // screenshot size in image pixels (display is 2x larger for scale checks)
	pngEvery   int  // every n-th step sends PNG instead of JPEG (0 = never)
	repeatEach int  // every n-th step re-sends the previous frame unchanged (0 = never)
	finish     bool // send a finish event
}

// sent is what the script sent, for assertions.
type sent struct {
	events   int
	distinct int // distinct screenshot contents
	clicks   map[int]geom.ImagePoint
	frames   map[int]geom.Frame
}

// play drives obs with a scripted run and returns what it sent.
func play(t testing.TB, obs agent.Observer, runID string, sc script) sent {
	disp := geom.Display{ID: "0", Name: "DUMMY0", Bounds: geom.Rect{X: 0, Y: 0, W: sc.w * 2, H: sc.h * 2}, Scale: 1, Primary: true}
	out := sent{clicks: map[int]geom.ImagePoint{}, frames: map[int]geom.Frame{}}
	emit := func(ev agent.Event) {
		ev.RunID = runID
		ev.Time = time.Now()
		obs.OnEvent(ev)
		out.events++
	}
	emit(agent.Event{Kind: agent.EvStart, Message: "open the invoice and read its total"})
	var prev *llm.Image
	var usage llm.Usage
	var trace []agent.StepTrace
	for s := 1; s <= sc.steps; s++ {
		frame := geom.NewFrame(fmt.Sprintf("f%d", s), disp, disp.Bounds, geom.Size{W: sc.w, H: sc.h})
		var img *llm.Image
		if sc.repeatEach > 0 && s%sc.repeatEach == 0 && prev != nil {
			cp := *prev
			cp.Frame, cp.Step, cp.Ref = frame, s, fmt.Sprintf("images/step-%03d%s", s, extFor(prev.MIME))
			img = &cp
		} else {
			d := desktopImage(sc.w, sc.h, int64(s))
			img = &llm.Image{MIME: "image/jpeg", Data: encodeJPEG(t, d), Frame: frame, Step: s}
			if sc.pngEvery > 0 && s%sc.pngEvery == 0 {
				img.MIME, img.Data = "image/png", encodePNG(t, d)
			}
			img.Ref = fmt.Sprintf("images/step-%03d%s", s, extFor(img.MIME))
			out.distinct++
		}
		prev = img
		out.frames[s] = frame
		emit(agent.Event{Kind: agent.EvScreenshot, Step: s, Image: img})

		ip := geom.ImagePoint{X: float64(40 + (s*97)%(sc.w-80)), Y: float64(30 + (s*53)%(sc.h-60))}
		out.clicks[s] = ip
		gp := geom.GlobalPoint{X: int(ip.X * 2), Y: int(ip.Y * 2)}
		ip2 := geom.ImagePoint{X: ip.X + 60, Y: ip.Y + 20}
		gp2 := geom.GlobalPoint{X: int(ip2.X * 2), Y: int(ip2.Y * 2)}
		model := []float64{ip.X * 1000 / float64(sc.w), ip.Y * 1000 / float64(sc.h)}
		acts, err := action.ParseModelAll([]action.Raw{
			{Kind: action.Click, At: model, Button: "left", CallID: "call_1"},
			{Kind: action.TypeText, Text: "total <b>&amp; 日本"},
			{Kind: action.Drag, At: model, To: []float64{model[0] + 10, model[1] + 5}},
			{Kind: action.Scroll, At: model, Direction: "down", Amount: 3},
			{Kind: action.KeyPress, Keys: []string{"ctrl", "s"}},
		}, geom.SpaceNorm1000)
		if err != nil {
			panic(err)
		}
		req, _ := json.Marshal(map[string]any{"model": "test-model", "messages": []any{map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "text", "text": "step " + fmt.Sprint(s)}, map[string]any{"type": "image_url", "image_url": map[string]string{"url": img.Ref}}}}}})
		resp := []byte(fmt.Sprintf(`{"id":"resp-%d","choices":[{"message":{"content":"click the invoice"}}],"echo":"Bearer %s"}`, s, canary))
		u := llm.Usage{Calls: 1, InputTokens: 1500 + s, OutputTokens: 80}
		usage = usage.Add(u)
		dec := &llm.Decision{Observation: fmt.Sprintf("Step %d: an invoice list is visible", s), Reasoning: "The invoice row is at the top; clicking it opens the detail.",
			Actions: acts, ExpectedOutcome: "the invoice opens", Status: llm.Continue, Usage: u, Request: req, Response: resp}
		if s == sc.steps {
			dec.Status = llm.Done
		}
		emit(agent.Event{Kind: agent.EvModel, Step: s, Decision: dec})
		ats := []action.Trace{
			{Action: acts[0], Image: &ip, Global: &gp, Outcome: "ok", Millis: 12},
			{Action: acts[1], Outcome: "ok", Millis: 40},
			{Action: acts[2], Image: &ip, Global: &gp, ImageTo: &ip2, GlobalTo: &gp2, Outcome: "ok", Millis: 300},
			{Action: acts[3], Image: &ip, Global: &gp, Outcome: "ok", Millis: 20},
			{Action: acts[4], Outcome: "refused", Error: "blocked hotkey ctrl+s", Millis: 0},
		}
		for i := range ats {
			emit(agent.Event{Kind: agent.EvAction, Step: s, Action: &ats[i]})
		}
		emit(agent.Event{Kind: agent.EvProgress, Step: s, Message: fmt.Sprintf("step %d: clicked the invoice", s), Progress: float64(s), Total: float64(sc.steps)})
		if s%7 == 0 {
			emit(agent.Event{Kind: agent.EvWarning, Step: s, Message: fmt.Sprintf("screen unchanged after step %d (provider said: invalid key %s)", s, canary)})
		}
		st := agent.StepTrace{Step: s, Observation: dec.Observation, Reasoning: dec.Reasoning, Actions: ats, ExpectedOutcome: dec.ExpectedOutcome,
			ModelStatus: dec.Status, Outcome: "ok", Usage: u, ModelMillis: 900, StepMillis: 1400, FrameID: frame.ID}
		trace = append(trace, st)
		emit(agent.Event{Kind: agent.EvStep, Step: s, StepDone: &st})
	}
	if sc.finish {
		res := &agent.Result{Status: agent.Completed, Summary: "Opened the invoice; the total is 1,234.50 EUR", Result: "1,234.50 EUR",
			Steps: sc.steps, Memory: []string{"invoice 42 total 1,234.50 EUR"}, Trace: trace, Usage: agent.RunUsage{Usage: usage, WallMillis: int64(sc.steps) * 1400}, RunID: runID}
		emit(agent.Event{Kind: agent.EvFinish, Step: sc.steps, Result: res})
	}
	return out
}

// testConfig is a configuration as cmd would pass it, with a canary API key.
type testConfig struct {
	Provider  string   `json:"provider"`
	Model     string   `json:"model"`
	APIKey    string   `json:"api_key"`
	MaxTokens int      `json:"max_tokens"`
	HTTPToken string   `json:"http_token"`
	Hotkeys   []string `json:"blocked_hotkeys"`
}

func newTestStore(t testing.TB, mod func(*Options)) *Store {
	o := DefaultOptions()
	o.Dir = t.TempDir()
	if mod != nil {
		mod(&o)
	}
	return NewStore(o)
}
