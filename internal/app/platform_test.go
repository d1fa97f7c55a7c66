package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/platform"
)

// TestOnePlatformOptions: outside tests and the platform package, no file
// but platform.go builds a platform.Options literal, so app, doctor and
// release pick their backend from one translation of the configuration.
func TestOnePlatformOptions(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/platform/") || rel == "internal/app/platform.go" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok {
				if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Options" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "platform" {
						found = append(found, rel)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("platform.Options literals outside internal/app/platform.go: %v; build them with app.PlatformOptions(config)", found)
	}
}

// TestBackendChoicesArePlatforms: --backend accepts exactly what platform
// can start on this system (config keeps its own list: it may not import
// platform).
func TestBackendChoicesArePlatforms(t *testing.T) {
	var want []string
	for _, b := range platform.Backends() {
		want = append(want, string(b))
	}
	for _, k := range config.Knobs {
		if k.Name == "Backend" {
			if got := k.Choices(); !slices.Equal(got, want) {
				t.Fatalf("--backend accepts %v, platform starts %v", got, want)
			}
			return
		}
	}
	t.Fatal("no Backend knob")
}

// TestPlatformOptionsFromConfig: the session's variables reach the
// selection; a display named by flag asks for X11; the backend setting is
// named as the user gave it.
func TestPlatformOptionsFromConfig(t *testing.T) {
	env := map[string]string{"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-1", "XDG_CURRENT_DESKTOP": "GNOME", "DISPLAY": ":0", "XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/h"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		args []string
		env  string
		want platform.Backend
		why  string
	}{
		{nil, "", platform.Portal, "WAYLAND_DISPLAY=wayland-1 and XDG_SESSION_TYPE=wayland: portal"},
		{[]string{"--backend", "x11"}, "", platform.X11, "--backend x11"},
		{nil, "x11", platform.X11, config.Var("Backend") + "=x11"},
		{[]string{"--display", ":3"}, "", platform.X11, "--display :3 picks x11"},
	} {
		env[config.Var("Backend")] = c.env
		cfg, _, err := config.Load("serve", c.args, getenv)
		if err != nil {
			t.Fatal(err)
		}
		o := PlatformOptions(cfg)
		if o.Session.RuntimeDir != "/run/user/1000" || o.StateDir != cfg.StateDir || o.StateDir == "" {
			t.Errorf("%v: session %+v, state dir %q", c.args, o.Session, o.StateDir)
		}
		ch, err := platform.Select(o)
		if err != nil || ch.Backend != c.want || !strings.Contains(ch.Why, c.why) {
			t.Errorf("%v %s: %s %q, %v; want %s because %q", c.args, c.env, ch.Backend, ch.Why, err, c.want, c.why)
		}
	}
}
