package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	_ "image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/trace"
)

type memRuns map[string]trace.RunInfo

func (m memRuns) List() ([]trace.RunInfo, error) {
	var out []trace.RunInfo
	for _, r := range m {
		out = append(out, r)
	}
	return out, nil
}

func (m memRuns) Get(id string) (trace.RunInfo, error) {
	if r, ok := m[id]; ok {
		return r, nil
	}
	return trace.RunInfo{}, errors.New("run not found")
}

func TestRunResources(t *testing.T) {
	runs := memRuns{"20261130-000000-abcdef": {ID: "20261130-000000-abcdef", Status: "completed", Task: "fill the form"}}
	e := newEnv(t, nil, Options{Runs: runs})
	ctx := context.Background()
	res, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: RunsURI})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Contents[0].Text; !strings.Contains(txt, `"fill the form"`) || !strings.Contains(txt, `"runs"`) {
		t.Fatalf("gui://runs = %s", txt)
	}
	res, err = e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: RunsURI + "/20261130-000000-abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Contents[0].Text; !strings.Contains(txt, `"completed"`) {
		t.Fatalf("gui://runs/{id} = %s", txt)
	}
	if _, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: RunsURI + "/nope"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown run: err = %v", err)
	}
	tmpls, err := e.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != RunURITemplate {
		t.Fatalf("templates %+v, %v", tmpls, err)
	}
}

// TestEndedSessionClosesItsRecord: when an MCP session ends, its run record
// is closed (status "recorded", report written, no writer left running) and
// the server forgets its frames, instead of holding both until the process exits.
func TestEndedSessionClosesItsRecord(t *testing.T) {
	store := trace.NewStore(trace.Options{Dir: t.TempDir(), DebugImages: true})
	defer store.Close()
	e := newEnv(t, nil, Options{Records: func(id string) ToolRecorder { return store.Session(id) }})

	st, ct := mcp.NewInMemoryTransports()
	ss, err := e.srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "short-lived", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok(t, cs, "gui_screenshot", map[string]any{"max_long_edge": 320})
	if _, has := e.srv.frames.get(ss, "0"); !has {
		t.Fatal("the screenshot's frame was not kept for the session")
	}
	if len(store.Active()) != 1 {
		t.Fatalf("active runs while the session lives = %v, want its session record", store.Active())
	}
	cs.Close()

	// The record is closed asynchronously once the session has ended.
	var runs []trace.RunInfo
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if runs, err = store.List(); err != nil || len(runs) != 1 {
			t.Fatalf("runs = %+v, %v", runs, err)
		}
		if _, err := os.Stat(runs[0].Report); err == nil && len(store.Active()) == 0 {
			break
		}
	}
	if runs, err = store.List(); err != nil || len(runs) != 1 { // as of when the close was seen
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	if runs[0].Client != "short-lived" || !strings.HasPrefix(runs[0].SessionID, "stdio-") || len(runs[0].SessionID) <= len("stdio-") {
		t.Fatalf("the record of a session without a transport id: client %q, session id %q; want the client's name and a generated id", runs[0].Client, runs[0].SessionID)
	}
	if runs[0].Status != trace.StatusRecorded || runs[0].Finished == nil {
		t.Fatalf("the ended session's record is %q (finished %v), want %q: it was never closed", runs[0].Status, runs[0].Finished, trace.StatusRecorded)
	}
	if _, err := os.Stat(runs[0].Report); err != nil {
		t.Fatalf("no report for the ended session: %v", err)
	}
	if _, has := e.srv.frames.get(ss, "0"); has {
		t.Fatal("the ended session's frames are still held")
	}
}

// TestSessionRecordReplaysAtomicCalls: an outer agent's own clicking is
// recorded so it can be replayed: a click at image coordinates of a
// screenshot gets an overlay drawn on that screenshot (not on the screenshot
// taken after the click) with the marker at the click's image point, its
// image and global points are recorded, and a refused call is marked as an error.
func TestSessionRecordReplaysAtomicCalls(t *testing.T) {
	store := trace.NewStore(trace.Options{Dir: t.TempDir(), DebugImages: true})
	e := newEnv(t, nil, Options{Records: func(id string) ToolRecorder { return store.Session(id) },
		ScreenshotAfterAction: true, AfterActionDelay: time.Millisecond})
	ok(t, e.cs, "gui_screenshot", map[string]any{"max_long_edge": 640, "format": "png"})
	e.desk.Fill(geom.Rect{W: 200, H: 200}, color.RGBA{0, 0, 255, 255}) // the screenshot after the click differs
	ok(t, e.cs, "gui_click", map[string]any{"x": 400, "y": 100})
	if res := callTool(t, e.cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "alt", "delete"}}); !res.IsError {
		t.Fatalf("ctrl+alt+delete was not refused: %s", text(res))
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	runs, err := store.List()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	lines, _, err := trace.ReadLines(runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	var shot, overlay *trace.ImageRecord
	var click, hotkey *trace.Line
	for i, ln := range lines {
		switch {
		case ln.Kind == trace.KindTool && ln.Tool == "gui_screenshot":
			shot = ln.Image
		case ln.Kind == trace.KindTool && ln.Tool == "gui_click":
			click = &lines[i]
		case ln.Kind == trace.KindTool && ln.Tool == "gui_hotkey":
			hotkey = &lines[i]
		case ln.Kind == trace.KindOverlay:
			overlay = ln.Image
		}
	}
	if shot == nil || click == nil || hotkey == nil {
		t.Fatalf("calls missing from the record: screenshot %v, click %v, hotkey %v", shot, click, hotkey)
	}
	var acts []action.Trace
	if err := json.Unmarshal(click.Actions, &acts); err != nil || len(acts) != 1 {
		t.Fatalf("click actions %s: %v", click.Actions, err)
	}
	a := acts[0]
	if a.Image == nil || *a.Image != (geom.ImagePoint{X: 400, Y: 100}) || a.Global == nil || a.Outcome != "ok" || a.Action.Kind != action.Click {
		t.Fatalf("click recorded as %+v", a)
	}
	var pressedAt *geom.GlobalPoint
	for _, ev := range e.desk.Events() {
		if ev.Op == fake.OpButtonDown {
			pressedAt = &ev.At
		}
	}
	if pressedAt == nil || *a.Global != *pressedAt || *a.Global != (geom.GlobalPoint{X: 1201, Y: 301}) {
		t.Errorf("recorded global point %v, the desktop was clicked at %v (want 1201,301: the centre of image pixel 400,100 at 3 screen px per image px)", *a.Global, pressedAt)
	}
	if click.IsError || click.Millis < 0 || !hotkey.IsError || !strings.Contains(hotkey.ToolResult, "error") {
		t.Errorf("error flags: click %v, hotkey %v (%q)", click.IsError, hotkey.IsError, hotkey.ToolResult)
	}
	if overlay == nil || overlay.Frame.ID != shot.Frame.ID || overlay.SentAs != shot.Ref {
		t.Fatalf("overlay %+v, want one drawn on the screenshot %+v", overlay, shot)
	}
	f, err := os.Open(filepath.Join(runs[0].Dir, filepath.FromSlash(overlay.Ref)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ov, _, err := image.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if r, g, _, _ := ov.At(400, 100).RGBA(); r>>8 < 180 || g>>8 > 90 {
		t.Errorf("overlay pixel at the click's image point (400,100) is not the red marker: r=%d g=%d", r>>8, g>>8)
	}
	rep, err := os.ReadFile(runs[0].Report)
	if err != nil {
		t.Fatal(err)
	}
	ovBytes, err := os.ReadFile(filepath.Join(runs[0].Dir, filepath.FromSlash(overlay.Ref)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rep), `src="data:image/jpeg;base64,`+base64.StdEncoding.EncodeToString(ovBytes)+`"`) || !strings.Contains(string(rep), `b-bad">error<`) {
		t.Error("the session report lacks the click's overlay or the failed call's error mark")
	}
}
