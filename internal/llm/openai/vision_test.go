package openai

import (
	"context"
	"encoding/json"
	"errors"
	"image"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/vision"
)

var (
	visionDisplay = geom.Display{ID: "0", Bounds: geom.Rect{X: -1280, Y: 0, W: 1280, H: 800}, Primary: true}
	submitBox     = box{image.Rect(700, 520, 860, 570), sampleapp.SubmitColor.ToRGBA()}
	nameBox       = box{image.Rect(300, 200, 700, 240), sampleapp.NameFieldColor.ToRGBA()}
)

// visionService starts a chat server with the colour vision brain and
// returns a vision.Service over NewVisionModel for model.
func visionService(t *testing.T, model string, opts fakellm.ChatOptions) (*vision.Service, *fakellm.ChatServer, geom.Profile) {
	t.Helper()
	p, err := llm.ProfileFor(llm.AdapterGeneric, model, "")
	if err != nil {
		t.Fatal(err)
	}
	opts.Profile = p
	srv := fakellm.NewChatServer(fakellm.VisionBrain(fakellm.SampleAppWidgets), opts)
	t.Cleanup(srv.Close)
	m, err := NewVisionModel(llm.Config{Provider: "openai", Model: model, BaseURL: srv.URL, Profile: &p})
	if err != nil {
		t.Fatal(err)
	}
	s, err := vision.NewService(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv, p
}

// locateOnScreen locates target and returns the box centre resolved to the screen.
func locateOnScreen(t *testing.T, s *vision.Service, img llm.Image, target string) (vision.Location, geom.GlobalPoint) {
	t.Helper()
	loc, _, err := s.Locate(context.Background(), img, target)
	if err != nil {
		t.Fatalf("Locate(%q): %v", target, err)
	}
	if !loc.Found {
		t.Fatalf("Locate(%q) not found: %s", target, loc.Reason)
	}
	r, err := img.Frame.Resolve(loc.Box.Center(), true)
	if err != nil {
		t.Fatal(err)
	}
	return loc, r.Global
}

func TestVisionLocateEveryConvention(t *testing.T) {
	for _, c := range []struct {
		model  string
		format fakellm.ChatFormat
	}{
		{"gpt-4.1", fakellm.ChatJSON},                 // pixels, response_format
		{"glm-4.5v", fakellm.ChatJSON},                // 0-1000
		{"gemini-2.5-flash", fakellm.ChatJSON},        // [ymin, xmin, ymax, xmax] 0-1000
		{"ui-tars-1.5-7b", fakellm.ChatUITARS},        // native point, smart-resized pixels
		{"ui-tars-72b-dpo", fakellm.ChatUITARS},       // native point, 0-1000
		{"qwen2.5-vl-72b-instruct", fakellm.ChatQwen}, // native bbox_2d, pixels of a padded image
		{"qwen3-vl-235b-a22b", fakellm.ChatQwen},      // native bbox_2d, 0-1000
	} {
		t.Run(c.model, func(t *testing.T) {
			s, srv, p := visionService(t, c.model, fakellm.ChatOptions{Format: c.format})
			img := shot(t, p, visionDisplay, 1280, 1, submitBox, nameBox)
			loc, g := locateOnScreen(t, s, img, "the Submit button")
			assertOnBox(t, g, visionDisplay, submitBox, 6)
			if loc.Frame != "f1" {
				t.Errorf("frame %q", loc.Frame)
			}
			body := string(srv.Requests()[0].Body)
			native := c.format != fakellm.ChatJSON
			if got := strings.Contains(body, `"json_schema"`); got == native {
				t.Errorf("json_schema in the request = %v, want %v: %s", got, !native, clip(body, 400))
			}
			if native && strings.Contains(body, `"found"`) {
				t.Errorf("the native grounding request asks for the JSON shape: %s", clip(body, 400))
			}
			// Not on the screen: found false, a normal answer.
			loc, _, err := s.Locate(context.Background(), img, "the Cancel button")
			if err != nil || loc.Found {
				t.Errorf("Cancel: %+v %v, want found false", loc, err)
			}
		})
	}
}

func TestVisionAssertAndQueryWithResponseFormat(t *testing.T) {
	s, srv, p := visionService(t, "gpt-4.1", fakellm.ChatOptions{})
	img := shot(t, p, visionDisplay, 1280, 1, submitBox, nameBox)
	v, u, err := s.Assert(context.Background(), img, "the Submit button is visible")
	if err != nil || !v.Pass || u.Calls != 1 {
		t.Fatalf("assert: %+v %+v %v", v, u, err)
	}
	v, _, err = s.Assert(context.Background(), img, "the OK button is visible")
	if err != nil || v.Pass || !strings.Contains(v.Reason, "OK") {
		t.Fatalf("assert OK: %+v %v", v, err)
	}
	a, _, err := s.Query(context.Background(), img, "How many widgets are visible?", json.RawMessage(`{"type":"integer"}`))
	if err != nil || string(a.Data) != "2" {
		t.Fatalf("query: %s %v", a.Data, err)
	}
	var req struct {
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	last := srv.Requests()[len(srv.Requests())-1].Body
	if err := json.Unmarshal(last, &req); err != nil || req.ResponseFormat.Type != "json_schema" ||
		!strings.Contains(string(req.ResponseFormat.JSONSchema.Schema), `"data":{"type":"integer"}`) {
		t.Fatalf("response_format does not carry the query schema: %s", clip(string(last), 600))
	}
}

func TestVisionFallsBackToJSONFromText(t *testing.T) {
	s, srv, p := visionService(t, "gpt-4.1", fakellm.ChatOptions{RejectResponseFormat: true, Fenced: true})
	img := shot(t, p, visionDisplay, 1280, 1, submitBox)
	_, g := locateOnScreen(t, s, img, "the Submit button")
	assertOnBox(t, g, visionDisplay, submitBox, 6)
	if n := srv.Calls(); n != 2 {
		t.Fatalf("first call: %d requests, want 2 (rejected, then without response_format)", n)
	}
	if _, _, err := s.Assert(context.Background(), img, "the form was submitted"); err != nil {
		t.Fatal(err)
	}
	if n := srv.Calls(); n != 3 {
		t.Fatalf("the model asked with response_format again after the server rejected it: %d requests", n)
	}
	if last := string(srv.Requests()[2].Body); !strings.Contains(last, "JSON Schema") || strings.Contains(last, "response_format") {
		t.Errorf("the fallback request does not state the schema in the prompt: %s", clip(last, 400))
	}
}

func TestVisionProseAnswerIsReaskedThenAnError(t *testing.T) {
	srv := fakellm.NewChatServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Raw: "It is probably the blue one."})), fakellm.ChatOptions{})
	defer srv.Close()
	m, err := NewVisionModel(llm.Config{Provider: "openai", Model: "gpt-4.1", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := vision.NewService(m, nil)
	img := shot(t, m.Profile(), visionDisplay, 1280, 1, submitBox)
	_, u, err := s.Assert(context.Background(), img, "the button is blue")
	if !errors.Is(err, vision.ErrBadAnswer) || !strings.Contains(err.Error(), "probably the blue one") || u.Calls != 2 || srv.Calls() != 2 {
		t.Fatalf("want ErrBadAnswer with the model's text after 2 calls, got %v (%d calls)", err, srv.Calls())
	}
}

func TestVisionKeepsResponseFormatAfterAnUnrelatedError(t *testing.T) {
	srv := fakellm.NewChatServer(fakellm.Script(
		fakellm.Fixed(fakellm.Reply{HTTPStatus: 400, Result: "image too large"}),
		fakellm.Fixed(fakellm.Reply{HTTPStatus: 400, Result: "image too large"}),
		fakellm.Fixed(fakellm.Reply{HTTPStatus: 401, Result: "bad key"}),
		fakellm.VisionBrain(fakellm.SampleAppWidgets),
	), fakellm.ChatOptions{})
	defer srv.Close()
	m, err := NewVisionModel(llm.Config{Provider: "openai", Model: "gpt-4.1", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := vision.NewService(m, nil)
	img := shot(t, m.Profile(), visionDisplay, 1280, 1, submitBox)
	if _, _, err := s.Assert(context.Background(), img, "the Submit button is visible"); err == nil || !strings.Contains(err.Error(), "image too large") {
		t.Fatalf("want the server's 400, got %v", err)
	}
	var ae *llm.APIError
	if _, _, err := s.Assert(context.Background(), img, "the Submit button is visible"); !errors.As(err, &ae) || ae.StatusCode != 401 || srv.Calls() != 3 {
		t.Fatalf("a 401 is not a rejected format: %v after %d calls", err, srv.Calls())
	}
	if v, _, err := s.Assert(context.Background(), img, "the Submit button is visible"); err != nil || !v.Pass {
		t.Fatal(v, err)
	}
	if last := string(srv.Requests()[3].Body); !strings.Contains(last, `"json_schema"`) {
		t.Fatalf("after errors unrelated to response_format the model stopped sending it: %s", clip(last, 300))
	}
}
