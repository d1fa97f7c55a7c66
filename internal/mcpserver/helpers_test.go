package mcpserver

import (
	"context"
	"encoding/json"
	"image"
	"image/color"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
)

// testEnv is a server over a fake desktop with one in-memory client.
type testEnv struct {
	t      *testing.T
	desk   *fake.Backend
	screen *changingScreen
	srv    *Server
	cs     *mcp.ClientSession
}

// changingScreen wraps the fake so tests can change the display geometry
// (the fake's layout is fixed at creation).
type changingScreen struct {
	*fake.Backend
	mu       sync.Mutex
	override []geom.Display
}

func (c *changingScreen) Displays(ctx context.Context) ([]geom.Display, error) {
	c.mu.Lock()
	o := c.override
	c.mu.Unlock()
	if o != nil {
		return o, nil
	}
	return c.Backend.Displays(ctx)
}

func (c *changingScreen) setDisplays(ds []geom.Display) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.override = ds
}

var twoDisplays = []geom.Display{
	{ID: "0", Name: "LEFT", Bounds: geom.Rect{X: 0, Y: 0, W: 1920, H: 1080}, Scale: 1, Primary: true},
	{ID: "1", Name: "RIGHT", Bounds: geom.Rect{X: 1920, Y: -200, W: 2560, H: 1440}, Scale: 1},
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// newEnv starts a server with opts (Screen is set to a fake with displays) and connects a client.
func newEnv(t *testing.T, displays []geom.Display, opts Options) *testEnv {
	t.Helper()
	return newEnvWith(t, displays, opts, nil)
}

// newEnvWith is newEnv with setup run on the fake before the server is built
// (SetElements: an element source the server sees at New).
func newEnvWith(t *testing.T, displays []geom.Display, opts Options, setup func(*fake.Backend)) *testEnv {
	t.Helper()
	desk := fake.New(fake.Options{Displays: displays})
	if setup != nil {
		setup(desk)
	}
	scr := &changingScreen{Backend: desk}
	opts.Screen = scr
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, desk: desk, screen: scr, srv: srv}
	e.cs = e.connect(nil)
	return e
}

// connect adds another in-memory client.
func (e *testEnv) connect(copts *mcp.ClientOptions) *mcp.ClientSession {
	e.t.Helper()
	return e.connectAt("", copts)
}

// call invokes a tool and fails the test on a protocol error.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its text.
func ok(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, text(res))
	}
	return text(res)
}

// fails calls a tool that must return an error result mentioning every want.
func fails(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, want ...string) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	msg := text(res)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded (%q), want an error", name, args, msg)
	}
	for _, w := range want {
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(w)) {
			t.Errorf("%s error %q does not mention %q", name, msg, w)
		}
	}
	return msg
}

// text joins the text contents of a result.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// jsonOf decodes the last JSON text content of a result.
func jsonOf(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	for i := len(res.Content) - 1; i >= 0; i-- {
		if tc, ok := res.Content[i].(*mcp.TextContent); ok && strings.HasPrefix(tc.Text, "{") {
			if err := json.Unmarshal([]byte(tc.Text), v); err != nil {
				t.Fatalf("decoding %q: %v", tc.Text, err)
			}
			return
		}
	}
	t.Fatalf("no JSON text in result %v", text(res))
}

// screenshot takes a screenshot and returns its metadata and decoded image.
func screenshot(t testing.TB, cs *mcp.ClientSession, args map[string]any) (ShotInfo, image.Image) {
	t.Helper()
	res := callTool(t, cs, "gui_screenshot", args)
	if res.IsError {
		t.Fatalf("screenshot failed: %s", text(res))
	}
	var info ShotInfo
	jsonOf(t, res, &info)
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok {
		t.Fatalf("first content is %T, want an image", res.Content[0])
	}
	m, err := imaging.Decode(img.Data)
	if err != nil {
		t.Fatal(err)
	}
	return info, m
}

// findColor returns the centre of the pixels close to c, in image pixels.
func findColor(img image.Image, c color.RGBA) (x, y float64, found bool) {
	b := img.Bounds()
	var sx, sy, n float64
	for py := b.Min.Y; py < b.Max.Y; py++ {
		for px := b.Min.X; px < b.Max.X; px++ {
			r, g, bl, _ := img.At(px, py).RGBA()
			if near(r>>8, c.R) && near(g>>8, c.G) && near(bl>>8, c.B) {
				sx += float64(px)
				sy += float64(py)
				n++
			}
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	return sx / n, sy / n, true
}

func near(v uint32, c uint8) bool {
	d := int(v) - int(c)
	return d > -40 && d < 40
}

// lastButton returns the last button event of op recorded by the fake.
func lastEvent(t testing.TB, desk *fake.Backend, op string) fake.Event {
	t.Helper()
	evs := desk.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Op == op {
			return evs[i]
		}
	}
	t.Fatalf("no %s event among %v", op, evs)
	return fake.Event{}
}

func ops(evs []fake.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}
