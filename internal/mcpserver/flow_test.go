package mcpserver

import (
	"context"
	"encoding/json"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/flow/flowtest"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// lateFlows builds the flow runner on the test server's own input once it exists.
type lateFlows struct {
	r *flow.Runner
}

func (l *lateFlows) Run(ctx context.Context, f *flow.Flow, vars map[string]string, c *flow.Cache) flow.Result {
	return l.r.Run(ctx, f, vars, c)
}

// flowEnv is a server over a fake desktop showing the form's Submit button,
// with gui_run_flow backed by a real flow runner and ColorSeer.
func flowEnv(t *testing.T) (*testEnv, *flowtest.ColorSeer, string) {
	t.Helper()
	dir := t.TempDir()
	lf := &lateFlows{}
	e := newEnv(t, []geom.Display{{Bounds: geom.Rect{W: 1280, H: 800}}}, Options{Flows: lf, FlowCacheDir: dir})
	e.desk.Fill(geom.Rect{W: 1280, H: 800}, color.RGBA{220, 220, 220, 255})
	e.desk.Fill(geom.Rect{X: 360, Y: 470, W: 200, H: 64}, sampleapp.SubmitColor.ToRGBA())
	seer := &flowtest.ColorSeer{}
	r, err := flow.NewRunner(flow.Options{Input: desktop.NewInput(e.desk), Seer: seer, Shot: imaging.Options{Format: "png"}, Settle: -1})
	if err != nil {
		t.Fatal(err)
	}
	lf.r = r
	return e, seer, dir
}

func TestRunFlowToolOverMCP(t *testing.T) {
	e, seer, dir := flowEnv(t)
	args := map[string]any{"yaml": "name: Send It\nsteps:\n  - click: the Submit button\n  - type: \"${greeting}\"\n", "vars": map[string]any{"greeting": "hi"}}
	var res flow.Result
	jsonOf(t, callTool(t, e.cs, "gui_run_flow", args), &res)
	if res.Status != flow.Passed || res.ModelCalls != 1 || res.Steps[0].Cache != flow.CacheMiss || e.desk.Typed() != "hi" {
		t.Fatalf("first call: %+v, typed %q", res, e.desk.Typed())
	}
	if ev := lastEvent(t, e.desk, fake.OpButtonDown); ev.At != (geom.GlobalPoint{X: 460, Y: 502}) {
		t.Errorf("clicked at %v, want the Submit button's centre (460,502)", ev.At)
	}
	if _, err := os.Stat(filepath.Join(dir, "send-it.cache.yaml")); err != nil {
		t.Errorf("no cache under the cache folder: %v", err)
	}
	jsonOf(t, callTool(t, e.cs, "gui_run_flow", args), &res)
	if res.ModelCalls != 0 || res.Steps[0].Cache != flow.CacheHit || len(seer.Locates()) != 1 {
		t.Errorf("second call: %d model calls, cache %q", res.ModelCalls, res.Steps[0].Cache)
	}
	args["cache"] = "off"
	var off flow.Result
	jsonOf(t, callTool(t, e.cs, "gui_run_flow", args), &off)
	if off.ModelCalls != 1 || off.Cache != "" {
		t.Errorf("cache off: %d model calls, cache %q", off.ModelCalls, off.Cache)
	}
}

func TestRunFlowToolErrors(t *testing.T) {
	e, _, _ := flowEnv(t)
	fails(t, e.cs, "gui_run_flow", map[string]any{"yaml": "name: x\nsteps:\n  - tap: it\n"}, `unknown step kind "tap": use one of act, click`)
	fails(t, e.cs, "gui_run_flow", map[string]any{"yaml": "name: x\nsteps: [\n"}, "line 2, column")
	fails(t, e.cs, "gui_run_flow", map[string]any{"yaml": "name: x\nsteps:\n  - type: \"${who}\"\n"}, `variable "who" is not defined`)
	res := callTool(t, e.cs, "gui_run_flow", map[string]any{"yaml": "name: x\nsteps:\n  - assert: the OK button is visible\n"})
	var out flow.Result
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil || !res.IsError || !strings.Contains(out.Summary, "step 1 (assert: the OK button is visible) failed: assertion failed") {
		t.Errorf("failed assert: IsError %v, %q (%v)", res.IsError, out.Summary, err)
	}
	if e.desk.Typed() != "" {
		t.Errorf("an invalid flow typed %q", e.desk.Typed())
	}
}

// The README's sign-up flow (over 256 characters, the default cap of a
// string argument) is accepted by gui_run_flow's schema; a flow over the
// flow size limit is refused by it.
func TestRunFlowAcceptsAFlowOfReadmeSize(t *testing.T) {
	e, _, _ := flowEnv(t)
	yaml := "name: sign-up\nsteps:\n" + strings.Repeat("  - sleep: 1   # a comment to make the flow longer than 256 characters\n", 6)
	var res flow.Result
	jsonOf(t, callTool(t, e.cs, "gui_run_flow", map[string]any{"yaml": yaml}), &res)
	if res.Status != flow.Passed || len(res.Steps) != 6 {
		t.Fatalf("a %d-character flow: %+v", len(yaml), res)
	}
	fails(t, e.cs, "gui_run_flow", map[string]any{"yaml": strings.Repeat("#", flow.MaxBytes+1)}, "yaml", "maxLength")
}
