package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/testenv"
)

// TestBrowserDialogAsksTheClient: with GUI_AGENT_BROWSER_DIALOGS=ask (the
// default), a confirm the page raises during a click is asked of the
// calling client's user by elicitation, the page gets the answer, and the
// click's result names the dialog; a client that cannot be asked gets the
// dialog dismissed at once.
func TestBrowserDialogAsksTheClient(t *testing.T) {
	testenv.NeedChromium(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Ready</title><button onclick="document.title = confirm('Delete the report?') ? 'deleted' : 'kept'">Delete</button>`)
	}))
	t.Cleanup(site.Close)
	var mu sync.Mutex
	var asked []string
	el := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			b, _ := json.Marshal(req.Params)
			mu.Lock()
			asked = append(asked, string(b))
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	}
	env := []string{"GUI_AGENT_BACKEND=browser", "GUI_AGENT_BROWSER_ISOLATED=true"}
	for _, c := range []struct {
		name  string
		opts  *mcp.ClientOptions
		title string
	}{{"a client that can be asked", el, "deleted"}, {"a client that cannot", nil, "kept"}} {
		t.Run(c.name, func(t *testing.T) {
			_, cs := startStdio(t, serverConfig{env: env}, c.opts)
			call(t, cs, "gui_navigate", map[string]any{"url": site.URL + "/"})
			ref := refOf(t, snapshotOf(t, cs), "button", "Delete")
			res := call(t, cs, "gui_click", map[string]any{"ref": ref})
			if !strings.Contains(textOf(res), "Delete the report?") {
				t.Errorf("the click's result does not name the dialog: %s", textOf(res))
			}
			var title string
			testenv.WaitUntil(5*time.Second, func() bool {
				title = textOf(call(t, cs, "gui_tabs", map[string]any{"action": "list"}))
				return strings.Contains(title, `"title":"`+c.title+`"`)
			})
			if !strings.Contains(title, `"title":"`+c.title+`"`) {
				t.Errorf("the page's title after the dialog: %s, want %s", title, c.title)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.Contains(asked[0], "Delete the report?") {
		t.Errorf("the client was asked %d times: %q, want once with the dialog's text", len(asked), asked)
	}
}
