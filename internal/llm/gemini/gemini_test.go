package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/gemini"
)

const testKey = "AIza-test-SECRET-0123456789"

func shot(t *testing.T, step int) llm.Image {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 1000, 500))
	for i := range img.Pix {
		img.Pix[i] = 240
	}
	img.Set(1, 1, color.RGBA{R: 10, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	d := geom.Display{ID: "1", Bounds: geom.Rect{W: 2000, H: 1000}, Scale: 1}
	return llm.Image{MIME: "image/png", Data: b.Bytes(), Frame: geom.NewFrame("f", d, d.Bounds, geom.Size{W: 1000, H: 500}), Step: step}
}

func newAdapter(t *testing.T, srv *fakellm.GeminiServer, mutate ...func(*llm.Config)) llm.Adapter {
	t.Helper()
	cfg := llm.Config{Provider: "gemini", Model: gemini.Example, APIKey: testKey, BaseURL: srv.URL,
		Timeout: 10 * time.Second, Retry: llm.RetryPolicy{Attempts: 1}}
	for _, m := range mutate {
		m(&cfg)
	}
	a, err := gemini.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestClickThenTypeWithEnter: click_at, then type_text_at with press_enter,
// on the 0-999 grid; the function responses carry the screenshot, and the
// request declares the desktop environment without the browser functions.
func TestClickThenTypeWithEnter(t *testing.T) {
	srv := fakellm.NewGeminiServer(fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Pt(500, 250))}}),
		fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{{Kind: action.TypeText, Text: "Ada", At: &image.Point{X: 500, Y: 250}}, fakellm.PressKeys("Return")}}),
		fakellm.Fixed(fakellm.Finish("typed")),
	))
	defer srv.Close()
	a := newAdapter(t, srv)
	if a.Profile().Name != "gemini-computer-use" {
		t.Fatalf("profile %s", a.Profile().Name)
	}
	sess := a.NewSession("type Ada")
	d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: shot(t, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Actions) != 1 || d.Actions[0].Kind != action.Click || d.Actions[0].At.X != 500 || d.Actions[0].At.Y != 500 || d.Actions[0].At.Space != geom.SpaceNorm1000 {
		t.Fatalf("click_at = %+v, want a click at (500, 500) on the grid", d.Actions)
	}
	if p, err := d.Actions[0].At.Resolve(shot(t, 1).Frame, []geom.Display{shot(t, 1).Frame.Display}, 0); err != nil || p.Global.X != 1000 || p.Global.Y != 500 {
		t.Fatalf("the grid point resolves to %+v (%v), want the screen's centre (1000, 500)", p, err)
	}
	d, err = sess.Next(context.Background(), llm.Observation{Step: 2, Screenshot: shot(t, 2)})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, x := range d.Actions {
		kinds = append(kinds, x.String())
	}
	if len(d.Actions) != 3 || d.Actions[0].Kind != action.Click || d.Actions[1].Text != "Ada" || d.Actions[2].Keys[0] != "Return" {
		t.Fatalf("type_text_at = %v, want click, type Ada, Return", kinds)
	}
	if d, err = sess.Next(context.Background(), llm.Observation{Step: 3, Screenshot: shot(t, 3)}); err != nil || d.Status != llm.Done {
		t.Fatalf("final: %+v %v", d, err)
	}
	var req struct {
		Tools []struct {
			ComputerUse struct {
				Environment string   `json:"environment"`
				Excluded    []string `json:"excludedPredefinedFunctions"`
			} `json:"computerUse"`
		} `json:"tools"`
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					Name  string            `json:"name"`
					Parts []json.RawMessage `json:"parts"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(srv.Requests()[1].Body, &req); err != nil {
		t.Fatal(err)
	}
	cu := req.Tools[0].ComputerUse
	if cu.Environment != "ENVIRONMENT_DESKTOP" || strings.Join(cu.Excluded, ",") != strings.Join(gemini.BrowserFunctions, ",") {
		t.Fatalf("computerUse = %+v, want the desktop without the browser functions", cu)
	}
	fr := req.Contents[2].Parts[0].FunctionResponse
	if fr == nil || fr.Name != "click_at" || len(fr.Parts) != 1 || !strings.Contains(string(fr.Parts[0]), "inlineData") {
		t.Fatalf("the click_at response is %+v, want the screenshot inline", fr)
	}
}

// TestConfirmationApprovedAndDeclined: a call with safety_decision
// require_confirmation asks the person; approved, the held actions run and
// the response acknowledges the call; declined, the run is blocked and
// nothing runs.
func TestConfirmationApprovedAndDeclined(t *testing.T) {
	for _, approve := range []bool{true, false} {
		srv := fakellm.NewGeminiServer(fakellm.Script(
			fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Pt(100, 100))}}),
			fakellm.Fixed(fakellm.Finish("accepted")),
		))
		srv.Confirm = func(t fakellm.Turn) string {
			if t.Step == 1 {
				return "Accepting the terms is a consequential action."
			}
			return ""
		}
		a := newAdapter(t, srv)
		sess := a.NewSession("accept")
		d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: shot(t, 1)})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Actions) != 1 || d.Actions[0].Kind != action.AskUser || d.Actions[0].Ask != action.AskConfirm || !strings.Contains(d.Actions[0].Question, "consequential") {
			t.Fatalf("the confirmation is %+v, want one confirm question", d.Actions)
		}
		ans := llm.Answer{Ask: d.Actions[0], Approved: approve, Text: map[bool]string{true: "yes", false: "no"}[approve]}
		d, err = sess.Next(context.Background(), llm.Observation{Step: 2, Screenshot: shot(t, 2), Answers: []llm.Answer{ans}})
		if err != nil {
			t.Fatal(err)
		}
		if !approve {
			if d.Status != llm.Blocked || len(d.Actions) != 0 || !strings.Contains(d.BlockReason, "declined") {
				t.Fatalf("declined: %+v, want blocked with no action", d)
			}
			if srv.Calls() != 1 {
				t.Fatalf("declined: %d model calls, want 1", srv.Calls())
			}
			srv.Close()
			continue
		}
		if !d.Released || len(d.Actions) != 1 || d.Actions[0].Kind != action.Click {
			t.Fatalf("approved: %+v, want the held click released", d)
		}
		if d, err = sess.Next(context.Background(), llm.Observation{Step: 3, Screenshot: shot(t, 3)}); err != nil || d.Status != llm.Done {
			t.Fatalf("after approval: %+v %v (the fake refuses a response without the acknowledgement)", d, err)
		}
		if !strings.Contains(string(srv.Requests()[1].Body), `"safety_acknowledgement":"true"`) {
			t.Fatal("the approved call was not acknowledged")
		}
		srv.Close()
	}
}

// TestDisabledKindsExcludeTheirFunctions: GUI_AGENT_DISABLE_ACTIONS drag
// excludes drag_and_drop too, and a model calling it anyway is refused.
func TestDisabledKindsExcludeTheirFunctions(t *testing.T) {
	got := gemini.Excluded([]action.Kind{action.Drag})
	if !strings.Contains(strings.Join(got, ","), "drag_and_drop") || !strings.Contains(strings.Join(got, ","), "navigate") {
		t.Fatalf("excluded = %v", got)
	}
	srv := fakellm.NewGeminiServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{
		{Kind: action.Drag, At: &image.Point{X: 1, Y: 1}, To: &image.Point{X: 9, Y: 9}}}})))
	defer srv.Close()
	a := newAdapter(t, srv, func(c *llm.Config) { c.Disabled = []action.Kind{action.Drag} })
	if _, err := a.NewSession("t").Next(context.Background(), llm.Observation{Step: 1, Screenshot: shot(t, 1)}); err == nil || !strings.Contains(err.Error(), "excluded") {
		t.Fatalf("an excluded function reached the model: %v", err)
	}
}

// TestGeminiFakeIsAsStrictAsTheAPI: a confirmed call answered without the
// acknowledgement, a call left unanswered, a response to no call and an
// unknown environment are refused.
func TestGeminiFakeIsAsStrictAsTheAPI(t *testing.T) {
	srv := fakellm.NewGeminiServer(fakellm.Script(fakellm.Fixed(fakellm.Finish("ok"))))
	defer srv.Close()
	post := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1beta/models/"+gemini.Example+":generateContent", strings.NewReader(body))
		req.Header.Set("x-goog-api-key", "k")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	tool := `"tools":[{"computerUse":{"environment":"ENVIRONMENT_DESKTOP"}}]`
	user := `{"role":"user","parts":[{"text":"go"}]}`
	call := func(confirm bool) string {
		args := `{"x":1,"y":2}`
		if confirm {
			args = `{"x":1,"y":2,"safety_decision":{"decision":"require_confirmation","explanation":"sure?"}}`
		}
		return `{"role":"model","parts":[{"functionCall":{"id":"c1","name":"click_at","args":` + args + `}}]}`
	}
	resp := func(ack bool) string {
		r := `{"output":"done"}`
		if ack {
			r = `{"output":"done","safety_acknowledgement":"true"}`
		}
		return `{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"click_at","response":` + r + `}}]}`
	}
	body := func(contents ...string) string {
		return `{` + tool + `,"contents":[` + strings.Join(contents, ",") + `]}`
	}
	if code, b := post(body(user, call(true), resp(true))); code != 200 {
		t.Fatalf("an acknowledged confirmation: %d %s", code, b)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"a confirmed call without the acknowledgement", body(user, call(true), resp(false)), "safety_acknowledgement"},
		{"a call left unanswered", body(user, call(false), user), "no functionResponse"},
		{"a response to no call", body(user, `{"role":"model","parts":[{"text":"hm"}]}`, resp(false)), "answers no function call"},
		{"an unknown environment", `{"tools":[{"computerUse":{"environment":"ENVIRONMENT_MOON"}}],"contents":[` + user + `]}`, "not a valid environment"},
		{"an unknown excluded function", `{"tools":[{"computerUse":{"environment":"ENVIRONMENT_DESKTOP","excludedPredefinedFunctions":["teleport"]}}],"contents":[` + user + `]}`, "not a predefined function"},
	} {
		if code, b := post(tc.body); code != 400 || !strings.Contains(b, tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.name, code, b, tc.want)
		}
	}
}

// TestVisionAsksWithResponseSchema: the vision model constrains the answer
// with responseJsonSchema and returns the JSON.
func TestVisionAsksWithResponseSchema(t *testing.T) {
	srv := fakellm.NewGeminiServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Answer: map[string]any{"pass": true, "reason": "it is there"}})))
	defer srv.Close()
	m, err := gemini.NewVisionModel(llm.Config{Model: "gemini-2.5-flash", APIKey: testKey, BaseURL: srv.URL, Retry: llm.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"pass":{"type":"boolean"},"reason":{"type":"string"}},"required":["pass","reason"]}`)
	out, u, err := m.Ask(context.Background(), shot(t, 1), "You check screens.", "Is the red dot there?", schema)
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Pass bool `json:"pass"`
	}
	if json.Unmarshal(out, &ans) != nil || !ans.Pass || u.Calls != 1 {
		t.Fatalf("answer %s usage %+v", out, u)
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `"responseJsonSchema"`) {
		t.Fatal("the request has no responseJsonSchema")
	}
	tm, err := gemini.NewTextModel(llm.Config{Model: "gemini-2.5-flash", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tm.Complete(context.Background(), "", ""); err == nil {
		t.Fatal("an empty prompt was sent")
	}
}
