package responses_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/guiagent/guiagent/internal/action/actiontest"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/internal/golden"
	"github.com/guiagent/guiagent/internal/llm/responses"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const testKey = "sk-proj-test-SECRET-0123456789"

var boxColor = color.RGBA{R: 20, G: 180, B: 60, A: 255}

// screen is a synthetic display with one coloured box.
type screen struct {
	display geom.Display
	box     geom.Rect // global logical pixels
}

// shot renders the screen and scales it the way the loop would (profile caps
// plus a long-edge cap of 1280), returning the image sent and its frame.
func (sc screen) shot(t *testing.T, p geom.Profile, step int) llm.Image {
	t.Helper()
	b := sc.display.Bounds
	full := image.NewRGBA(image.Rect(0, 0, b.W, b.H))
	draw.Draw(full, full.Bounds(), image.NewUniform(color.RGBA{R: 250, G: 250, B: 250, A: 255}), image.Point{}, draw.Src)
	box := image.Rect(sc.box.X-b.X, sc.box.Y-b.Y, sc.box.X-b.X+sc.box.W, sc.box.Y-b.Y+sc.box.H)
	draw.Draw(full, box, image.NewUniform(boxColor), image.Point{}, draw.Src)
	content, _ := p.PrepareSize(b.Size(), 1280)
	small := image.NewRGBA(image.Rect(0, 0, content.W, content.H))
	xdraw.ApproxBiLinear.Scale(small, small.Bounds(), full, full.Bounds(), xdraw.Src, nil)
	var buf bytes.Buffer
	if err := png.Encode(&buf, small); err != nil {
		t.Fatal(err)
	}
	return llm.Image{
		MIME: "image/png", Data: buf.Bytes(), Step: step, Ref: fmt.Sprintf("images/step-%03d.png", step),
		Frame: geom.NewFrame(fmt.Sprintf("f%d", step), sc.display, b, content),
	}
}

// defaultScreen is a display left of and above the primary one (negative origin).
func defaultScreen() screen {
	return screen{
		display: geom.Display{ID: "2", Name: "LEFT", Bounds: geom.Rect{X: -2560, Y: -360, W: 2560, H: 1440}, Scale: 1},
		box:     geom.Rect{X: -2560 + 300, Y: -360 + 1100, W: 120, H: 50},
	}
}

// preview configures the shut-down computer-use-preview, chosen explicitly.
func preview(c *llm.Config) { c.Model = "computer-use-preview" }

func newAdapter(t *testing.T, srv *fakellm.ResponsesServer, mutate ...func(*llm.Config)) llm.Adapter {
	t.Helper()
	cfg := llm.Config{
		Provider: "openai", Model: "gpt-5.5", APIKey: testKey, BaseURL: srv.URL,
		Timeout: 10 * time.Second, Retry: llm.RetryPolicy{Attempts: 1},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	a, err := responses.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func findBox(t fakellm.Turn) fakellm.Reply {
	c, ok := fakellm.FindColor(t.Image, boxColor, 40)
	if !ok {
		return fakellm.Reply{Status: llm.Failed, Result: "no box on screen"}
	}
	return fakellm.Reply{Observation: "A green box at the lower left.", Actions: []fakellm.BrainAction{fakellm.ClickAt(c)}}
}

func obs(t *testing.T, a llm.Adapter, step int) llm.Observation {
	return llm.Observation{Step: step, Screenshot: defaultScreen().shot(t, a.Profile(), step)}
}

func TestTwoStepRunClicksTheBoxOnScreen(t *testing.T) {
	var seen geom.Size
	srv := fakellm.NewResponsesServer(fakellm.Script(
		func(t fakellm.Turn) fakellm.Reply { seen = t.ImageSize; return findBox(t) },
		fakellm.Fixed(fakellm.Finish("Clicked the green box.")),
	))
	defer srv.Close()
	a := newAdapter(t, srv, preview)
	if a.Name() != "openai-computer" || a.Profile().Name != "openai-computer" {
		t.Fatalf("adapter %s with profile %s", a.Name(), a.Profile().Name)
	}
	sc := defaultScreen()
	sess := a.NewSession("Click the green box")
	img := sc.shot(t, a.Profile(), 1)
	if img.Frame.Content.W != 1280 {
		t.Fatalf("test image is %v, want downscaled to 1280 wide", img.Frame.Content)
	}
	d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: img})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != llm.Continue || len(d.Actions) != 1 || d.Actions[0].Kind != action.Click || d.Reasoning == "" {
		t.Fatalf("decision = %+v, want one click with the reasoning summary", d)
	}
	at := d.Actions[0].At
	ip := geom.SpaceToImage(at.Space, at.X, at.Y, img.Frame)
	res, err := img.Frame.Resolve(ip, true)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.box.Contains(res.Global) {
		t.Fatalf("click at %v -> global %v misses the box %v", d.Actions[0].At, res.Global, sc.box)
	}
	var req struct {
		Tools []struct {
			Type        string `json:"type"`
			W           int    `json:"display_width"`
			H           int    `json:"display_height"`
			Environment string `json:"environment"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(srv.Requests()[0].Body, &req)
	if len(req.Tools) != 1 || req.Tools[0].Type != "computer_use_preview" ||
		(geom.Size{W: req.Tools[0].W, H: req.Tools[0].H}) != img.Frame.ImageSize() || seen != img.Frame.ImageSize() {
		t.Fatalf("declared tool %+v, image %v, model saw %v: must all match", req.Tools, img.Frame.ImageSize(), seen)
	}

	d, err = sess.Next(context.Background(), llm.Observation{Step: 2, Screenshot: sc.shot(t, a.Profile(), 2)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != llm.Done || d.Result != "Clicked the green box." {
		t.Fatalf("decision = %+v, want done", d)
	}
	if !bytes.Contains(srv.Requests()[1].Body, []byte(`"previous_response_id":"resp_fake_1"`)) {
		t.Fatal("second request does not chain with previous_response_id")
	}
}

func TestGoldenRequests(t *testing.T) {
	srv := fakellm.NewResponsesServer(fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Point{X: 640, Y: 360})}}),
		fakellm.Fixed(fakellm.Finish("done")),
	))
	defer srv.Close()
	a := newAdapter(t, srv, preview)
	sess := a.NewSession("Press the button")
	for step := 1; step <= 2; step++ {
		o := obs(t, a, step)
		if step == 2 {
			o.Feedback = "click: ok"
		}
		d, err := sess.Next(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(d.Request, []byte(testKey)) || bytes.Contains(d.Response, []byte(testKey)) {
			t.Fatal("the API key is in the recorded bodies")
		}
		if bytes.Contains(d.Request, []byte("base64,")) {
			t.Fatalf("step %d: recorded request still holds image data", step)
		}
		golden.JSON(t, fmt.Sprintf("request_step%d.json", step), d.Request, *update)
	}
}

func TestBatchedActionsOfOneCall(t *testing.T) {
	srv := fakellm.NewResponsesServer(fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{
			fakellm.ClickAt(image.Point{X: 100, Y: 120}), fakellm.TypeText("Ada"), fakellm.PressKeys("ctrl", "s"),
			{Kind: action.Scroll, At: &image.Point{X: 50, Y: 60}, Direction: "up", Amount: 3},
		}}),
		fakellm.Fixed(fakellm.Finish("saved")),
	))
	defer srv.Close()
	a := newAdapter(t, srv)
	sess := a.NewSession("fill")
	d, err := sess.Next(context.Background(), obs(t, a, 1))
	if err != nil {
		t.Fatal(err)
	}
	want := []action.Raw{
		{Kind: action.Click, At: []float64{100, 120}, Button: "left", Clicks: 1, CallID: "call_fake_1"},
		{Kind: action.TypeText, Text: "Ada", CallID: "call_fake_1"},
		{Kind: action.KeyPress, Keys: []string{"CTRL", "S"}, CallID: "call_fake_1"},
		{Kind: action.Scroll, At: []float64{50, 60}, Direction: "up", Amount: 3, CallID: "call_fake_1"},
	}
	if !actiontest.Same(t, d.Actions, want, geom.SpaceImage) {
		t.Fatal("actions differ")
	}
	if err := llm.ValidateDecision(d); err != nil {
		t.Fatalf("decision does not validate: %v", err)
	}
	if _, err := sess.Next(context.Background(), obs(t, a, 2)); err != nil {
		t.Fatal(err) // the server rejects a request that leaves the call unanswered
	}
	if n := bytes.Count(srv.Requests()[1].Body, []byte(`"type":"computer_call_output"`)); n != 1 {
		t.Fatalf("second request has %d computer_call_output items, want 1", n)
	}
}

func TestProviderErrors(t *testing.T) {
	for _, tc := range []struct {
		rep       fakellm.Reply
		wantType  string
		retryable bool
		after     time.Duration
	}{
		{fakellm.Reply{HTTPStatus: 429, RetryAfter: "3", Result: "Rate limit reached"}, "rate_limit_exceeded", true, 3 * time.Second},
		{fakellm.Reply{HTTPStatus: 429, ErrorType: "insufficient_quota", Result: "You exceeded your current quota"}, "insufficient_quota", false, 0},
		{fakellm.Reply{HTTPStatus: 500, Result: "The server had an error"}, "server_error", true, 0},
	} {
		srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(tc.rep)))
		a := newAdapter(t, srv)
		_, err := a.NewSession("x").Next(context.Background(), obs(t, a, 1))
		srv.Close()
		var ae *llm.APIError
		if !errors.As(err, &ae) {
			t.Fatalf("%d: %v is not an *llm.APIError", tc.rep.HTTPStatus, err)
		}
		if ae.StatusCode != tc.rep.HTTPStatus || ae.Type != tc.wantType || ae.Retryable() != tc.retryable || ae.RetryAfter != tc.after || ae.Message != tc.rep.Result {
			t.Errorf("got %+v retryable=%v; want type %s retryable=%v after %v", ae, ae.Retryable(), tc.wantType, tc.retryable, tc.after)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("error contains the key: %v", err)
		}
	}
}

func TestMessageAnswers(t *testing.T) {
	for _, tc := range []struct {
		rep  fakellm.Reply
		want llm.Status
	}{
		{fakellm.Reply{Status: llm.Blocked, Result: "Sign in first."}, llm.Blocked},
		{fakellm.Reply{Status: llm.Failed, Result: "No such page."}, llm.Failed},
		{fakellm.Reply{Raw: "DONE: the report is saved as report.pdf"}, llm.Done},
	} {
		srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(tc.rep)))
		a := newAdapter(t, srv)
		d, err := a.NewSession("x").Next(context.Background(), obs(t, a, 1))
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != tc.want || d.Result == "" || strings.HasPrefix(d.Result, "DONE") {
			t.Errorf("%+v: got %s %q, want %s", tc.rep, d.Status, d.Result, tc.want)
		}
	}
}

func TestServerRejectsMissingKeyAndUnansweredCall(t *testing.T) {
	srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.TypeText("a")}})))
	defer srv.Close()
	post := func(body string, key string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/responses", strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	tool := `"tools":[{"type":"computer_use_preview","display_width":100,"display_height":100,"environment":"linux"}],"truncation":"auto"`
	if code, _ := post(`{"model":"computer-use-preview","input":"hi",`+tool+`}`, ""); code != 401 {
		t.Fatalf("no key: HTTP %d, want 401", code)
	}
	if code, body := post(`{"model":"computer-use-preview","input":"hi","tools":[{"type":"computer_use_preview","display_width":100,"display_height":100,"environment":"linux"}]}`, "k"); code != 400 || !strings.Contains(body, "truncation") {
		t.Fatalf("no truncation: HTTP %d %s", code, body)
	}
	if code, _ := post(`{"model":"computer-use-preview","input":"hi",`+tool+`}`, "k"); code != 200 {
		t.Fatalf("good request: HTTP %d", code)
	}
	code, body := post(`{"model":"computer-use-preview","previous_response_id":"resp_fake_3","input":"next",`+tool+`}`, "k")
	if code != 400 || !strings.Contains(body, "computer_call_output") {
		t.Fatalf("unanswered call: HTTP %d %s", code, body)
	}
}

func TestHungRequestTimesOut(t *testing.T) {
	srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Delay: time.Minute})))
	defer srv.Close()
	a := newAdapter(t, srv, func(c *llm.Config) { c.Timeout = 300 * time.Millisecond })
	_, err := a.NewSession("x").Next(context.Background(), obs(t, a, 1))
	var ae *llm.APIError
	if err == nil || errors.As(err, &ae) || !llm.Retryable(err) {
		t.Fatalf("hung server: err = %v, want a retryable timeout", err)
	}
	if !strings.Contains(err.Error(), "timed out after 300ms") || strings.Contains(err.Error(), "network") {
		t.Fatalf("hung server: err = %v, want a timeout naming the limit (not a network failure)", err)
	}
}

func TestCancelEndsAHungRequest(t *testing.T) {
	srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Delay: time.Minute})))
	defer srv.Close()
	a := newAdapter(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := a.NewSession("x").Next(ctx, obs(t, a, 1))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
