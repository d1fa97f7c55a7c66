package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/trace"
)

// doctorRow returns the detail of doctor's row name ("" when absent).
func doctorRow(out, name string) (level, detail string) {
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 22 && strings.TrimSpace(line[5:22]) == name {
			return strings.TrimSpace(line[:5]), line[22:]
		}
	}
	return "", ""
}

// serverTools lists the tools that `guiagent serve` with args and env offers
// an MCP client.
func serverTools(t *testing.T, env map[string]string, args ...string) []string {
	t.Helper()
	o, _, err := guiagent.LoadOptions(args, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o.AlwaysVirtualDisplay, o.Log = true, io.Discard
	ctx := context.Background()
	a, err := guiagent.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := a.MCPServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "doctor-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestDoctorListsTheServersTools: the tools doctor says are offered are the
// ones the server offers a client, with no model, with a model, and with a
// --tools selection.
func TestDoctorListsTheServersTools(t *testing.T) {
	withModel := baseEnv(t)
	withModel["GUI_AGENT_PROVIDER"], withModel["GUI_AGENT_MODEL"], withModel["GUI_AGENT_BASE_URL"] = "openai", "gpt-4.1", "http://127.0.0.1:9/v1"
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"no model", baseEnv(t), nil},
		{"a model", withModel, nil},
		{"--tools observe,input", baseEnv(t), []string{"--tools", "observe,input"}},
	} {
		_, out, _ := runCmd(t, c.env, append([]string{"doctor", "--virtual-display", "640x480"}, c.args...)...)
		_, detail := doctorRow(out, "tools")
		m := regexp.MustCompile(`^(\d+) offered: ([^;]*)`).FindStringSubmatch(detail)
		if m == nil {
			t.Fatalf("%s: no tools row in doctor's output:\n%s", c.name, out)
		}
		said := strings.Split(m[2], ", ")
		served := serverTools(t, c.env, append([]string{"--virtual-display", "640x480"}, c.args...)...)
		if m[1] != strconv.Itoa(len(served)) || !sameSet(said, served) {
			t.Errorf("%s: doctor says %s offered: %v; the server offers %d: %v", c.name, m[1], said, len(served), served)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := map[string]bool{}
	for _, s := range a {
		in[s] = true
	}
	for _, s := range b {
		if !in[s] {
			return false
		}
	}
	return true
}

// TestDoctorShowsWhatMatters: without --all, doctor shows no row of a
// setting left at its default nor backend details, and says how to see
// them; with --all it shows them, an unset value as "not set" and never as ok.
func TestDoctorShowsWhatMatters(t *testing.T) {
	env := baseEnv(t)
	env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"] = "openai", "gpt-4.1" // no key
	_, out, _ := runCmd(t, env, "doctor", "--virtual-display", "640x480")
	if strings.Contains(out, "source: default") || strings.Contains(out, "(empty)") || strings.Contains(out, "backend xtest") {
		t.Errorf("doctor without --all shows defaults or backend details:\n%s", out)
	}
	if !strings.Contains(out, "guiagent doctor --all") {
		t.Errorf("doctor does not say how to see the rows it left out:\n%s", out)
	}
	if level, detail := doctorRow(out, "model"); level != "FAIL" || !strings.Contains(detail, "GUI_AGENT_API_KEY, GUI_AGENT_OPENAI_API_KEY, OPENAI_API_KEY: none is set") {
		t.Errorf("a model without a key: %s %q", level, detail)
	}
	_, all, _ := runCmd(t, env, "doctor", "--all", "--virtual-display", "640x480")
	if level, detail := doctorRow(all, "api_key"); level == "ok" || !strings.Contains(detail, "not set") {
		t.Errorf("doctor --all shows the unset key as %s %q:\n%s", level, detail, all)
	}
	if level, detail := doctorRow(all, "adapter"); level != "info" || detail != "not set (source: default)" {
		t.Errorf("doctor --all shows the default adapter as %s %q", level, detail)
	}
	if _, detail := doctorRow(all, "backend xtest"); detail == "" {
		t.Errorf("doctor --all lacks the backend details:\n%s", all)
	}
	for _, line := range strings.Split(all, "\n") {
		if strings.HasPrefix(line, "ok ") && strings.Contains(line, "not set (source:") {
			t.Errorf("an unset value shows as ok: %q", line)
		}
	}
}

// TestDoctorSaysTheDisplayFixOnce: with no display, the way to get one is
// said once.
func TestDoctorSaysTheDisplayFixOnce(t *testing.T) {
	code, out, _ := runCmd(t, baseEnv(t), "doctor")
	if code != 1 {
		t.Fatalf("doctor without a display: exit %d\n%s", code, out)
	}
	if n := strings.Count(out, "--virtual-display 1280x800"); n != 1 {
		t.Errorf("doctor says --virtual-display 1280x800 %d times:\n%s", n, out)
	}
}

// TestHelpSpellsFlagsAsTheREADME: every command's help shows its long flags
// with two dashes, as the documentation does, and each default once.
func TestHelpSpellsFlagsAsTheREADME(t *testing.T) {
	readme, err := os.ReadFile("../../docs/fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "--max-desktops") {
		t.Fatal("docs/fleet.md no longer mentions --max-desktops: pick another flag for this test")
	}
	oneDash := regexp.MustCompile(`(?m)^\s+-[a-z][a-z-]+`)
	for _, c := range commands {
		code, out, _ := runCmd(t, baseEnv(t), c.name, "--help")
		if code != 0 {
			t.Errorf("%s --help: exit %d", c.name, code)
		}
		if m := oneDash.FindString(out); m != "" {
			t.Errorf("%s --help shows a long flag with one dash: %q", c.name, strings.TrimSpace(m))
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "default") > 1 {
				t.Errorf("%s --help says the default twice: %q", c.name, strings.TrimSpace(line))
			}
		}
	}
	_, out, _ := runCmd(t, baseEnv(t), "serve", "--help")
	for _, want := range []string{"  --max-desktops int", "default number of CPUs", "  --addr host:port", `(default "127.0.0.1:60008")`} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, out)
		}
	}
	if _, out, _ := runCmd(t, baseEnv(t), "doctor", "--help"); !strings.Contains(out, "  --all\n") {
		t.Errorf("doctor --help lacks --all:\n%s", out)
	}
}

// TestVersionNamesTheCommit: a binary built from a clone of this checkout
// prints the commit it was built from, with -dirty for a changed clone.
// (go build stamps no commit in a git worktree, whose .git is a file, so the
// test builds in a clone.)
func TestVersionNamesTheCommit(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil { // a source archive: the build says it has no commit
		_, out, _ := runCmd(t, baseEnv(t), "--version")
		if !strings.Contains(out, "commit unknown") {
			t.Errorf("--version without version control: %q", out)
		}
		return
	}
	clone := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command("git", "clone", "--quiet", "--no-hardlinks", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "LICENSE"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "guiagent")
	// Built as go test builds (no -trimpath, cgo as the machine has it): the
	// dependencies come from the cache, and only this module's packages
	// compile again, for the clone's path. (A -trimpath build would compile
	// the whole tree a second time, a CGO_ENABLED=0 one most of it.)
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/guiagent")
	build.Dir = clone
	build.Env = append(os.Environ(), "GOFLAGS=") // a GOFLAGS=-buildvcs=false would drop the commit
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "guiagent " + guiagent.Version + " (commit " + strings.TrimSpace(string(head)) + "-dirty)"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("--version = %q, want %q", got, want)
	}
}

func TestCommitOfBuildInfo(t *testing.T) {
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}, "(commit abc123)"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}, "(commit abc123-dirty)"},
		{nil, "(commit unknown"},
	} {
		if got := commitOf(&debug.BuildInfo{Settings: c.settings}); !strings.HasPrefix(got, c.want) {
			t.Errorf("commitOf(%v) = %q, want %q", c.settings, got, c.want)
		}
	}
}

// TestServeChecksFlagsBeforeTheDesktop: with no display at all, a bad
// --tools is reported as such, not as a missing display.
func TestServeChecksFlagsBeforeTheDesktop(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--tools", "bogus"}, `"bogus" is neither a tool nor a group`},
		{[]string{"serve", "--tools", "task"}, "gui_execute_task needs a model"},
		{[]string{"demo", "--tools", "bogus"}, `"bogus" is neither a tool nor a group`},
	} {
		code, _, stderr := runCmd(t, baseEnv(t), c.args...) // no DISPLAY
		if code != 1 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "X display") || strings.Contains(stderr, "DISPLAY") {
			t.Errorf("%v without a display: exit %d, stderr %q: want the flag's error, not the display's", c.args, code, stderr)
		}
	}
}

// TestRunsAgreesWithTheDashboard: a session the server is recording is open
// in `guiagent runs` too (it once said incomplete), and recorded once closed.
func TestRunsAgreesWithTheDashboard(t *testing.T) {
	env := baseEnv(t)
	server := openStore(func(k string) string { return env[k] }) // the serving process's store
	rec := server.Session("http-session-1")
	rec.RecordCall(trace.Call{Tool: "gui_screenshot", Result: "ok", Client: "claude-code"})
	rec.Flush()
	list, err := server.List() // what the dashboard's /api/runs serves
	if err != nil || len(list) != 1 {
		t.Fatalf("server lists %v, %v", list, err)
	}
	runsStatus := func() string {
		_, out, _ := runCmd(t, env, "runs")
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) > 4 && f[0] == list[0].ID {
				return f[4]
			}
		}
		t.Fatalf("guiagent runs does not list %s:\n%s", list[0].ID, out)
		return ""
	}
	if got := runsStatus(); got != list[0].Status || got != trace.StatusOpen {
		t.Errorf("a live session: the dashboard says %s, guiagent runs says %s", list[0].Status, got)
	}
	rec.Close()
	server.Close()
	if got := runsStatus(); got != trace.StatusRecorded {
		t.Errorf("a closed session: guiagent runs says %s, want %s", got, trace.StatusRecorded)
	}
}

// TestDemoLogsOneFormat: the demo's stderr is one log in one format; it says
// the desktop is the private one it started and that the scripted model
// counts no tokens, and the report does not invent any.
func TestDemoLogsOneFormat(t *testing.T) {
	env := baseEnv(t)
	env["DISPLAY"] = ":9999" // set but not the demo's: the demo must not claim it
	code, stdout, stderr := runCmd(t, env, "demo")
	if code != 0 {
		t.Fatalf("demo exit %d\n%s", code, stderr)
	}
	logLine := regexp.MustCompile(`^time=\S+ level=[A-Z]+ msg=`)
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !logLine.MatchString(line) {
			t.Errorf("stderr line not in the log's format: %q", line)
		}
	}
	if !strings.Contains(stderr, `why="a private Xvfb this process started for itself`) || strings.Contains(stderr, "DISPLAY=:") {
		t.Errorf("the demo does not say its desktop is the private one it started:\n%s", stderr)
	}
	var res struct {
		Model  string `json:"model"`
		Report string `json:"report"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Model, "scripted") || !strings.Contains(res.Model, "no tokens") {
		t.Errorf("the demo result does not say its model is scripted: %q", res.Model)
	}
	if strings.Contains(stdout, `"input_tokens": 4`) || !strings.Contains(stdout, `"input_tokens": 0`) {
		t.Errorf("the scripted model reports token counts:\n%s", stdout)
	}
	rep, err := os.ReadFile(res.Report)
	if err != nil || !strings.Contains(string(rep), "none reported") {
		t.Errorf("the report does not say no tokens were reported (%v)", err)
	}
}
