package fakellm

import (
	"encoding/json"
	"image"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestAnthropicToolsetIsAsStrictAsTheAPI: the fake refuses what the Messages
// API refuses of the computer toolset.
func TestAnthropicToolsetIsAsStrictAsTheAPI(t *testing.T) {
	srv := NewAnthropicServer(func(Turn) Reply {
		return Reply{Actions: []BrainAction{ClickAt(image.Point{X: 3, Y: 2}), TypeText("hi")}}
	})
	defer srv.Close()
	img := anthPNG(t)
	hdr := map[string]string{"x-api-key": "k", "anthropic-version": "2023-06-01"}
	post := func(body string, h map[string]string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
		for k, v := range h {
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
	user := `{"role":"user","content":[{"type":"text","text":"go"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + img + `"}}]}`
	toolset := `"tools":[{"type":"computer_toolset_20260801"}]`
	req := func(model, tools, msgs string) string {
		return `{"model":"` + model + `","max_tokens":100,` + tools + `,"messages":[` + msgs + `]}`
	}

	code, body := post(req("claude-sonnet-5-5", toolset, user), hdr)
	if code != 200 {
		t.Fatalf("a good toolset request: %d %s", code, body)
	}
	var res struct {
		Content []struct {
			Type, ID, Name string
			Toolset        string         `json:"toolset_name"`
			Input          map[string]any `json:"input"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	var uses []string
	for _, c := range res.Content {
		if c.Type == "tool_use" {
			if c.Toolset != "computer" || c.Input["action"] != nil {
				t.Errorf("member tool_use %+v: want toolset_name computer and no action field", c)
			}
			uses = append(uses, c.Name)
		}
	}
	if strings.Join(uses, ",") != "left_click,type" {
		t.Fatalf("members = %v, want left_click,type", uses)
	}
	asst := func(toolset string) string {
		return `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"left_click"` + toolset + `,"input":{"coordinate":[3,2]}}]}`
	}
	result := func(toolset string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1"` + toolset + `,"content":[{"type":"text","text":"ok"}]}]}`
	}
	ts := `,"toolset_name":"computer"`
	if code, body := post(req("claude-sonnet-5-5", toolset, user+","+asst(ts)+","+result(ts)), hdr); code != 200 {
		t.Fatalf("a good replay: %d %s", code, body)
	}
	legacy := `"tools":[{"type":"computer_20251124","name":"computer","display_width_px":8,"display_height_px":6}]`
	for _, tc := range []struct{ name, body, want string }{
		{"an unknown member", req("claude-sonnet-5-5", toolset, user+`,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"teleport","toolset_name":"computer","input":{}}]},`+result(ts)), "not a member"},
		{"a replayed tool_use without toolset_name", req("claude-sonnet-5-5", toolset, user+","+asst("")+","+result(ts)), "toolset_name: field required"},
		{"a tool_result without toolset_name", req("claude-sonnet-5-5", toolset, user+","+asst(ts)+","+result("")), "must carry toolset_name"},
		{"a tool_use without a tool_result", req("claude-sonnet-5-5", toolset, user+","+asst(ts)+","+user), "without tool_result"},
		{"an unknown configs key", req("claude-sonnet-5-5", `"tools":[{"type":"computer_toolset_20260801","configs":{"teleport":{"enabled":false}}}]`, user), "unknown member"},
		{"a named toolset", req("claude-sonnet-5-5", `"tools":[{"type":"computer_toolset_20260801","name":"computer"}]`, user), "carries no name"},
		{"the toolset for a 4.x model", req("claude-sonnet-4-5", toolset, user), "not supported by claude-sonnet-4-5"},
		{"a legacy tool for a 5.x model", req("claude-opus-5", legacy, user), "use computer_toolset_20260801"},
	} {
		if code, body := post(tc.body, hdr); code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: got %d %s, want 400 with %q", tc.name, code, body, tc.want)
		}
	}
	beta := map[string]string{"anthropic-beta": "computer-use-2025-11-24"}
	for k, v := range hdr {
		beta[k] = v
	}
	if code, body := post(req("claude-sonnet-5-5", toolset, user), beta); code != 400 || !strings.Contains(body, "GA tool") {
		t.Errorf("the toolset with a beta header: %d %s", code, body)
	}
	if code, body := post(req("claude-sonnet-5-5", `"tools":[{"type":"computer_toolset_20260801","configs":{"left_click":{"enabled":false}}}]`, user), hdr); code != 500 || !strings.Contains(body, "disabled") {
		t.Errorf("a disabled member was used: %d %s", code, body)
	}
}
