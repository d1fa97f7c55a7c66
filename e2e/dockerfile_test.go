package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/testenv"
)

// Docker is not available on the test machines, so the image is checked in
// parts: the Dockerfile's instructions, the package script it shares with CI,
// the static build it makes, and its command run as the container would.

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct{ cmd, args string }

func readDockerfile(t *testing.T) []instruction {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatalf("the repository has no Dockerfile: %v", err)
	}
	var out []instruction
	line := ""
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			line += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		line += l
		cmd, args, _ := strings.Cut(line, " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		line = ""
	}
	return out
}

// finalStage returns the instructions from the last FROM on.
func finalStage(ins []instruction) []instruction {
	last := 0
	for i, in := range ins {
		if in.cmd == "FROM" {
			last = i
		}
	}
	return ins[last:]
}

func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(in.args), &v); err != nil {
		t.Fatalf("%s %s is not in exec form (a JSON array): %v", in.cmd, in.args, err)
	}
	return v
}

func TestDockerfile(t *testing.T) {
	ins := readDockerfile(t)
	final := finalStage(ins)
	if !regexp.MustCompile(`^debian:[a-z]+-slim$`).MatchString(final[0].args) {
		t.Errorf("the image is based on %q, want Debian slim", final[0].args)
	}
	var build, install, cmd, entry, expose []string
	for i, in := range ins {
		switch {
		case in.cmd == "RUN" && strings.Contains(in.args, "go build"):
			build = append(build, in.args)
		case in.cmd == "RUN" && strings.Contains(in.args, "debian-packages.sh install runtime") && slices.Contains(final, in):
			install = append(install, in.args)
		case in.cmd == "CMD":
			cmd = execForm(t, ins[i])
		case in.cmd == "ENTRYPOINT":
			entry = execForm(t, ins[i])
		case in.cmd == "EXPOSE":
			expose = strings.Fields(in.args)
		case (in.cmd == "ENV" || in.cmd == "ARG") && strings.Contains(in.args, "GUI_AGENT_HTTP_TOKEN"):
			t.Errorf("the Dockerfile sets the token (%s %s): it must come from the environment at run time", in.cmd, in.args)
		}
	}
	if len(build) != 1 || !strings.Contains(build[0], "CGO_ENABLED=0") || !strings.Contains(build[0], "./cmd/guiagent") {
		t.Errorf("want one static build of ./cmd/guiagent with CGO_ENABLED=0, got %q", build)
	}
	if len(install) != 1 {
		t.Errorf("the final stage must install its packages with scripts/debian-packages.sh install runtime, got %q", install)
	}
	args := append(entry[1:], cmd...)
	if len(entry) == 0 || filepath.Base(entry[0]) != "guiagent" {
		t.Fatalf("ENTRYPOINT %q does not run guiagent", entry)
	}
	for _, want := range []string{"serve", "--http", "--allow-remote", "--virtual-display"} {
		if !slices.Contains(args, want) {
			t.Errorf("the image's command %q lacks %s", args, want)
		}
	}
	i := slices.Index(args, "--addr")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("the image's command %q has no --addr", args)
	}
	host, port, err := net.SplitHostPort(args[i+1])
	if err != nil || host != "0.0.0.0" || len(expose) != 1 || expose[0] != port {
		t.Errorf("--addr %s and EXPOSE %q: want 0.0.0.0 and the exposed port", args[i+1], expose)
	}
}

// The package script lists the runtime set (Xvfb, fonts with CJK) inside the
// ci set that .ci/run installs, so CI runs the image's install path.
func TestDebianPackageScript(t *testing.T) {
	list := func(set string) []string {
		out, err := exec.Command("sh", "../scripts/debian-packages.sh", "list", set).Output()
		if err != nil {
			t.Fatalf("debian-packages.sh list %s: %v", set, err)
		}
		return strings.Fields(string(out))
	}
	runtime, ci := list("runtime"), list("ci")
	if !slices.Contains(runtime, "xvfb") || !slices.ContainsFunc(runtime, func(p string) bool { return strings.Contains(p, "cjk") || strings.Contains(p, "wqy") }) {
		t.Errorf("runtime packages %q lack Xvfb or a CJK font", runtime)
	}
	for _, p := range runtime {
		if !slices.Contains(ci, p) {
			t.Errorf("CI does not install the image's package %s", p)
		}
	}
	run, err := os.ReadFile("../.ci/run")
	if err != nil || !strings.Contains(string(run), "scripts/debian-packages.sh install ci") {
		t.Errorf(".ci/run does not install its packages with scripts/debian-packages.sh install ci (%v)", err)
	}
	if out, err := exec.Command("sh", "../scripts/debian-packages.sh", "list", "bogus").CombinedOutput(); err == nil || !strings.Contains(string(out), "usage") {
		t.Errorf("an unknown package set: %v %s", err, out)
	}
}

// The image's build is static. Its CGO_ENABLED=0 (checked in
// TestDockerfile) leaves out every file that uses cgo, and the linker then
// links the binary itself, with no dynamic interpreter. The standard library
// has a pure-Go version of each package that uses cgo (net, os/user); any
// other package that uses cgo may not build without it, or lose what its C
// part does, so none may be linked. This reads the package lists rather than
// compiling the static build: that would compile the whole tree a second
// time, minutes on a fresh machine.
func TestDockerBuildIsStatic(t *testing.T) {
	type pkg struct {
		path, err string
		std, cgo  bool
	}
	list := func(cgo string) []pkg {
		cmd := exec.Command("go", "list", "-deps", "-e", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{with .Error}}{{.}}{{end}}\t{{join .CgoFiles \" \"}}", "github.com/guiagent/guiagent/cmd/guiagent")
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list with CGO_ENABLED=%s: %v", cgo, err)
		}
		var pkgs []pkg
		for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			f := strings.SplitN(l, "\t", 4)
			if len(f) != 4 {
				t.Fatalf("go list printed %q", l)
			}
			pkgs = append(pkgs, pkg{path: f[0], std: f[1] == "true", err: f[2], cgo: f[3] != ""})
		}
		return pkgs
	}
	sawCgo := false
	for _, p := range list("1") {
		sawCgo = sawCgo || p.path == "runtime/cgo" && p.cgo
		if p.cgo && !p.std {
			t.Errorf("%s uses cgo: the image's CGO_ENABLED=0 build leaves its C part out", p.path)
		}
	}
	if !sawCgo {
		t.Errorf("with cgo on, go list shows no cgo in runtime/cgo: the check reads nothing")
	}
	for _, p := range list("0") {
		if p.err != "" {
			t.Errorf("with CGO_ENABLED=0, %s does not build: %s", p.path, p.err)
		}
	}
}

// The image's command, run as the container runs it (no DISPLAY), refuses
// to start without a token and with one serves on a private virtual display
// behind the token.
func TestDockerCommandAsTheContainerRunsIt(t *testing.T) {
	testenv.NeedX(t)
	var args []string
	for _, in := range readDockerfile(t) {
		if in.cmd == "CMD" {
			args = execForm(t, in)
		}
	}
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + home}
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--allow-remote requires GUI_AGENT_HTTP_TOKEN") {
		t.Fatalf("the image's command without a token: %v\n%s", err, out)
	}

	// With a token it serves; the port is swapped for a free one, as -p would map it.
	addr := freePort(t)
	_, port, _ := net.SplitHostPort(addr)
	i := slices.Index(args, "--addr")
	args[i+1] = "0.0.0.0:" + port
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd = exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(env, "GUI_AGENT_HTTP_TOKEN="+httpToken)
	logs := &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	if !waitFor(30*time.Second, func() bool { return strings.Contains(logs.String(), "MCP endpoint") }) {
		t.Fatalf("the image's command did not start serving:\n%s", logs)
	}
	resp, err := http.Post("http://127.0.0.1:"+port+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/mcp without the token: %d, want 401", resp.StatusCode)
	}
	if !strings.Contains(logs.String(), "a private Xvfb started for --virtual-display 1280x800, since DISPLAY is not set") {
		t.Fatalf("the container's server does not drive a private display:\n%s", logs)
	}
}
