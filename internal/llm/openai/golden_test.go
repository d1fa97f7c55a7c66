package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

var update = flag.Bool("update", false, "rewrite the golden request files in testdata/")

var dataURL = regexp.MustCompile(`data:image/[a-z]+;base64,[A-Za-z0-9+/=]+`)

// checkGolden compares the recorded request (pretty-printed) with
// testdata/name, and checks that it is exactly what the server received with
// image data replaced by references.
func checkGolden(t *testing.T, name string, recorded, received []byte) {
	t.Helper()
	if bytes.Contains(recorded, []byte(";base64,")) {
		t.Fatalf("recorded request embeds image data; it must use Image.Ref")
	}
	var a, b any
	if err := json.Unmarshal(recorded, &a); err != nil {
		t.Fatalf("recorded request is not JSON: %v", err)
	}
	if err := json.Unmarshal(dataURL.ReplaceAll(received, []byte("IMAGE")), &b); err != nil {
		t.Fatalf("received request is not JSON: %v", err)
	}
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	refs := regexp.MustCompile(`"(images/step-\d+\.png)"`)
	if got, want := refs.ReplaceAll(ra, []byte(`"IMAGE"`)), rb; !bytes.Equal(got, want) {
		t.Fatalf("recorded request differs from the body the server received:\nrecorded %s\nreceived %s", got, want)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(a); err != nil {
		t.Fatal(err)
	}
	pretty := buf.Bytes()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/llm/openai -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(pretty, want) {
		t.Fatalf("request differs from %s (rerun with -update if the change is intended):\n%s", path, pretty)
	}
}

// redirect sends every request to the server at to, noting the original host.
type redirect struct{ to string }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	u, err := url.Parse(r.to)
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("X-Original-Host", req.URL.Host)
	req.URL.Scheme, req.URL.Host, req.Host = u.Scheme, u.Host, u.Host
	return http.DefaultTransport.RoundTrip(req)
}

func lastBody(t *testing.T, s *fakellm.ChatServer) []byte {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("server received no request")
	}
	r := reqs[len(reqs)-1]
	if r.Header.Get("Authorization") != "" {
		t.Fatal("fake server recorded the Authorization header")
	}
	return r.Body
}

var screen = geom.Display{ID: "0", Bounds: geom.Rect{W: 1280, H: 800}, Scale: 1, Primary: true}

func TestGoldenGenericRequest(t *testing.T) {
	srv := fakellm.NewChatServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{
		Actions: []fakellm.BrainAction{fakellm.TypeText("hello")}, Memory: []string{"form is open"},
	})), fakellm.ChatOptions{})
	defer srv.Close()
	// Provider openai with no base URL goes to api.openai.com; the transport
	// sends that host to the fake server instead.
	hc := &http.Client{Transport: redirect{to: srv.Root}}
	ad, err := NewGeneric(llm.Config{Provider: "openai", Model: "gpt-4.1", APIKey: "sk-golden-key", HTTPClient: hc, KeepImages: 3, MaxTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	p := ad.Profile()
	var recent []llm.Image
	for st := 1; st <= 4; st++ {
		recent = append(recent, shot(t, p, screen, 1280, st, box{image.Rect(10*st, 10, 10*st+20, 30), red}))
	}
	obs := llm.Observation{
		Step: 5, Task: "Fill in the form",
		Screenshot: shot(t, p, screen, 1280, 5, box{image.Rect(100, 100, 200, 140), blue}),
		Recent:     recent,
		Memory:     "Summary: the form was opened.\nFacts: name field is at the top",
		History:    "step 3: clicked Name -> field focused\nstep 4: typed Ada -> text shown",
		Warnings:   []string{"the screen did not change after step 4"},
		Feedback:   "typed 'Ada' into the focused field",
		Answers: []llm.Answer{{Ask: action.Action{Kind: action.AskUser, Question: "Which country?", Ask: action.AskChoice,
			Options: []string{"France", "Italy"}}, Text: "Italy"}},
	}
	d, err := ad.NewSession("Fill in the form").Next(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Actions) != 1 || d.Actions[0].Text != "hello" || len(d.MemoryUpdate) != 1 {
		t.Fatalf("decision = %+v", d)
	}
	if d.ImageSize == nil || *d.ImageSize != (geom.Size{W: 1280, H: 800}) {
		t.Fatalf("declared image size = %v, want 1280x800", d.ImageSize)
	}
	body := lastBody(t, srv)
	if got := srv.Requests()[0].Header.Get("X-Original-Host"); got != "api.openai.com" {
		t.Fatalf("request went to %q, want the default host api.openai.com", got)
	}
	if !strings.Contains(string(body), `"max_completion_tokens":1000`) || !strings.Contains(string(body), `"detail":"high"`) {
		t.Fatalf("api.openai.com request lacks max_completion_tokens or image detail: %.300s", body)
	}
	if n := strings.Count(string(body), `"type":"image_url"`); n != 3 {
		t.Fatalf("request carries %d images, want KeepImages=3", n)
	}
	if !strings.Contains(string(d.Request), "Screenshots of steps 1, 2 are no longer shown") {
		t.Fatal("dropped screenshots are not named in the text")
	}
	checkGolden(t, "generic_request.json", d.Request, body)
}

func TestGoldenGeminiRequest(t *testing.T) {
	srv := fakellm.NewChatServer(fakellm.Script(fakellm.Fixed(fakellm.Finish("42"))), fakellm.ChatOptions{Profile: geom.ProfileFor("gemini-2.5-pro")})
	defer srv.Close()
	ad, err := NewGeneric(llm.Config{Provider: "gemini", Model: "gemini-2.5-pro", APIKey: "AIzaGoldenKey", BaseURL: srv.Root + "/v1beta/openai/"})
	if err != nil {
		t.Fatal(err)
	}
	obs := llm.Observation{Step: 1, Task: "Read the answer", Screenshot: shot(t, ad.Profile(), screen, 1280, 1)}
	d, err := ad.NewSession("Read the answer").Next(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != llm.Done || d.Result != "42" {
		t.Fatalf("decision = %+v", d)
	}
	if p := srv.Requests()[0].Path; p != "/v1beta/openai/chat/completions" {
		t.Fatalf("request path = %s", p)
	}
	checkGolden(t, "gemini_request.json", d.Request, lastBody(t, srv))
}

func TestGoldenUITARSRequest(t *testing.T) {
	srv := fakellm.NewChatServer(func(turn fakellm.Turn) fakellm.Reply {
		at := image.Pt(50, 60)
		return fakellm.Reply{Observation: "step " + itoa3(turn.Step), Actions: []fakellm.BrainAction{fakellm.ClickAt(at)}}
	}, fakellm.ChatOptions{Format: fakellm.ChatUITARS, Profile: geom.ProfileFor("ui-tars-1.5-7b")})
	defer srv.Close()
	ad, err := NewUITARS(llm.Config{Model: "ui-tars-1.5-7b", BaseURL: srv.URL, KeepImages: 2})
	if err != nil {
		t.Fatal(err)
	}
	sess := ad.NewSession("Open the settings")
	var recent []llm.Image
	var d *llm.Decision
	for st := 1; st <= 3; st++ {
		img := shot(t, ad.Profile(), screen, 0, st)
		o := llm.Observation{Step: st, Task: "Open the settings", Screenshot: img, Recent: recent,
			History: "step " + itoa3(st-1) + ": clicked"}
		if st == 3 {
			o.Answers = []llm.Answer{{Ask: action.Action{Kind: action.AskUser, Question: "Which settings, system or app?"}, Text: "the app's"}}
		}
		d, err = sess.Next(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		recent = append(recent, img)
	}
	if at := d.Actions[0].At; at == nil || at.X != 50 || at.Y != 60 || at.Space != geom.SpaceImage {
		t.Fatalf("click at %v, want pixels (50,60) of the smart-resized image", d.Actions[0].At)
	}
	body := lastBody(t, srv)
	if n := strings.Count(string(body), `"type":"image_url"`); n != 2 {
		t.Fatalf("request carries %d images, want KeepImages=2", n)
	}
	if n := strings.Count(string(body), `"role":"assistant"`); n != 2 {
		t.Fatalf("request replays %d earlier answers, want 2", n)
	}
	checkGolden(t, "uitars_request.json", d.Request, body)
}

func TestGoldenGrounderRequest(t *testing.T) {
	srv := fakellm.NewChatServer(func(turn fakellm.Turn) fakellm.Reply {
		r, _ := fakellm.FindColor(turn.Image, red, 12)
		b, _ := fakellm.FindColor(turn.Image, blue, 12)
		return fakellm.Reply{Actions: []fakellm.BrainAction{{At: &r}, {}, {At: &b}}}
	}, fakellm.ChatOptions{Format: fakellm.ChatPoints, Profile: geom.ProfileFor("qwen3-vl-8b")})
	defer srv.Close()
	g, err := NewGrounder(llm.Config{Provider: "openai", Model: "qwen3-vl-8b", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	redBox, blueBox := box{image.Rect(900, 500, 980, 540), red}, box{image.Rect(40, 700, 120, 760), blue}
	img := shot(t, g.Profile(), screen, 640, 1, redBox, blueBox)
	pts, u, err := g.Ground(context.Background(), img, []string{"the red OK button", "a purple link", "the blue Cancel button"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 3 || pts[1] != nil {
		t.Fatalf("points = %v, want 3 with the second missing", pts)
	}
	assertOnBox(t, pointToGlobal(t, img.Frame, pts[0]), screen, redBox, 3)
	assertOnBox(t, pointToGlobal(t, img.Frame, pts[2]), screen, blueBox, 3)
	if u.Calls != 1 {
		t.Fatalf("usage = %+v, want one call for all targets", u)
	}
	rec := srv.Requests()[0].Body
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(rec, &req)
	body := dataURL.ReplaceAll(rec, []byte("images/step-001.png"))
	checkGolden(t, "grounder_request.json", body, rec)
}

func TestTextModel(t *testing.T) {
	srv := fakellm.NewChatServer(func(turn fakellm.Turn) fakellm.Reply {
		if !strings.Contains(turn.Prompt, "step 1: opened the form") || !strings.Contains(turn.Prompt, "Summarize") {
			return fakellm.Reply{Result: "prompt missing"}
		}
		return fakellm.Reply{Result: "  The form was opened and the name typed.  "}
	}, fakellm.ChatOptions{Format: fakellm.ChatText})
	defer srv.Close()
	tm, err := NewTextModel(llm.Config{Model: "gpt-4.1-mini", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	out, u, err := tm.Complete(context.Background(), "Summarize the steps.", "step 1: opened the form\nstep 2: typed Ada")
	if err != nil {
		t.Fatal(err)
	}
	if out != "The form was opened and the name typed." {
		t.Fatalf("completion = %q", out)
	}
	if u.Calls != 1 || u.InputTokens == 0 || u.OutputTokens == 0 {
		t.Fatalf("usage = %+v", u)
	}
}
