package fakellm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

func canvas(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{250, 250, 250, 255}}, image.Point{}, draw.Src)
	return img
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, &image.Uniform{c}, image.Point{}, draw.Src)
}

func TestFindColorLargestBlobThroughJPEG(t *testing.T) {
	red := color.RGBA{200, 20, 20, 255}
	img := canvas(400, 300)
	fill(img, image.Rect(10, 10, 20, 20), red)     // small decoy
	fill(img, image.Rect(300, 200, 360, 240), red) // the button
	fill(img, image.Rect(0, 299, 400, 300), red)   // a 1 px line along the bottom edge (400 px < 2400 px)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 75}); err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeImage("data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := FindColor(dec, red, 40)
	if !ok || c.X < 327 || c.X > 332 || c.Y < 217 || c.Y > 222 {
		t.Fatalf("FindColor = %v,%v; want the centre of the large box, about (329.5,219.5)", c, ok)
	}
	if _, ok := FindColor(dec, color.RGBA{0, 0, 255, 255}, 20); ok {
		t.Fatal("found a colour that is not in the image")
	}
}

func TestScriptRepeatsLastReply(t *testing.T) {
	b := Script(Fixed(Reply{Result: "one"}), Fixed(Reply{Result: "two"}))
	var got []string
	for range 4 {
		got = append(got, b(Turn{}).Result)
	}
	if strings.Join(got, ",") != "one,two,two,two" {
		t.Fatalf("script answered %v", got)
	}
}

func post(t *testing.T, url string, body any) (*http.Response, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url+"/chat/completions", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer sk-should-not-be-recorded")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("response is not JSON: %s", raw)
	}
	return res, m
}

func TestChatServerWire(t *testing.T) {
	img := canvas(200, 100)
	fill(img, image.Rect(150, 40, 171, 61), color.RGBA{0, 0, 200, 255}) // centre pixel (160,50)
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	req := map[string]any{"model": "m", "messages": []any{
		map[string]any{"role": "system", "content": "You are careful."},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "Click the blue square."},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}},
		}},
	}}
	var turns []Turn
	brain := Script(
		func(t Turn) Reply {
			turns = append(turns, t)
			return Reply{HTTPStatus: 429, RetryAfter: "3", Result: "slow down"}
		},
		func(t Turn) Reply {
			turns = append(turns, t)
			p, _ := FindColor(t.Image, color.RGBA{0, 0, 200, 255}, 40)
			return Reply{Actions: []BrainAction{ClickAt(p)}, Memory: []string{"m1"}}
		},
	)
	s := NewChatServer(brain, ChatOptions{Profile: geom.Profile{Divisor: 1000, Order: geom.YX}})
	defer s.Close()

	res, body := post(t, s.URL, req)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "3" {
		t.Fatalf("scripted error: status %d Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if e, _ := body["error"].(map[string]any); e["message"] != "slow down" || e["type"] != "rate_limit_exceeded" {
		t.Fatalf("error body = %v", body)
	}
	res, body = post(t, s.URL, req)
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %v", res.StatusCode, body)
	}
	if turns[0].Step != 1 || turns[1].Step != 1 || turns[1].Calls != 2 {
		t.Fatalf("a retried request must see the same Step: %+v", turns)
	}
	if turns[1].ImageSize != (geom.Size{W: 200, H: 100}) || !strings.Contains(turns[1].Prompt, "You are careful.\nClick the blue square.") {
		t.Fatalf("turn = %+v", turns[1])
	}
	content := body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	d, err := llm.ParseAnswer(content, geom.Profile{Divisor: 1000, Order: geom.YX})
	if err != nil {
		t.Fatalf("answer %s: %v", content, err)
	}
	// Pixel (160,50) of 200x100 spans x 160-161, y 50-51: its centre is at
	// per mille x 802.5 -> 803, y 505, written y first and read back named.
	if at := d.Actions[0].At; at == nil || at.Y != 505 || at.X != 803 || at.Space != geom.SpaceNorm1000 {
		t.Fatalf("click at %v, want x 803, y 505 per mille", at)
	}
	usage := body["usage"].(map[string]any)
	text := len("You are careful.\nClick the blue square.")
	if int(usage["prompt_tokens"].(float64)) != EstimateInputTokens(text, 1) {
		t.Fatalf("usage %v, want the estimate from the request", usage)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Header.Get("Authorization") != "" || reqs[1].InputTokens == 0 {
		t.Fatalf("recorded requests wrong: %d, auth %q", len(reqs), reqs[0].Header.Get("Authorization"))
	}
}
