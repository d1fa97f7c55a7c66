package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/testenv"
)

// TestSameTabAndUserAgent: with SameTab a page's window.open and its
// target=_blank links load in the page's own tab (no second tab), and with
// UserAgent the server sees that user agent.
func TestSameTabAndUserAgent(t *testing.T) {
	testenv.NeedChromium(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>Start</title><button onclick="window.open('/next?via=open')">Open</button> <a href="/next?via=link" target="_blank">Link</a>`)
		default:
			fmt.Fprintf(w, "<!doctype html><title>%s %s</title><p>next", r.URL.Query().Get("via"), r.UserAgent())
		}
	}))
	t.Cleanup(site.Close)
	o := testOptions()
	o.Isolated, o.SameTab, o.UserAgent = true, true, "guiagent-test-agent/1.0"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	for _, c := range []struct{ control, via string }{{"Open", "open"}, {"Link", "link"}} {
		navigate(t, b, site.URL+"/")
		snap := snapshot(t, b, desktop.ElementQuery{})
		role := desktop.RoleButton
		if c.control == "Link" {
			role = desktop.RoleLink
		}
		if err := b.Press(tctx(t), find(t, snap, role, c.control).Handle); err != nil {
			t.Fatal(err)
		}
		want := c.via + " guiagent-test-agent/1.0"
		var title string
		if !testenv.WaitUntil(10*time.Second, func() bool {
			title, _ = b.ActiveWindowTitle(tctx(t))
			return title == want
		}) {
			t.Errorf("%s: the tab's title is %q, want %q (loaded in the same tab, with our user agent)", c.control, title, want)
		}
		if tabs, err := b.Tabs(tctx(t)); err != nil || len(tabs) != 1 || !strings.Contains(tabs[0].URL, "via="+c.via) {
			t.Errorf("%s: tabs %+v (%v), want the one tab at /next", c.control, tabs, err)
		}
	}
}
