package guiagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

// TestExternalProgramUsesThePublicPackage is the "done when": a
// program in its own module (testdata/hostapp, with a replace directive), which
// can import nothing but the public package, starts guiagent on a private
// display, runs a task against a scripted provider, takes a screenshot and
// clicks at a point of it. The application on that display (guiagent's sample
// app) reports where both clicks landed.
func TestExternalProgramUsesThePublicPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, "guiagent")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/guiagent").CombinedOutput(); err != nil {
		t.Fatalf("building guiagent: %v\n%s", err, out)
	}
	host := buildHostApp(ctx, t, dir)

	model := fakellm.NewChatServer(fakellm.Script(
		func(tu fakellm.Turn) fakellm.Reply {
			mid := image.Pt(tu.ImageSize.W/2, tu.ImageSize.H/2)
			return fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(mid)}}
		},
		fakellm.Fixed(fakellm.Finish("clicked")),
	), fakellm.ChatOptions{Model: "scripted"})
	defer model.Close()

	cmd := exec.CommandContext(ctx, host)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, // no DISPLAY: the program starts its own
		"GUI_AGENT_PROVIDER=openai", "GUI_AGENT_MODEL=scripted", "GUI_AGENT_BASE_URL=" + model.URL,
		"GUI_AGENT_API_KEY=sk-hostapp-0123456789", "GUI_AGENT_RUNS_DIR=" + filepath.Join(dir, "runs"),
		"HOSTAPP_APP=" + bin + " sample-app --scene buttons --display",
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hostapp: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	got := map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("hostapp printed %q: %v", line, err)
		}
		for k, v := range m {
			got[k] = v
		}
	}
	var display, status string
	json.Unmarshal(got["display"], &display)
	json.Unmarshal(got["task"], &status)
	if !strings.HasPrefix(display, ":") || status != "completed" {
		t.Fatalf("private display %q, task %q; output:\n%s\nstderr:\n%s", display, status, out, stderr.String())
	}
	var taskClick, click struct{ X, Y int }
	var shot []int
	json.Unmarshal(got["app_saw_task_click"], &taskClick)
	json.Unmarshal(got["app_saw_click"], &click)
	json.Unmarshal(got["screenshot"], &shot)
	// The model clicked the middle of the 1024x768 screen it was shown.
	if abs(taskClick.X-512) > 1 || abs(taskClick.Y-384) > 1 {
		t.Errorf("the task's click landed at (%d,%d), want the middle (512,384)", taskClick.X, taskClick.Y)
	}
	// Pixel (100,50) of a 512x384 screenshot of a 1024x768 screen is the
	// centre of screen pixels (200..201, 100..101).
	if len(shot) != 2 || shot[0] != 512 || shot[1] != 384 {
		t.Fatalf("screenshot %v, want 512x384", shot)
	}
	wantX, wantY := math.Round(100.5*1024/512-0.5), math.Round(50.5*768/384-0.5)
	if math.Abs(float64(click.X)-wantX) > 1 || math.Abs(float64(click.Y)-wantY) > 1 {
		t.Errorf("the click at image (100,50) landed at (%d,%d), want (%g,%g)", click.X, click.Y, wantX, wantY)
	}
}

// buildHostApp builds testdata/hostapp against this checkout, offline, with
// a copy of its go.mod so the tree is never modified.
func buildHostApp(ctx context.Context, t *testing.T, dir string) string {
	t.Helper()
	src, err := filepath.Abs("testdata/hostapp")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hostapp."+strings.TrimPrefix(f, "go.")), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "hostapp")
	build := exec.CommandContext(ctx, "go", "build", "-mod=mod", "-modfile="+filepath.Join(dir, "hostapp.mod"), "-o", out, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "GOWORK=off")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building testdata/hostapp (when guiagent's dependencies change, run `go mod tidy -e` there): %v\n%s", err, b)
	}
	return out
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// TestHostAppRequirementsMatchTheModule fails when testdata/hostapp's go.mod or
// go.sum drifts from this module's: the hostapp builds offline (GOPROXY=off), so
// a fresh machine has in its module cache exactly the versions this module's own
// build downloaded, and the hostapp must ask for those and no others.
func TestHostAppRequirementsMatchTheModule(t *testing.T) {
	const fix = "run `go mod tidy` in testdata/hostapp after changing guiagent's dependencies"
	need := map[string]string{} // module path -> version the public package builds with, on any OS
	for _, goos := range []string{"linux", "windows", "darwin"} {
		list := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}", ".")
		list.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64")
		out, err := list.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps: %v", goos, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				need[f[0]] = f[1]
			}
		}
	}
	if len(need) == 0 {
		t.Fatal("go list -deps named no module: the check would check nothing")
	}
	edit, err := exec.Command("go", "mod", "edit", "-json", "testdata/hostapp/go.mod").Output()
	if err != nil {
		t.Fatalf("go mod edit -json testdata/hostapp/go.mod: %v", err)
	}
	var mod struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(edit, &mod); err != nil {
		t.Fatal(err)
	}
	have := map[string]string{}
	for _, r := range mod.Require {
		have[r.Path] = r.Version
	}
	for path, v := range need {
		switch got, ok := have[path]; {
		case !ok:
			t.Errorf("testdata/hostapp/go.mod lacks %s %s: %s", path, v, fix)
		case got != v:
			t.Errorf("testdata/hostapp/go.mod requires %s %s, guiagent builds with %s: %s", path, got, v, fix)
		}
	}
	for path, v := range have {
		if _, ok := need[path]; !ok && path != "github.com/guiagent/guiagent" {
			t.Errorf("testdata/hostapp/go.mod requires %s %s, which guiagent's public package does not use: %s", path, v, fix)
		}
	}
	sum, err := os.ReadFile("testdata/hostapp/go.sum")
	if err != nil {
		t.Fatal(err)
	}
	for path, v := range need {
		for _, suffix := range []string{" ", "/go.mod "} {
			if !bytes.Contains(sum, []byte(path+" "+v+suffix)) {
				t.Errorf("testdata/hostapp/go.sum has no %q line for %s %s: %s", strings.TrimSpace(suffix+"h1"), path, v, fix)
			}
		}
	}
}
