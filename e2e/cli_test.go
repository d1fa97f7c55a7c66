package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/testenv"
	"github.com/guiagent/guiagent/internal/trace"
)

// cli runs the built binary with only env (plus PATH and a private HOME) and
// returns its exit code, stdout and stderr.
func cli(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	home := t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + home}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("guiagent %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// commandNames are every subcommand a user can type.
var commandNames = []string{"serve", "demo", "doctor", "release", "bench", "eval", "runs", "report", "sample-app", "version", "help"}

func TestHelpAndVersionExitZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, stdout, stderr := cli(t, nil, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("guiagent %v: exit %d, stderr %q", args, code, stderr)
		}
		for _, name := range commandNames {
			if !strings.Contains(stdout, "\n  "+name+" ") {
				t.Errorf("guiagent %v does not list the command %s:\n%s", args, name, stdout)
			}
		}
	}
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		code, stdout, stderr := cli(t, nil, args...)
		if code != 0 || !strings.HasPrefix(stdout, "guiagent ") || stderr != "" {
			t.Fatalf("guiagent %v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	code, _, stderr := cli(t, nil, "frobnicate")
	if code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: exit %d, %q", code, stderr)
	}
}

// Every command answers --help with its own usage and flags, and exits 0
// without doing anything (no display is needed, no run is looked up).
func TestEveryCommandHelp(t *testing.T) {
	flags := map[string][]string{
		"serve":  {"-http", "-addr", "-allow-remote", "-display", "-vnc", "-virtual-display", "-log-level", "-log-file", "-runs-dir", "-model", "-provider", "-tools", "-read-only", "GUI_AGENT_VNC", "observe ", "clipboard ", "gui_screenshot"},
		"demo":   {"-virtual-display", "-model", "-provider"},
		"doctor": {"-display", "-virtual-display", "-vnc", "-tools"},
		"bench":  {"-size", "-max-long-edge", "-format", "-quality", "-n", "-display"},
		"runs":   {"-kind", "-json", "task, session, flow"},
	}
	for _, name := range commandNames {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			code, stdout, stderr := cli(t, nil, args...)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: guiagent "+name) {
				t.Fatalf("guiagent %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
			}
			for _, f := range flags[name] {
				if !strings.Contains(stdout, f) {
					t.Errorf("guiagent %v does not mention %q:\n%s", args, f, stdout)
				}
			}
		}
	}
}

func TestHalfConfiguredModelNamesTheMissingVariable(t *testing.T) {
	code, stdout, stderr := cli(t, []string{"GUI_AGENT_PROVIDER=openai"}, "serve")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "GUI_AGENT_MODEL") {
		t.Fatalf("provider without a model: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = cli(t, []string{"GUI_AGENT_MODEL=gpt-4o"}, "doctor")
	if code != 1 || !strings.Contains(stdout, "GUI_AGENT_PROVIDER") {
		t.Fatalf("doctor with a model without a provider: exit %d:\n%s", code, stdout)
	}
}

// With DISPLAY reachable, --virtual-display is not used, and the start-up log
// says so, with the display and its size; without DISPLAY it is used, and
// the log says why.
func TestStartupLogSaysWhichDisplayAndWhy(t *testing.T) {
	vd := xvfbtest.Start(t, 1024, 700)
	code, _, stderr := cli(t, []string{"DISPLAY=" + vd.Display}, "serve", "--virtual-display", "800x600") // stdin empty: serves, then the client is gone
	if code != 0 {
		t.Fatalf("serve: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"level=WARN", "display=\"x11 " + vd.Display + "\"", "size=1024x700", "DISPLAY=" + vd.Display + " is reachable, so --virtual-display 800x600 is not used"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("start-up log lacks %q:\n%s", want, stderr)
		}
	}
	code, _, stderr = cli(t, nil, "serve", "--virtual-display", "800x600")
	if code != 0 || !strings.Contains(stderr, "size=800x600") || !strings.Contains(stderr, "a private Xvfb started for --virtual-display 800x600, since DISPLAY is not set") {
		t.Fatalf("serve without DISPLAY: exit %d\n%s", code, stderr)
	}
}

// The scripted model only knows the demo's task: any other is refused before
// anything starts, rather than "completed".
func TestDemoRefusesATaskTheScriptedModelCannotDo(t *testing.T) {
	code, stdout, stderr := cli(t, nil, "demo", "open the calculator")
	if code != 1 || stdout != "" || !strings.Contains(stderr, `cannot do "open the calculator"`) || !strings.Contains(stderr, "GUI_AGENT_PROVIDER") {
		t.Fatalf("demo with another task: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// With a configured model, demo runs the user's task with it.
func TestDemoRunsATaskWithTheConfiguredModel(t *testing.T) {
	testenv.NeedX(t)
	var mu sync.Mutex
	var prompts []string
	model := startModel(t, func(tn fakellm.Turn) fakellm.Reply {
		mu.Lock()
		prompts = append(prompts, tn.Prompt)
		mu.Unlock()
		return fakellm.Reply{Result: "the form is visible"}
	})
	env := []string{"GUI_AGENT_PROVIDER=openai", "GUI_AGENT_MODEL=" + testModel, "GUI_AGENT_BASE_URL=" + model.URL, "GUI_AGENT_API_KEY=sk-demo-0123456789"}
	code, stdout, stderr := cli(t, env, "demo", "tell me what the window shows")
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res struct{ Status, Result string }
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Status != "completed" || res.Result != "the form is visible" {
		t.Fatalf("demo result %+v (%v):\n%s", res, err, stdout)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(prompts) == 0 || !strings.Contains(prompts[0], "tell me what the window shows") {
		t.Fatalf("the configured model never got the task; prompts: %q", prompts)
	}
	if !strings.Contains(stderr, `msg="using the configured model" provider=openai model=`+testModel) {
		t.Fatalf("demo does not say which model it uses:\n%s", stderr)
	}
}

// A second serve --http on a busy port fails without replacing the running
// server's token file, so the running server's clients keep working.
func TestSecondServerKeepsTheTokenFile(t *testing.T) {
	vd := xvfbtest.Start(t, 640, 480)
	g := startHTTP(t, serverConfig{display: vd.Display})
	tokenFile := filepath.Join(filepath.Dir(g.runsDir), "http-token") // beside the runs folder
	first, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatalf("the first server wrote no token file: %v\n%s", err, g.stderr)
	}
	if !strings.Contains(g.stderr.String(), tokenFile) {
		t.Fatalf("serve does not say where the token file is:\n%s", g.stderr)
	}
	second := g.command("serve", "--http", "--addr", g.addr)
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "listening on "+g.addr) {
		t.Fatalf("a second serve --http on %s: %v\n%s", g.addr, err, out)
	}
	now, err := os.ReadFile(tokenFile)
	if err != nil || !bytes.Equal(now, first) {
		t.Fatalf("the second server changed the token file (%v): %q -> %q", err, first, now)
	}
	g.token = strings.TrimSpace(string(first))
	cs := g.connect(t, nil)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("the running server refuses its own token after the failed start: %v", err)
	}
}

// Over stdio: --tools limits what a client sees, gui_execute_task is absent
// without a model, and `guiagent runs --kind session` shows the session with
// the client's name and a non-empty id.
func TestToolSelectionAndSessionRecordOverStdio(t *testing.T) {
	vd := xvfbtest.Start(t, 640, 480)
	g, cs := startStdio(t, serverConfig{display: vd.Display, env: []string{"GUI_AGENT_TOOLS=observe,gui_click"}}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		if tool.Name != "gui_snapshot" { // observe's, offered only when the desktop has an accessibility tree
			names = append(names, tool.Name)
		}
	}
	want := "gui_list_displays,gui_screenshot,gui_zoom,gui_cursor_position,gui_click,gui_wait,gui_find_image,gui_find_text,gui_read_text"
	if got := strings.Join(names, ","); len(names) != 9 || !strings.Contains(got, "gui_click") || strings.Contains(got, "gui_type") || strings.Contains(got, "gui_execute_task") {
		t.Fatalf("tools %s, want the 9 of %s", got, want)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_cursor_position", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	var runs []trace.RunInfo
	waitFor(10*time.Second, func() bool {
		out, err := g.run(t, "runs", "--kind", "session", "--json")
		return err == nil && json.Unmarshal([]byte(out), &runs) == nil && len(runs) == 1 && runs[0].Status == trace.StatusRecorded
	})
	if len(runs) != 1 || runs[0].Kind != trace.KindSession || runs[0].Client != "e2e-stdio" || !strings.HasPrefix(runs[0].SessionID, "stdio-") {
		t.Fatalf("session runs %+v: want one, by client e2e-stdio, with a stdio- id", runs)
	}
	out, err := g.run(t, "runs", "--kind", "session")
	if err != nil || !strings.Contains(out, "session "+runs[0].SessionID+" (e2e-stdio)") {
		t.Fatalf("runs --kind session: %v\n%s", err, out)
	}
	if out, err := g.run(t, "runs", "--kind", "task"); err != nil || !strings.Contains(out, "no task runs recorded") {
		t.Fatalf("runs --kind task: %v\n%s", err, out)
	}
	if out, err := g.run(t, "runs", "--kind", "tasks"); err == nil || !strings.Contains(out, "want task, session, flow") {
		t.Fatalf("runs --kind tasks: %v\n%s", err, out)
	}
}

func TestUnknownToolNameFailsAtStart(t *testing.T) {
	vd := xvfbtest.Start(t, 640, 480)
	code, stdout, stderr := cli(t, []string{"DISPLAY=" + vd.Display}, "serve", "--tools", "observe,gui_clik")
	if code != 1 || stdout != "" || !strings.Contains(stderr, `"gui_clik" is neither a tool nor a group`) || !strings.Contains(stderr, "observe, input, clipboard, task, flows") {
		t.Fatalf("serve --tools gui_clik: exit %d\n%s", code, stderr)
	}
}
