package vision

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// scripted is a Model answering from a list, recording the prompts and schemas.
type scripted struct {
	profile geom.Profile
	answers []string // "ERR:text" is returned as an *AnswerError with that text
	prompts []string
	schemas []string
}

func (m *scripted) Profile() geom.Profile { return m.profile }

func (m *scripted) Ask(_ context.Context, _ llm.Image, _, prompt string, schema json.RawMessage) (json.RawMessage, llm.Usage, error) {
	m.prompts = append(m.prompts, prompt)
	m.schemas = append(m.schemas, string(schema))
	a := m.answers[min(len(m.prompts)-1, len(m.answers)-1)]
	if t, ok := strings.CutPrefix(a, "ERR:"); ok {
		return nil, llm.Usage{Calls: 1}, &AnswerError{Text: t, Problem: "no JSON object in the answer"}
	}
	return json.RawMessage(a), llm.Usage{Calls: 1}, nil
}

func frameImg(w, h int) llm.Image {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: w * 2, H: h * 2}}
	return llm.Image{Frame: geom.NewFrame("f7", d, d.Bounds, geom.Size{W: w, H: h})}
}

func row(name string) geom.Profile {
	for _, p := range geom.Profiles {
		if p.Name == name {
			return p
		}
	}
	panic(name)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1.01 }

func TestLocateConvertsEachConventionToImagePixels(t *testing.T) {
	// The element occupies x 100..200, y 50..90 of an 800x400 image.
	cases := []struct {
		profile string
		box     string
	}{
		{"openai", "[100, 50, 200, 90]"},
		{"normalized-1000", "[125, 125, 250, 225]"},
		{"gemini", "[125, 125, 225, 250]"}, // [ymin, xmin, ymax, xmax]
		{"normalized-1", "[0.125, 0.125, 0.25, 0.225]"},
	}
	for _, c := range cases {
		m := &scripted{profile: row(c.profile), answers: []string{`{"found": true, "box": ` + c.box + `, "reason": "the button"}`}}
		s, _ := NewService(m, nil)
		loc, u, err := s.Locate(context.Background(), frameImg(800, 400), "the OK button")
		if err != nil {
			t.Fatalf("%s: %v", c.profile, err)
		}
		b := loc.Box
		if !loc.Found || !near(b.X1, 100) || !near(b.Y1, 50) || !near(b.X2, 200) || !near(b.Y2, 90) || loc.Frame != "f7" || u.Calls != 1 {
			t.Errorf("%s: got %+v usage %+v, want box (100,50)-(200,90) of frame f7", c.profile, loc, u)
		}
		if c := loc.Box.Center(); !near(c.X, 150) || !near(c.Y, 70) {
			t.Errorf("center %v", c)
		}
		if !strings.Contains(m.prompts[0], "the OK button") || !strings.Contains(m.prompts[0], "800x400") {
			t.Errorf("prompt does not name the target and the image size: %s", m.prompts[0])
		}
	}
}

func TestLocateNotFoundIsAnAnswer(t *testing.T) {
	m := &scripted{profile: row("openai"), answers: []string{`{"found": false, "box": [0,0,0,0], "reason": "no such button"}`}}
	s, _ := NewService(m, nil)
	loc, _, err := s.Locate(context.Background(), frameImg(800, 400), "the Cancel button")
	if err != nil || loc.Found || loc.Reason != "no such button" {
		t.Fatalf("got %+v, %v; want found false with the reason", loc, err)
	}
}

func TestLocateUsesTheGroundingModel(t *testing.T) {
	main := &scripted{profile: row("openai"), answers: []string{`{"pass": true, "reason": "x"}`}}
	ground := &scripted{profile: row("normalized-1000"), answers: []string{`{"found": true, "box": [0, 0, 500, 500], "reason": "x"}`}}
	s, _ := NewService(main, ground)
	loc, _, err := s.Locate(context.Background(), frameImg(800, 400), "the logo")
	if err != nil || len(ground.prompts) != 1 || len(main.prompts) != 0 {
		t.Fatalf("locate asked main %d times, grounding %d times (%v)", len(main.prompts), len(ground.prompts), err)
	}
	if s.LocateProfile().Name != "normalized-1000" || s.AskProfile().Name != "openai" {
		t.Errorf("profiles: ask %q, locate %q", s.AskProfile().Name, s.LocateProfile().Name)
	}
	if !near(loc.Box.X2, 400) || !near(loc.Box.Y2, 200) {
		t.Errorf("box read in the main model's convention, not the grounding model's: %+v", loc.Box)
	}
	if _, _, err := s.Assert(context.Background(), frameImg(800, 400), "a logo shows"); err != nil || len(main.prompts) != 1 {
		t.Fatalf("assert did not ask the main model: %v", err)
	}
}

func TestBadAnswerIsReaskedOnceThenAnErrorWithTheText(t *testing.T) {
	m := &scripted{profile: row("openai"), answers: []string{`{"found": "yes"}`, `{"found": true, "box": [1, 2, 30, 40], "reason": "ok"}`}}
	s, _ := NewService(m, nil)
	loc, u, err := s.Locate(context.Background(), frameImg(800, 400), "x")
	if err != nil || !loc.Found || u.Calls != 2 {
		t.Fatalf("re-ask: %+v %+v %v", loc, u, err)
	}
	if !strings.Contains(m.prompts[1], `{"found": "yes"}`) || !strings.Contains(m.prompts[1], "could not be used") {
		t.Errorf("the re-ask does not show the previous answer and the problem: %s", m.prompts[1])
	}

	m = &scripted{profile: row("openai"), answers: []string{"ERR:I think it is the blue one", `{"pass": "maybe", "reason": "hmm"}`}}
	s, _ = NewService(m, nil)
	_, u, err = s.Assert(context.Background(), frameImg(800, 400), "the form is blue")
	if !errors.Is(err, ErrBadAnswer) || !strings.Contains(err.Error(), `"maybe"`) || u.Calls != 2 || len(m.prompts) != 2 {
		t.Fatalf("want ErrBadAnswer carrying the model's text after 2 calls, got %v (%d calls)", err, u.Calls)
	}
	if !strings.Contains(m.prompts[1], "I think it is the blue one") {
		t.Errorf("the re-ask does not show the model's text: %s", m.prompts[1])
	}
}

func TestQueryValidatesDataAgainstTheCallersSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"total":{"type":"number","minimum":0}},"required":["total"]}`)
	m := &scripted{profile: row("openai"), answers: []string{
		`{"data": {"total": "12.50"}, "reason": "the total line"}`,
		`{"data": {"total": 12.5}, "reason": "the total line"}`,
	}}
	s, _ := NewService(m, nil)
	ans, u, err := s.Query(context.Background(), frameImg(800, 400), "What is the order total?", schema)
	if err != nil || u.Calls != 2 {
		t.Fatalf("query: %v (%d calls)", err, u.Calls)
	}
	var got struct{ Total float64 }
	if json.Unmarshal(ans.Data, &got); got.Total != 12.5 || ans.Reason != "the total line" {
		t.Errorf("data %s reason %q", ans.Data, ans.Reason)
	}
	if !strings.Contains(m.prompts[1], "does not match the schema") {
		t.Errorf("the re-ask does not say the data failed the schema: %s", m.prompts[1])
	}
	if !strings.Contains(m.schemas[0], `"data":{"type":"object"`) {
		t.Errorf("the model was not given the caller's schema inside the answer shape: %s", m.schemas[0])
	}
}

func TestQueryDefaultSchemaAndBadSchema(t *testing.T) {
	m := &scripted{profile: row("openai"), answers: []string{`{"data": "Saved", "reason": "banner"}`}}
	s, _ := NewService(m, nil)
	ans, _, err := s.Query(context.Background(), frameImg(10, 10), "What does the banner say?", nil)
	if err != nil || string(ans.Data) != `"Saved"` {
		t.Fatalf("default string schema: %s %v", ans.Data, err)
	}
	_, _, err = s.Query(context.Background(), frameImg(10, 10), "q", json.RawMessage(`{"type": 12}`))
	if !errors.Is(err, ErrBadSchema) || len(m.prompts) != 1 {
		t.Fatalf("a bad schema must fail before asking the model: %v (%d calls)", err, len(m.prompts))
	}
}

func TestEmptyWordsAreRejected(t *testing.T) {
	s, _ := NewService(&scripted{profile: row("openai"), answers: []string{"{}"}}, nil)
	if _, _, err := s.Locate(context.Background(), frameImg(10, 10), " "); err == nil || !strings.Contains(err.Error(), "describe the element") {
		t.Errorf("empty target: %v", err)
	}
	if _, err := NewService(nil, nil); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_MODEL") {
		t.Errorf("no model: %v", err)
	}
}

// native answers LocateNative in the locate shape and never Ask.
type native struct{ scripted }

func (n *native) LocateNative(context.Context, llm.Image, string) (json.RawMessage, llm.Usage, error) {
	return json.RawMessage(`{"found": true, "box": [10, 20, 30, 40], "reason": "native"}`), llm.Usage{Calls: 1}, nil
}

func TestNativeLocatorIsPreferred(t *testing.T) {
	n := &native{scripted{profile: row("qwen2.5-vl")}}
	s, _ := NewService(n, nil)
	loc, _, err := s.Locate(context.Background(), frameImg(100, 100), "x")
	if err != nil || loc.Reason != "native" || len(n.prompts) != 0 {
		t.Fatalf("%+v %v asks=%d", loc, err, len(n.prompts))
	}
}
