package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/testenv"
)

// shared is one Chromium for the tests that need no browser of their own;
// each test takes a browser context of its own from it.
var shared struct {
	once sync.Once
	br   *Browser
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.br != nil {
		_ = shared.br.Close()
	}
	os.Exit(code)
}

// testOptions are the options of a browser a test starts: headless, dying
// with the test binary.
func testOptions() Options {
	return Options{prepare: testenv.DieWithTest, Dialogs: DialogDismiss}
}

func sharedBrowser(t testing.TB) *Browser {
	t.Helper()
	testenv.NeedChromium(t)
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shared.br, shared.err = Launch(ctx, testOptions())
	})
	if shared.err != nil {
		t.Fatalf("Launch: %v", shared.err)
	}
	return shared.br
}

// newContext is a Backend in a browser context of its own, closed with the test.
func newContext(t testing.TB) *Backend {
	t.Helper()
	br := sharedBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := br.NewContext(ctx, geom.Size{})
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func navigate(t testing.TB, b *Backend, u string) desktop.Page {
	t.Helper()
	p, err := b.Navigate(tctx(t), desktop.Navigation{URL: u})
	if err != nil {
		t.Fatalf("Navigate(%s): %v", u, err)
	}
	return p
}

// eval runs JavaScript in the active tab: the test's own view of the page
// (the product has no such tool).
func eval(t testing.TB, b *Backend, expr string) any {
	t.Helper()
	tb, err := b.current(tctx(t))
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	var r evalResult
	if err := tb.s.call(tctx(t), "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	if err := r.err(); err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	return r.Result.Value
}

// harnessPage records the input it gets and holds a text area.
const harnessPage = `<!doctype html><html><head><title>harness</title><style>
html,body{margin:0;padding:0;width:100%;height:100%;overflow:hidden;background:rgb(128,128,128)}
#ta{position:fixed;right:4px;bottom:4px;width:200px;height:60px}
.fill{position:fixed;pointer-events:none}
</style></head><body>
<textarea id="ta"></textarea>
<script>
window.__ev = [];
const mods = e => [e.altKey&&'alt', e.ctrlKey&&'ctrl', e.metaKey&&'super', e.shiftKey&&'shift'].filter(Boolean);
const btn = e => [1,2,3][e.button];
document.addEventListener('mousemove', e => __ev.push({k:'motion', x:e.clientX, y:e.clientY}), true);
document.addEventListener('mousedown', e => { __ev.push({k:'button_down', x:e.clientX, y:e.clientY, b:btn(e), m:mods(e)}); if (e.button !== 0) e.preventDefault(); }, true);
document.addEventListener('mouseup', e => __ev.push({k:'button_up', x:e.clientX, y:e.clientY, b:btn(e), m:mods(e)}), true);
document.addEventListener('contextmenu', e => e.preventDefault(), true);
document.addEventListener('wheel', e => { __ev.push({k:'scroll', x:e.clientX, y:e.clientY, dx:e.deltaX, dy:e.deltaY, m:mods(e)}); e.preventDefault(); }, {capture:true, passive:false});
document.addEventListener('keydown', e => { __ev.push({k:'key_down', key:e.key, code:e.code, m:mods(e)}); if (e.ctrlKey && e.target.id !== 'ta') e.preventDefault(); }, true);
document.addEventListener('keyup', e => __ev.push({k:'key_up', key:e.key, code:e.code, m:mods(e)}), true);
</script></body></html>`

type harness struct {
	b *Backend
}

func (h *harness) Screen() desktop.Screen { return h.b }

func (h *harness) Fill(t testing.TB, r geom.Rect, c color.RGBA) {
	eval(t, h.b, fmt.Sprintf(`(() => { const d = document.createElement('div'); d.className='fill';
		Object.assign(d.style, {left:'%dpx', top:'%dpx', width:'%dpx', height:'%dpx', background:'rgb(%d,%d,%d)'});
		document.body.appendChild(d); return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true)))); })()`,
		r.X, r.Y, r.W, r.H, c.R, c.G, c.B))
}

type jsEvent struct {
	K    string   `json:"k"`
	X    float64  `json:"x"`
	Y    float64  `json:"y"`
	B    int      `json:"b"`
	DX   float64  `json:"dx"`
	DY   float64  `json:"dy"`
	Key  string   `json:"key"`
	Code string   `json:"code"`
	M    []string `json:"m"`
}

// keyName maps a DOM key back to desktop's canonical name.
func keyName(key, code string) desktop.Key {
	switch key {
	case "Control":
		return desktop.Ctrl
	case "Shift":
		return desktop.Shift
	case "Alt":
		return desktop.Alt
	case "Meta":
		return desktop.Super
	case "Enter":
		return "Return"
	}
	if strings.HasPrefix(code, "Key") && len(code) == 4 {
		return desktop.Key(strings.ToLower(code[3:]))
	}
	return desktop.Key(strings.ToLower(key))
}

func (h *harness) Events(t testing.TB, n int, timeout time.Duration) []suite.Received {
	var out []suite.Received
	deadline := time.Now().Add(timeout)
	for {
		v := eval(t, h.b, `JSON.stringify(window.__ev.splice(0))`)
		var evs []jsEvent
		if err := json.Unmarshal([]byte(v.(string)), &evs); err != nil {
			t.Fatalf("events: %v", err)
		}
		for _, e := range evs {
			r := suite.Received{Kind: e.K, At: geom.GlobalPoint{X: int(e.X), Y: int(e.Y)}, Modifiers: e.M}
			sort.Strings(r.Modifiers)
			switch e.K {
			case "button_down", "button_up":
				r.Button = desktop.Button(e.B)
			case "key_down", "key_up":
				r.Key = keyName(e.Key, e.Code)
			case "scroll":
				switch {
				case e.DY < 0:
					r.Direction = desktop.Up
				case e.DY > 0:
					r.Direction = desktop.Down
				case e.DX < 0:
					r.Direction = desktop.LeftD
				case e.DX > 0:
					r.Direction = desktop.RightD
				}
			}
			out = append(out, r)
		}
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) Text(t testing.TB, want string, timeout time.Duration) string {
	var got string
	testenv.WaitUntil(timeout, func() bool {
		got, _ = eval(t, h.b, `document.getElementById('ta').value`).(string)
		return got == want
	})
	return got
}

func (h *harness) ResetText(t testing.TB) {
	eval(t, h.b, `(() => { const ta = document.getElementById('ta'); ta.value=''; ta.focus(); window.__ev = []; return true; })()`)
}

// Except lists what a page cannot observe, with the reason.
func (h *harness) Except() map[string]string { return nil }

func TestConformance(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, harnessPage)
	}))
	t.Cleanup(srv.Close)
	suite.Run(t, func(t *testing.T) suite.Harness {
		b := newContext(t)
		navigate(t, b, srv.URL)
		h := &harness{b: b}
		h.ResetText(t)
		return h
	})
}
