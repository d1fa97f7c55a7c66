package fakellm

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
)

// anthPNG is a small base64 PNG with one red pixel at (3,2).
func anthPNG(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 6))
	img.Set(3, 2, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestAnthropicServerValidatesLikeTheAPI(t *testing.T) {
	var sawImage image.Point
	srv := NewAnthropicServer(func(t Turn) Reply {
		if p, ok := FindColor(t.Image, color.RGBA{R: 255, A: 255}, 10); ok {
			sawImage = p
		}
		return Reply{Actions: []BrainAction{ClickAt(image.Point{X: 3, Y: 2})}}
	})
	defer srv.Close()
	img := anthPNG(t)
	tool := `"tools":[{"type":"computer_20250124","name":"computer","display_width_px":8,"display_height_px":6}]`
	first := `{"model":"claude-x","max_tokens":100,` + tool + `,"messages":[{"role":"user","content":[{"type":"text","text":"go"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + img + `"}}]}]}`
	post := func(body string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	good := map[string]string{"x-api-key": "k", "anthropic-version": "2023-06-01", "anthropic-beta": "computer-use-2025-01-24"}
	without := func(k string) map[string]string {
		m := map[string]string{}
		for kk, v := range good {
			if kk != k {
				m[kk] = v
			}
		}
		return m
	}
	if code, body := post(first, without("x-api-key")); code != 401 || !strings.Contains(body, "authentication_error") {
		t.Errorf("no key: %d %s", code, body)
	}
	if code, body := post(first, without("anthropic-beta")); code != 400 || !strings.Contains(body, "computer-use-2025-01-24") {
		t.Errorf("no beta header: %d %s", code, body)
	}
	code, body := post(first, good)
	if code != 200 || !strings.Contains(body, `"type":"tool_use"`) || !strings.Contains(body, `"coordinate":[3,2]`) {
		t.Fatalf("good request: %d %s", code, body)
	}
	if sawImage != (image.Point{X: 3, Y: 2}) {
		t.Errorf("brain found the red pixel at %v", sawImage)
	}
	// A follow-up that does not answer the tool_use is refused.
	asst := `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"left_click","coordinate":[3,2]}}]}`
	unanswered := `{"model":"claude-x","max_tokens":100,` + tool + `,"messages":[` + first[strings.Index(first, `{"role"`):len(first)-2] + `,` + asst + `,{"role":"user","content":"next"}]}`
	if code, body := post(unanswered, good); code != 400 || !strings.Contains(body, "toolu_1") {
		t.Errorf("unanswered tool_use: %d %s", code, body)
	}
	textFirst := `{"model":"claude-x","max_tokens":100,` + tool + `,"messages":[` + first[strings.Index(first, `{"role"`):len(first)-2] + `,` + asst +
		`,{"role":"user","content":[{"type":"text","text":"hi"},{"type":"tool_result","tool_use_id":"toolu_1"}]}]}`
	if code, body := post(textFirst, good); code != 400 || !strings.Contains(body, "must come before") {
		t.Errorf("text before tool_result: %d %s", code, body)
	}
	answered := `{"model":"claude-x","max_tokens":100,` + tool + `,"messages":[` + first[strings.Index(first, `{"role"`):len(first)-2] + `,` + asst +
		`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + img + `"}}]}]}]}`
	if code, body := post(answered, good); code != 200 {
		t.Errorf("answered tool_use: %d %s", code, body)
	}
}

func TestAnthropicServerAnswersPlainRequestsWithText(t *testing.T) {
	var prompt string
	srv := NewAnthropicServer(Script(
		func(tn Turn) Reply { prompt = tn.Prompt; return Reply{Result: "three steps, nothing found"} },
		Fixed(Reply{Actions: []BrainAction{ClickAt(image.Point{X: 1, Y: 1})}}),
	))
	defer srv.Close()
	hdr := map[string]string{"x-api-key": "k", "anthropic-version": "2023-06-01"}
	post := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	user := `"messages":[{"role":"user","content":"summarize"}]`
	for name, body := range map[string]string{
		"no model":            `{"max_tokens":10,` + user + `}`,
		"no max_tokens":       `{"model":"claude-x",` + user + `}`,
		"no messages":         `{"model":"claude-x","max_tokens":10,"messages":[]}`,
		"empty text":          `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":""}]}`,
		"image system block":  `{"model":"claude-x","max_tokens":10,"system":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + anthPNG(t) + `"}}],` + user + `}`,
		"empty system block":  `{"model":"claude-x","max_tokens":10,"system":[{"type":"text","text":""}],` + user + `}`,
		"system not text":     `{"model":"claude-x","max_tokens":10,"system":42,` + user + `}`,
		"assistant goes last": `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`,
	} {
		if code, out := post(body); code != 400 || !strings.Contains(out, "invalid_request_error") {
			t.Errorf("%s: %d %s, want 400 invalid_request_error", name, code, out)
		}
	}
	// The system prompt as a string is as valid as a list of text blocks; the
	// brain's first scripted answer shows it was not asked about the malformed ones.
	code, out := post(`{"model":"claude-x","max_tokens":10,"system":"be brief",` + user + `}`)
	if code != 200 || !strings.Contains(out, `"content":[{"text":"three steps, nothing found","type":"text"}]`) || !strings.Contains(out, `"stop_reason":"end_turn"`) {
		t.Fatalf("plain request: %d %s, want the brain's result as the only text block", code, out)
	}
	if prompt != "be brief\nsummarize" {
		t.Errorf("brain saw prompt %q, want the system prompt and the message", prompt)
	}
	// A model without tools cannot act: a brain that tries is a test bug.
	if code, out := post(`{"model":"claude-x","max_tokens":10,"system":[{"type":"text","text":"be brief"}],` + user + `}`); code != 500 || !strings.Contains(out, "without the computer tool") {
		t.Errorf("actions for a plain request: %d %s, want 500 naming the problem", code, out)
	}
}
