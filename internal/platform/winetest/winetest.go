// Package winetest runs Windows builds of the project under Wine for tests:
// it builds the stand-in bcryptprimitives.dll that Wine 8.0 lacks (the Go
// runtime imports ProcessPrng from it), gives each test a Wine prefix in its
// temporary directory (a copy of a template made once per machine) and
// starts Windows programs in it on a given X display.
//
// Missing tools fail the test (they never skip it): CI installs them with
// apt-get install wine wine64 gcc-mingw-w64-x86-64.
package winetest

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/testenv"
)

// prngSource is the C source of the stand-in bcryptprimitives.dll.
//
//go:embed testdata/bcryptprimitives.c
var prngSource []byte

// Install is the command that installs what this package needs (Debian).
const Install = "apt-get install wine wine64 gcc-mingw-w64-x86-64"

// tools are the programs this package runs.
var tools = []string{"wine", "wineserver", "wineboot", "x86_64-w64-mingw32-gcc"}

// Require fails the test when Wine or the mingw-w64 cross compiler is missing.
func Require(t testing.TB) {
	t.Helper()
	testenv.NeedWine(t)
	var missing []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%s not installed: the Wine tests need Wine 8 and mingw-w64: %s", strings.Join(missing, ", "), Install)
	}
}

// Prefix is a Wine prefix (a private C: drive and registry) set up for Go
// programs: the stand-in DLL is in system32 and Wine reports Windows 10.
type Prefix struct {
	// Dir is the prefix directory (WINEPREFIX).
	Dir string
	// tmp is Wine's TMPDIR (it keeps the wineserver's socket there), inside
	// the test's temporary directory so that nothing is left in /tmp.
	tmp string
}

// NewPrefix gives the test a prefix of its own under t.TempDir(), copied
// from a template made once per machine (see template), and stops the
// prefix's Wine processes when the test ends. Making the template takes
// about 20 s; a copy takes about a second.
func NewPrefix(t testing.TB) *Prefix {
	t.Helper()
	Require(t)
	tmpl := template(t)
	dir := t.TempDir()
	p := &Prefix{Dir: filepath.Join(dir, "prefix"), tmp: filepath.Join(dir, "tmp")}
	if err := os.Mkdir(p.tmp, 0o700); err != nil {
		t.Fatalf("winetest: %v", err)
	}
	if out, err := exec.Command("cp", "-a", tmpl, p.Dir).CombinedOutput(); err != nil {
		t.Fatalf("winetest: copy the template prefix %s: %v\n%s", tmpl, err, out)
	}
	t.Cleanup(func() { p.Stop(t) })
	return p
}

// template returns the template prefix, making it when this machine has
// none yet for this Wine and this stand-in DLL. Test processes of several
// packages share it (a lock file keeps them from making it twice at once),
// and it is renamed into place only when complete. It lives in the system's
// temporary directory, named after the user, the Wine version and the DLL's
// source, so an upgraded Wine gets a new one.
func template(t testing.TB) string {
	t.Helper()
	version, err := exec.Command("wine", "--version").Output()
	if err != nil {
		t.Fatalf("winetest: wine --version: %v", err)
	}
	sum := sha256.Sum256(append(append(version, 0), prngSource...))
	final := filepath.Join(os.TempDir(), fmt.Sprintf("guiagent-winetest-%d-%x", os.Getuid(), sum[:6]))
	unlock, err := lockFile(final + ".lock")
	if err != nil {
		t.Fatalf("winetest: %v", err)
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(final, "system.reg")); err == nil {
		return final
	}
	work, err := os.MkdirTemp(os.TempDir(), filepath.Base(final)+"-making-")
	if err != nil {
		t.Fatalf("winetest: %v", err)
	}
	defer os.RemoveAll(work)
	p := &Prefix{Dir: filepath.Join(work, "prefix"), tmp: filepath.Join(work, "tmp")}
	if err := os.Mkdir(p.tmp, 0o700); err != nil {
		t.Fatalf("winetest: %v", err)
	}
	defer p.Stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// wineboot -i creates the prefix; mscoree and mshtml are disabled so that
	// it does not offer to download Mono and Gecko (tests have no internet).
	p.run(t, ctx, "", "wineboot", "-i")
	sys32 := filepath.Join(p.Dir, "drive_c", "windows", "system32")
	b, err := os.ReadFile(BuildDLL(t, work))
	if err == nil {
		err = os.WriteFile(filepath.Join(sys32, "bcryptprimitives.dll"), b, 0o644)
	}
	if err != nil {
		t.Fatalf("winetest: install the stand-in DLL in %s: %v", sys32, err)
	}
	p.Reg(t, `HKCU\Software\Wine`, "Version", "REG_SZ", "win10")
	p.Stop(t)           // the wineserver writes the registry out
	os.RemoveAll(final) // an incomplete one (no system.reg)
	if err := os.Rename(p.Dir, final); err != nil {
		t.Fatalf("winetest: %v", err)
	}
	return final
}

// BuildDLL compiles the stand-in bcryptprimitives.dll into dir and returns its path.
func BuildDLL(t testing.TB, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "bcryptprimitives.c")
	dll := filepath.Join(dir, "bcryptprimitives.dll")
	if err := os.WriteFile(src, prngSource, 0o644); err != nil {
		t.Fatalf("winetest: %v", err)
	}
	cmd := exec.Command("x86_64-w64-mingw32-gcc", "-shared", "-O2", "-s", "-o", dll, src, "-ladvapi32")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("winetest: build the stand-in bcryptprimitives.dll: %v\n%s", err, out)
	}
	return dll
}

// Env is the environment of a Wine program on display: the caller's, without
// its Wine, display and TMPDIR settings, plus this prefix, quiet debugging
// output, no Mono or Gecko, and a TMPDIR inside the test's directory.
func (p *Prefix) Env(display string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WINE") && !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "WINEPREFIX="+p.Dir, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml=", "TMPDIR="+p.tmp)
	if display != "" {
		env = append(env, "DISPLAY="+display)
	}
	return env
}

// Command returns a command that runs the Windows program exe (a Linux path)
// with args under Wine on display. Call Stop after it ends and before using
// another display: Wine keeps its desktop process on the first display.
func (p *Prefix) Command(ctx context.Context, display, exe string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "wine", append([]string{exe}, args...)...)
	cmd.Env = p.Env(display)
	cmd.Dir = filepath.Dir(exe)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Reg sets a registry value (wine reg add ... /f). Once in a full test run
// on a loaded machine, reg.exe exited 1 without a word (Wine's own debug
// output is off); it could not be made to happen again alone or under load.
// So a failure stops the prefix's processes and tries once more with Wine's
// error channel on, and logs what the first try said: setting up Wine is the
// harness's work, not what a test checks.
func (p *Prefix) Reg(t testing.TB, key, name, typ, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"reg", "add", key, "/v", name, "/t", typ, "/d", value, "/f"}
	cmd := exec.CommandContext(ctx, "wine", args...)
	cmd.Env = p.Env("")
	out, err := RunLogged(cmd)
	if err == nil {
		return
	}
	p.Stop(t)
	again := exec.CommandContext(ctx, "wine", args...)
	again.Env = append(p.Env(""), "WINEDEBUG=err+all")
	out2, err2 := RunLogged(again)
	if err2 != nil {
		t.Fatalf("winetest: wine %s: %v (%q), and again after stopping the prefix: %v\n%s", strings.Join(args, " "), err, out, err2, out2)
	}
	t.Logf("winetest: wine %s failed once (%v, %q) and then worked after stopping the prefix", strings.Join(args, " "), err, out)
}

// SetLogPixels sets the system DPI Wine reports (96 is 100%, 144 is 150%).
// It takes effect for programs started after the next Stop.
func (p *Prefix) SetLogPixels(t testing.TB, dpi int) {
	t.Helper()
	p.Reg(t, `HKCU\Control Panel\Desktop`, "LogPixels", "REG_DWORD", strconv.Itoa(dpi))
}

// Stop ends every Wine process of the prefix and its wineserver, which
// writes the registry to disk first.
func (p *Prefix) Stop(t testing.TB) {
	t.Helper()
	cmd := exec.Command("wineserver", "-k")
	cmd.Env = p.Env("")
	_ = cmd.Run() // fails when no server runs: nothing to stop
	wait := exec.Command("wineserver", "-w")
	wait.Env = p.Env("")
	_ = wait.Run()
}

func (p *Prefix) run(t testing.TB, ctx context.Context, display string, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = p.Env(display)
	out, err := RunLogged(cmd)
	if err != nil {
		t.Fatalf("winetest: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	if name == "wineboot" {
		// wineboot returns before the prefix's wineserver has finished writing
		// the new registry; wait for it.
		w := exec.CommandContext(ctx, "wineserver", "-w")
		w.Env = cmd.Env
		if err := w.Run(); err != nil {
			t.Fatalf("winetest: wineserver -w after wineboot: %v", err)
		}
	}
}

// RunLogged runs cmd with its standard output and error going to a temporary
// file and returns what they wrote. Wine's background processes (wineserver,
// explorer) inherit the descriptors and outlive the command, so a pipe would
// never reach its end: a file does not wait for them.
func RunLogged(cmd *exec.Cmd) (string, error) {
	f, err := os.CreateTemp("", "winetest-out-")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	runErr := cmd.Run()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return "", err
	}
	return string(b), runErr
}

// String describes the prefix.
func (p *Prefix) String() string { return fmt.Sprintf("Wine prefix %s", p.Dir) }
