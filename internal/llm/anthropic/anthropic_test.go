package anthropic_test

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
	"strings"
	"testing"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/anthropic"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const testKey = "sk-ant-test-SECRET-0123456789"

var boxColor = color.RGBA{R: 230, G: 30, B: 200, A: 255}

// screen is a synthetic display with one coloured box, as the loop would
// capture it and downscale it by the adapter's profile.
type screen struct {
	display geom.Display
	box     geom.Rect // global logical pixels
}

// shot renders the screen, scales it by profile p and returns the image the
// model is sent, with its frame.
func (sc screen) shot(t testing.TB, p geom.Profile, step int) llm.Image {
	t.Helper()
	b := sc.display.Bounds
	full := image.NewRGBA(image.Rect(0, 0, b.W, b.H))
	draw.Draw(full, full.Bounds(), image.NewUniform(color.RGBA{R: 240, G: 240, B: 240, A: 255}), image.Point{}, draw.Src)
	box := image.Rect(sc.box.X-b.X, sc.box.Y-b.Y, sc.box.X-b.X+sc.box.W, sc.box.Y-b.Y+sc.box.H)
	draw.Draw(full, box, image.NewUniform(boxColor), image.Point{}, draw.Src)
	content, _ := p.PrepareSize(b.Size(), 0)
	small := image.NewRGBA(image.Rect(0, 0, content.W, content.H))
	xdraw.ApproxBiLinear.Scale(small, small.Bounds(), full, full.Bounds(), xdraw.Src, nil)
	var buf bytes.Buffer
	if err := png.Encode(&buf, small); err != nil {
		t.Fatal(err)
	}
	return llm.Image{
		MIME:  "image/png",
		Data:  buf.Bytes(),
		Frame: geom.NewFrame(fmt.Sprintf("f%d", step), sc.display, b, content),
		Step:  step,
		Ref:   fmt.Sprintf("images/step-%03d.png", step),
	}
}

func defaultScreen() screen {
	return screen{
		display: geom.Display{ID: "1", Name: "RIGHT", Bounds: geom.Rect{X: 1920, Y: 0, W: 1920, H: 1080}, Scale: 1},
		box:     geom.Rect{X: 1920 + 1500, Y: 800, W: 90, H: 40},
	}
}

func newAdapter(t *testing.T, srv *fakellm.AnthropicServer, mutate ...func(*llm.Config)) *anthropic.Adapter {
	t.Helper()
	cfg := llm.Config{
		Provider: "anthropic", Model: "claude-sonnet-4-5", APIKey: testKey, BaseURL: srv.URL,
		Timeout: 10 * time.Second, Retry: llm.RetryPolicy{Attempts: 1},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	a, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a.(*anthropic.Adapter)
}

// findBox is a brain step that clicks the coloured box it sees.
func findBox(t fakellm.Turn) fakellm.Reply {
	c, ok := fakellm.FindColor(t.Image, boxColor, 40)
	if !ok {
		return fakellm.Reply{Status: llm.Failed, Result: "no box on screen"}
	}
	return fakellm.Reply{Observation: "A pink box is on the right.", Actions: []fakellm.BrainAction{fakellm.ClickAt(c)}}
}

// declaredDisplay reads the computer tool's declared size from a request body.
func declaredDisplay(t *testing.T, body []byte) (tool string, size geom.Size) {
	t.Helper()
	var req struct {
		Tools []struct {
			Type string `json:"type"`
			W    int    `json:"display_width_px"`
			H    int    `json:"display_height_px"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Tools) != 1 {
		t.Fatalf("request has no single tool (%v): %s", err, body)
	}
	return req.Tools[0].Type, geom.Size{W: req.Tools[0].W, H: req.Tools[0].H}
}

func TestTwoStepRunClicksTheBoxOnScreen(t *testing.T) {
	var seen []geom.Size
	brain := fakellm.Script(
		func(t fakellm.Turn) fakellm.Reply { seen = append(seen, t.ImageSize); return findBox(t) },
		func(t fakellm.Turn) fakellm.Reply {
			seen = append(seen, t.ImageSize)
			return fakellm.Finish("Clicked the pink box.")
		},
	)
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv)
	prof := a.Profile()
	if prof.Name != "anthropic" || prof.MaxLongEdge != 1568 {
		t.Fatalf("profile = %+v, want the anthropic row", prof)
	}
	sc := defaultScreen()
	sess := a.NewSession("Click the pink box")
	ctx := context.Background()

	img1 := sc.shot(t, prof, 1)
	if img1.Frame.Content == sc.display.Bounds.Size() {
		t.Fatalf("test screen is not downscaled for the model (%v)", img1.Frame.Content)
	}
	d, err := sess.Next(ctx, llm.Observation{Step: 1, Task: "Click the pink box", Screenshot: img1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != llm.Continue || len(d.Actions) != 1 || d.Actions[0].Kind != action.Click {
		t.Fatalf("decision = %+v, want one click", d)
	}
	at := d.Actions[0].At
	ip := geom.SpaceToImage(at.Space, at.X, at.Y, img1.Frame)
	res, err := img1.Frame.Resolve(ip, true)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.box.Contains(res.Global) {
		t.Fatalf("click at model %v -> global %v misses the box %v", d.Actions[0].At, res.Global, sc.box)
	}
	tool, size := declaredDisplay(t, srv.Requests()[0].Body)
	if tool != anthropic.Tool20250124 || size != img1.Frame.ImageSize() || seen[0] != size {
		t.Fatalf("declared %s %v, image sent %v, model saw %v: all must match", tool, size, img1.Frame.ImageSize(), seen[0])
	}
	if d.Usage.Calls != 1 || d.Usage.InputTokens <= 0 || d.Usage.OutputTokens <= 0 {
		t.Fatalf("usage = %+v", d.Usage)
	}

	d, err = sess.Next(ctx, llm.Observation{Step: 2, Screenshot: sc.shot(t, prof, 2), Feedback: "click ok"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != llm.Done || d.Result != "Clicked the pink box." {
		t.Fatalf("decision = %+v, want done with the result", d)
	}
	if got := srv.Calls(); got != 2 {
		t.Fatalf("server calls = %d, want 2", got)
	}
}

func TestGoldenRequests(t *testing.T) {
	brain := fakellm.Script(
		func(fakellm.Turn) fakellm.Reply {
			at := image.Point{X: 100, Y: 200}
			return fakellm.Reply{Observation: "A form.", Actions: []fakellm.BrainAction{
				fakellm.ClickAt(at), fakellm.TypeText("hello"), fakellm.PressKeys("ctrl", "s"),
			}}
		},
		fakellm.Fixed(fakellm.Finish("saved")),
	)
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv)
	sc := defaultScreen()
	sess := a.NewSession("Type hello and save")
	for step := 1; step <= 2; step++ {
		d, err := sess.Next(context.Background(), llm.Observation{Step: step, Screenshot: sc.shot(t, a.Profile(), step),
			Warnings: map[bool][]string{true: {"the screen did not change"}}[step == 2]})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(d.Request, []byte(testKey)) || bytes.Contains(d.Response, []byte(testKey)) {
			t.Fatal("the API key is in the recorded bodies")
		}
		if !bytes.Contains(d.Request, []byte(fmt.Sprintf("images/step-%03d.png", step))) {
			t.Fatalf("step %d request does not name its image by Ref", step)
		}
		if bytes.Contains(d.Request, []byte("iVBOR")) { // PNG magic in base64
			t.Fatalf("step %d recorded request still holds image data", step)
		}
		golden.JSON(t, fmt.Sprintf("request_step%d.json", step), d.Request, *update)
	}
}

// requestMessages decodes the messages of a recorded request.
func requestMessages(t *testing.T, body []byte) []struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
} {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return req.Messages
}

func TestBatchedToolUsesAreOneStepAndAllAnswered(t *testing.T) {
	brain := fakellm.Script(
		func(fakellm.Turn) fakellm.Reply {
			return fakellm.Reply{Actions: []fakellm.BrainAction{
				fakellm.ClickAt(image.Point{X: 10, Y: 20}), fakellm.TypeText("Ada"),
				{Kind: action.KeyPress, Keys: []string{"Tab"}}, fakellm.TypeText("Lovelace"),
				{Kind: action.Scroll, At: &image.Point{X: 30, Y: 40}, Direction: "down", Amount: 5, Keys: []string{"shift"}},
			}}
		},
		fakellm.Fixed(fakellm.Finish("filled")),
	)
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv)
	sess := a.NewSession("fill the form")
	sc := defaultScreen()
	d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: sc.shot(t, a.Profile(), 1)})
	if err != nil {
		t.Fatal(err)
	}
	want := []action.Raw{
		{Kind: action.Click, At: []float64{10, 20}, Button: "left", Clicks: 1},
		{Kind: action.TypeText, Text: "Ada"},
		{Kind: action.KeyPress, Keys: []string{"Tab"}},
		{Kind: action.TypeText, Text: "Lovelace"},
		{Kind: action.Scroll, At: []float64{30, 40}, Direction: "down", Amount: 5, Keys: []string{"shift"}},
	}
	if len(d.Actions) != len(want) {
		t.Fatalf("got %d actions, want %d: %+v", len(d.Actions), len(want), d.Actions)
	}
	ids := map[string]bool{}
	for i, w := range want {
		g := d.Actions[i]
		ids[g.CallID] = true
		g.CallID = ""
		if !actiontest.Same(t, []action.Action{g}, []action.Raw{w}, geom.SpaceImage) {
			t.Errorf("action %d differs", i)
		}
	}
	if len(ids) != 5 {
		t.Fatalf("actions carry %d distinct tool_use ids, want 5", len(ids))
	}
	if err := llm.ValidateDecision(d); err != nil {
		t.Fatalf("decision does not validate: %v", err)
	}
	if _, err := sess.Next(context.Background(), llm.Observation{Step: 2, Screenshot: sc.shot(t, a.Profile(), 2)}); err != nil {
		t.Fatal(err)
	}
	msgs := requestMessages(t, srv.Requests()[1].Body)
	last := msgs[len(msgs)-1]
	if last.Role != "user" || len(last.Content) != 5 {
		t.Fatalf("second request's last message has %d blocks, want 5 tool_results", len(last.Content))
	}
	for i, c := range last.Content {
		var r struct {
			Type    string `json:"type"`
			Content []struct {
				Type string `json:"type"`
			} `json:"content"`
		}
		_ = json.Unmarshal(c, &r)
		hasImage := false
		for _, x := range r.Content {
			hasImage = hasImage || x.Type == "image"
		}
		if r.Type != "tool_result" || hasImage != (i == 4) {
			t.Errorf("block %d: type %s, image %v; want tool_result with the screenshot only on the last", i, r.Type, hasImage)
		}
	}
}

func TestBlockedAndFailedAnswers(t *testing.T) {
	for _, tc := range []struct {
		rep        fakellm.Reply
		want       llm.Status
		wantResult string
	}{
		{fakellm.Reply{Status: llm.Blocked, Result: "Log in with your password, then run the task again."}, llm.Blocked, "Log in with your password, then run the task again."},
		{fakellm.Reply{Raw: "The login page is shown.\n\nBLOCKED: Log in, then run the task again."}, llm.Blocked, "Log in, then run the task again."},
		{fakellm.Reply{Status: llm.Failed, Result: "The file does not exist."}, llm.Failed, "The file does not exist."},
		{fakellm.Reply{Raw: "The invoice total is 42.10 EUR."}, llm.Done, "The invoice total is 42.10 EUR."},
	} {
		srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(tc.rep)))
		a := newAdapter(t, srv)
		d, err := a.NewSession("task").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != tc.want || d.Result != tc.wantResult || len(d.Actions) != 0 {
			t.Errorf("reply %+v: got status %s result %q, want %s %q", tc.rep, d.Status, d.Result, tc.want, tc.wantResult)
		}
		if tc.want == llm.Blocked && (d.BlockReason == "" || d.NextUserAction == "") {
			t.Errorf("blocked decision lacks block reason or next user action: %+v", d)
		}
	}
}

func TestProviderErrorsAreRetryableAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		status  int
		typ     string
		retryIn string
		wantDur time.Duration
	}{
		{529, "overloaded_error", "", 0},
		{429, "rate_limit_error", "2", 2 * time.Second},
	} {
		srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{HTTPStatus: tc.status, RetryAfter: tc.retryIn, Result: "slow down"})))
		a := newAdapter(t, srv)
		_, err := a.NewSession("task").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)})
		calls := srv.Calls()
		srv.Close()
		var ae *llm.APIError
		if !errors.As(err, &ae) {
			t.Fatalf("HTTP %d: error %v is not an *llm.APIError", tc.status, err)
		}
		if calls != 1 {
			t.Errorf("HTTP %d: %d requests with one attempt allowed: the SDK retried on its own", tc.status, calls)
		}
		if ae.StatusCode != tc.status || ae.Type != tc.typ || ae.Message != "slow down" || ae.RetryAfter != tc.wantDur || !ae.Retryable() {
			t.Errorf("HTTP %d: got %+v (retryable %v)", tc.status, ae, ae.Retryable())
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("error text contains the API key: %v", err)
		}
	}
	srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{HTTPStatus: 401, Result: "invalid x-api-key"})))
	defer srv.Close()
	a := newAdapter(t, srv)
	_, err := a.NewSession("task").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)})
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Type != "authentication_error" || ae.Retryable() {
		t.Fatalf("401: got %v, want a non-retryable authentication_error", err)
	}
}

func TestRetryThenSuccessResendsTheSameExchange(t *testing.T) {
	brain := fakellm.Script(
		fakellm.Fixed(fakellm.Reply{HTTPStatus: 529}),
		findBox,
	)
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv, func(c *llm.Config) {
		c.Retry = llm.RetryPolicy{Attempts: 3, Base: time.Millisecond, Max: 5 * time.Millisecond}
	})
	d, err := a.NewSession("click").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Actions) != 1 || srv.Calls() != 2 {
		t.Fatalf("actions %d, calls %d: want 1 action after 2 calls", len(d.Actions), srv.Calls())
	}
	r := srv.Requests()
	if !bytes.Equal(r[0].Body, r[1].Body) {
		t.Fatal("the retried request differs from the first")
	}
}

func TestOldScreenshotsArePruned(t *testing.T) {
	brain := fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{{Kind: action.Wait, Amount: 1}}}))
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv, func(c *llm.Config) { c.KeepImages = 2 })
	sess := a.NewSession("watch")
	sc := defaultScreen()
	for step := 1; step <= 5; step++ {
		if _, err := sess.Next(context.Background(), llm.Observation{Step: step, Screenshot: sc.shot(t, a.Profile(), step)}); err != nil {
			t.Fatal(err)
		}
	}
	body := srv.Requests()[4].Body
	if n := bytes.Count(body, []byte(`"type":"image"`)); n != 2 {
		t.Fatalf("5th request carries %d images, want 2", n)
	}
	for _, step := range []int{1, 2, 3} {
		if !bytes.Contains(body, []byte(fmt.Sprintf("screenshot of step %d omitted", step))) {
			t.Errorf("5th request lacks the note for pruned step %d", step)
		}
	}
	first, last := srv.Requests()[1].InputTokens, srv.Requests()[4].InputTokens
	if last > first*2 {
		t.Errorf("input tokens grew from %d (step 2) to %d (step 5) despite pruning", first, last)
	}
}

func TestInvalidActionIsReAskedWithAnErrorResult(t *testing.T) {
	brain := fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{
			fakellm.TypeText("x"),
			{Kind: action.Scroll, At: &image.Point{X: 5, Y: 5}, Direction: "sideways"},
		}}),
		fakellm.Fixed(fakellm.Finish("ok")),
	)
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv)
	sess := a.NewSession("scroll")
	sc := defaultScreen()
	d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: sc.shot(t, a.Profile(), 1)})
	if !errors.Is(err, llm.ErrBadOutput) || !strings.Contains(err.Error(), "sideways") {
		t.Fatalf("err = %v, want ErrBadOutput naming the bad direction", err)
	}
	if d != nil && len(d.Actions) != 0 {
		t.Fatalf("a partly valid answer returned actions: %+v", d.Actions)
	}
	d, err = sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: sc.shot(t, a.Profile(), 1), ReAsk: true, Feedback: err.Error()})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != llm.Done {
		t.Fatalf("status %s after re-ask", d.Status)
	}
	body := srv.Requests()[1].Body
	if bytes.Count(body, []byte(`"is_error":true`)) != 2 || !bytes.Contains(body, []byte("not executed")) {
		t.Fatalf("re-ask request does not answer both tool_uses as errors: %s", body)
	}
}

func TestZoomToolVersion(t *testing.T) {
	brain := fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{
		{Kind: action.Zoom, At: &image.Point{X: 10, Y: 10}, To: &image.Point{X: 210, Y: 110}},
	}}))
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv, func(c *llm.Config) { c.Model = "claude-opus-4-5-20251101" })
	if a.ToolVersion() != anthropic.Tool20251124 {
		t.Fatalf("tool version %s for Opus 4.5", a.ToolVersion())
	}
	sess := a.NewSession("read")
	d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Actions) != 1 || d.Actions[0].Kind != action.Zoom || fmt.Sprint(*d.Actions[0].At, *d.Actions[0].To) != "(10,10) (210,110)" {
		t.Fatalf("actions = %+v, want one zoom of the region", d.Actions)
	}
	r := srv.Requests()[0]
	if got := r.Header.Get("Anthropic-Beta"); !strings.Contains(got, anthropic.Beta20251124) {
		t.Fatalf("beta header %q", got)
	}
	if !bytes.Contains(r.Body, []byte(`"enable_zoom":true`)) {
		t.Fatal("computer_20251124 tool is declared without enable_zoom")
	}

	// The loop hands the zoomed region back as the last earlier image (a
	// partial frame); it answers the zoom tool_use, before the screenshot.
	sc := defaultScreen()
	zoom := sc.shot(t, a.Profile(), 1)
	zoom.Frame.Region = geom.Rect{X: sc.display.Bounds.X + 14, Y: 14, W: 280, H: 140}
	zoom.Frame.Content, zoom.Frame.Prepared = geom.Size{W: 560, H: 280}, geom.Size{W: 560, H: 280}
	zoom.Ref = "images/step-001-zoom-1.png"
	zoom.Data = append([]byte(nil), zoom.Data...)
	zoom.Data[len(zoom.Data)-1] ^= 1 // different bytes from the screenshot
	full := sc.shot(t, a.Profile(), 2)
	d, err = sess.Next(context.Background(), llm.Observation{Step: 2, Screenshot: full, Recent: []llm.Image{zoom}})
	if err != nil {
		t.Fatal(err)
	}
	if _, size := declaredDisplay(t, d.Request); size != full.Frame.ImageSize() {
		t.Fatalf("display declared %v after a zoom, want the full screenshot's %v", size, full.Frame.ImageSize())
	}
	msgs := requestMessages(t, d.Request)
	last := string(msgs[len(msgs)-1].Content[0])
	iz, is := strings.Index(last, zoom.Ref), strings.Index(last, full.Ref)
	if !strings.Contains(last, `"tool_result"`) || iz < 0 || is < 0 || iz > is {
		t.Fatalf("zoom tool_result should carry the zoom image then the screenshot: %s", last)
	}
}

func TestToolVersionFor(t *testing.T) {
	for model, want := range map[string]string{
		"claude-opus-4-5-20251101": anthropic.Tool20251124,
		"claude-opus-4-6":          anthropic.Tool20251124,
		"claude-sonnet-4-6":        anthropic.Tool20251124,
		"claude-opus-4-7":          anthropic.Tool20251124,
		"claude-opus-4-8":          anthropic.Tool20251124,
		// Every Claude 5.x family, and the ids cloud platforms use for them.
		"anthropic/claude-sonnet-5":                    anthropic.Toolset20260801,
		"claude-sonnet-5-5":                            anthropic.Toolset20260801,
		"claude-opus-5-5":                              anthropic.Toolset20260801,
		"claude-haiku-5-5":                             anthropic.Toolset20260801,
		"claude-fable-5-1":                             anthropic.Toolset20260801,
		"claude-mythos-5":                              anthropic.Toolset20260801,
		"us.anthropic.claude-sonnet-5-5-20260901-v1:0": anthropic.Toolset20260801,
		"global.anthropic.claude-opus-5":               anthropic.Toolset20260801,
		"claude-sonnet-5-5@20260901":                   anthropic.Toolset20260801,
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0": anthropic.Tool20250124,
		"claude-opus-4-6@20260201":                     anthropic.Tool20251124,
		"claude-sonnet-4-5-20250929":                   anthropic.Tool20250124,
		"claude-haiku-4-5":                             anthropic.Tool20250124,
		"claude-sonnet-4-20250514":                     anthropic.Tool20250124,
		"claude-opus-4-1":                              anthropic.Tool20250124,
		"claude-3-7-sonnet-latest":                     anthropic.Tool20250124,
	} {
		if got := anthropic.ToolVersionFor(model); got != want {
			t.Errorf("ToolVersionFor(%q) = %s, want %s", model, got, want)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  llm.Config
		want string
	}{
		{llm.Config{APIKey: "k", Vars: llm.Vars{Model: "GUI_AGENT_MODEL"}}, "GUI_AGENT_MODEL"},
		{llm.Config{Model: "claude-sonnet-4-5", Vars: llm.Vars{APIKey: "GUI_AGENT_API_KEY"}}, "GUI_AGENT_API_KEY"},
		{llm.Config{Model: "claude-sonnet-4-5"}, "Config.APIKey"},
		{llm.Config{Model: "claude-sonnet-4-5", APIKey: "k", ToolVersion: "computer_2099"}, "computer_20250124"},
	} {
		_, err := anthropic.New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) error = %v, want one mentioning %s", tc.cfg, err, tc.want)
		}
	}
}

func TestCursorPositionAndScreenshotAreAnsweredNextStep(t *testing.T) {
	brain := fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{{Kind: fakellm.AskCursor}, {Kind: fakellm.AskScreenshot}}}),
		func(t fakellm.Turn) fakellm.Reply {
			if !strings.Contains(t.Prompt, "X=12,Y=34") {
				return fakellm.Reply{Status: llm.Failed, Result: "no cursor position in the prompt"}
			}
			return fakellm.Finish("the cursor is at 12,34")
		},
	)
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv)
	sess := a.NewSession("where is the cursor")
	sc := defaultScreen()
	d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: sc.shot(t, a.Profile(), 1)})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing to do on screen: one no-op wait keeps the decision valid.
	if d.Status != llm.Continue || len(d.Actions) != 1 || d.Actions[0].Kind != action.Wait || d.Actions[0].Duration != 0 {
		t.Fatalf("decision = %+v", d)
	}
	if err := llm.ValidateDecision(d); err != nil {
		t.Fatal(err)
	}
	d, err = sess.Next(context.Background(), llm.Observation{Step: 2, Screenshot: sc.shot(t, a.Profile(), 2), Cursor: &geom.ImagePoint{X: 12, Y: 34}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != llm.Done {
		t.Fatalf("decision = %+v: the model did not get the cursor position", d)
	}
}

func TestHungRequestTimesOut(t *testing.T) {
	srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Delay: time.Minute})))
	defer srv.Close()
	a := newAdapter(t, srv, func(c *llm.Config) { c.Timeout = 300 * time.Millisecond })
	_, err := a.NewSession("x").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)})
	var ae *llm.APIError
	if err == nil || errors.As(err, &ae) || !llm.Retryable(err) {
		t.Fatalf("hung server: err = %v, want a retryable timeout", err)
	}
	if !strings.Contains(err.Error(), "timed out after 300ms") || strings.Contains(err.Error(), "network") {
		t.Fatalf("hung server: err = %v, want a timeout naming the limit (not a network failure)", err)
	}
}

// BenchmarkSessionStep measures one step through the adapter and a local fake
// server (request building, SDK encoding, body capture, image elision), with
// three screenshots kept in the conversation.
func BenchmarkSessionStep(b *testing.B) {
	srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Point{X: 5, Y: 5})}})))
	defer srv.Close()
	a, err := anthropic.New(llm.Config{Model: "claude-sonnet-4-5", APIKey: testKey, BaseURL: srv.URL, Retry: llm.RetryPolicy{Attempts: 1}})
	if err != nil {
		b.Fatal(err)
	}
	img := defaultScreen().shot(b, a.Profile(), 1)
	sess := a.NewSession("bench")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		img.Step = i + 1
		if _, err := sess.Next(context.Background(), llm.Observation{Step: i + 1, Screenshot: img}); err != nil {
			b.Fatal(err)
		}
	}
}
