package e2e

import (
	"context"
	"fmt"
	"image/color"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/testenv"
)

// colourPage has a yellow field and a magenta button a scripted model finds
// by colour, as a vision model would find them by sight.
const colourPage = `<!doctype html><title>Order</title>
<style>body{margin:0;background:#fff} input{position:absolute;left:100px;top:120px;width:300px;height:40px;background:#ffff00;border:0;font-size:20px}
button{position:absolute;left:100px;top:220px;width:160px;height:60px;background:#ff00ff;border:0}</style>
<form method=post action=/order><input name=item aria-label=Item><button>Order</button></form>`

// TestTaskOnAWebPage: gui_execute_task runs guiagent's own loop on a page in
// the browser backend, unchanged: the model sees the viewport, clicks the
// field, types, clicks the button, and the server receives the order; the
// model is told its screen is one web page.
func TestTaskOnAWebPage(t *testing.T) {
	testenv.NeedChromium(t)
	var mu sync.Mutex
	var orders []string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.Method == http.MethodPost {
			_ = r.ParseForm()
			mu.Lock()
			orders = append(orders, r.PostForm.Get("item"))
			mu.Unlock()
			fmt.Fprint(w, "<!doctype html><title>Ordered</title><p>Thanks")
			return
		}
		fmt.Fprint(w, colourPage)
	}))
	t.Cleanup(site.Close)
	yellow, magenta := color.RGBA{255, 255, 0, 255}, color.RGBA{255, 0, 255, 255}
	var prompts []string
	brain := func(tn fakellm.Turn) fakellm.Reply {
		mu.Lock()
		prompts = append(prompts, tn.Prompt)
		mu.Unlock()
		field, ok1 := scripted.FindColor(tn.Image, yellow, 10)
		button, ok2 := scripted.FindColor(tn.Image, magenta, 10)
		switch {
		case ok1 && ok2:
			return fakellm.Reply{Actions: []scripted.BrainAction{scripted.ClickAt(field), scripted.TypeText("Grüße 世界 tea"), scripted.ClickAt(button)}}
		case strings.Contains(tn.Prompt, "Thanks") || !ok1:
			return scripted.Finish("ordered")
		}
		return fakellm.Reply{Status: "failed", Result: "no field or button on the screen"}
	}
	model := startModel(t, brain)
	_, cs := startStdio(t, serverConfig{model: model, apiKey: canary(t, "sk-web-"), env: []string{"GUI_AGENT_BACKEND=browser", "GUI_AGENT_BROWSER_ISOLATED=true"}}, nil)
	call(t, cs, "gui_navigate", map[string]any{"url": site.URL + "/"})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	_, res := executeTask(ctx, t, cs, "Order Grüße 世界 tea", nil)
	if res.Status != agent.Completed {
		t.Fatalf("the task ended %s: %s", res.Status, res.Summary)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(orders) != 1 || orders[0] != "Grüße 世界 tea" {
		t.Errorf("the server received orders %q, want one for the typed text", orders)
	}
	if len(prompts) == 0 || !strings.Contains(prompts[0], "web page") {
		t.Errorf("the model was not told its screen is a web page")
	}
}
