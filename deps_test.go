package guiagent_test

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/llm"
	_ "github.com/guiagent/guiagent/internal/llm/providers" // registers every provider
)

// wiring reports whether pkg assembles guiagent from its parts: cmd and
// internal/app (which the public package and cmd are built on).
func wiring(pkg string) bool {
	const mod = "github.com/guiagent/guiagent/"
	return strings.HasPrefix(pkg, mod+"cmd/") || strings.HasPrefix(pkg, mod+"internal/app")
}

// providerPackages are the packages that registered a provider or an adapter
// with internal/llm: every one of them, not a list of names.
func providerPackages(t *testing.T) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range llm.Providers() {
		add(p.Package)
	}
	for _, a := range llm.Adapters() {
		add(a.Package)
	}
	if len(out) < 3 {
		t.Fatalf("only %v registered a provider: internal/llm/providers must link them all", out)
	}
	return out
}

// TestEveryRegisteredProviderIsComplete: each registered provider names
// adapters that are registered, has a rule for every model ("*" last), an
// example model that its rules accept, and each adapter a fake wire.
func TestEveryRegisteredProviderIsComplete(t *testing.T) {
	for _, p := range llm.Providers() {
		for _, a := range p.Adapters {
			if _, ok := llm.AdapterNamed(a); !ok {
				t.Errorf("provider %s names adapter %s, which no package registered", p.Name, a)
			}
		}
		last := p.Rules[len(p.Rules)-1]
		if len(last.Match) != 1 || last.Match[0] != "*" {
			t.Errorf("provider %s: the last rule %v must match every model (\"*\")", p.Name, last.Match)
		}
		if _, ok := p.Choose(p.Example); !ok || p.Example == "" {
			t.Errorf("provider %s: example model %q", p.Name, p.Example)
		}
		if p.Vision == nil || p.Text == nil {
			t.Errorf("provider %s has no vision or text model", p.Name)
		}
	}
	for _, a := range llm.Adapters() {
		if a.Doc == "" || a.Wire == "" {
			t.Errorf("adapter %s has no Doc or fake Wire", a.Name)
		}
	}
}

// TestImportRules holds the import direction of ARCHITECTURE.md: geom is pure,
// the MCP SDK stays in mcpserver (and the e2e tests) and the public package
// that returns its server, and only cmd and platform import concrete
// backends; only cmd and internal/app import concrete model providers and
// the MCP server outside tests; llm reaches desktop only through the action
// vocabulary; action builds on geom and desktop alone.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/guiagent/guiagent/"
	rules := []struct {
		imported string
		allowed  func(pkg string) bool
	}{
		{"github.com/modelcontextprotocol/go-sdk", func(p string) bool {
			// the MCP server, the hosting that serves it and the fleet that
			// routes sessions to servers; the public package returns *mcp.Server
			return strings.HasPrefix(p, mod+"internal/mcpserver") || strings.HasPrefix(p, mod+"internal/hosting") ||
				strings.HasPrefix(p, mod+"internal/fleet") || p == strings.TrimSuffix(mod, "/")
		}},
		{mod + "internal/backend/", func(p string) bool {
			return strings.HasPrefix(p, mod+"cmd/") || strings.HasPrefix(p, mod+"internal/platform") || strings.HasPrefix(p, mod+"internal/backend/")
		}},
		{mod + "internal/mcpserver", func(p string) bool { return wiring(p) || strings.HasPrefix(p, mod+"internal/fleet") }},
		{mod + "internal/desktop", func(p string) bool { return !strings.HasPrefix(p, mod+"internal/llm") }},
		{mod + "internal/agent", func(p string) bool {
			if p == strings.TrimSuffix(mod, "/") {
				return true // the public package runs tasks (Execute)
			}
			for _, ok := range []string{"cmd/", "internal/app", "internal/eval", "internal/mcpserver", "internal/web", "internal/trace", "internal/flow", "internal/telemetry", "internal/agent"} {
				if strings.HasPrefix(p, mod+ok) {
					return true
				}
			}
			return false
		}},
	}
	for _, p := range providerPackages(t) {
		rules = append(rules, struct {
			imported string
			allowed  func(pkg string) bool
		}{p, func(pkg string) bool { return wiring(pkg) || pkg == mod+"internal/llm/providers" }})
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		for _, imp := range imports {
			if pkg == mod+"internal/geom" && strings.Contains(imp, ".") {
				t.Errorf("internal/geom must import only the standard library, imports %s", imp)
			}
			if pkg == mod+"internal/action" && strings.Contains(imp, ".") && imp != mod+"internal/geom" && imp != mod+"internal/desktop" {
				t.Errorf("internal/action must import only the standard library, geom and desktop, imports %s", imp)
			}
			for _, r := range rules {
				if strings.HasPrefix(imp, r.imported) && !strings.HasPrefix(pkg, r.imported) && !r.allowed(pkg) {
					t.Errorf("%s imports %s, which the layout forbids (see ARCHITECTURE.md)", pkg, imp)
				}
			}
		}
	}
}

// envReaders are the calls that read the process environment.
var envReaders = map[string]map[string]bool{
	"os":      {"Getenv": true, "LookupEnv": true, "Environ": true},
	"syscall": {"Getenv": true, "Environ": true},
}

// TestOnlyConfigAndCmdReadTheEnvironment: every value from the environment
// enters through internal/config (or cmd, which passes getenv to config) and
// reaches other packages as options. Test files and test-helper packages
// (named *test, imported only by tests) are exempt. Every .go file is parsed,
// whatever its build tags, so Windows and macOS code is held too.
func TestOnlyConfigAndCmdReadTheEnvironment(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasPrefix(dir, "cmd/") || dir == "internal/config" || strings.HasSuffix(dir, "test") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		local := map[string]string{} // the name a file uses for os or syscall -> the package
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if envReaders[p] == nil {
				continue
			}
			name := p
			if imp.Name != nil {
				name = imp.Name.Name
			}
			local[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && envReaders[local[id.Name]][sel.Sel.Name] {
				t.Errorf("%s: %s.%s reads the environment outside config and cmd: add the value to internal/config and pass it in the package's options (see ARCHITECTURE.md)",
					fset.Position(sel.Pos()), local[id.Name], sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTestHelpersAreImportedOnlyByTests keeps the exemption above honest: a
// package whose name ends in "test" (xvfbtest, browsertest) is a test helper,
// so no non-test package may import it.
func TestTestHelpersAreImportedOnlyByTests(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/guiagent/guiagent/"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, mod) && strings.HasSuffix(imp, "test") {
				t.Errorf("%s imports the test helper %s; only _test.go files may", fields[0], imp)
			}
		}
	}
}

// layers are the import layers of ARCHITECTURE.md, lowest first. A package
// may import packages of its own layer or lower ones, never a higher one.
// The longest matching prefix gives a package its layer; a package in none is
// an error, so a new package is placed (here and in ARCHITECTURE.md) on purpose.
var layers = [][]string{
	// 0: pure values, standard library only.
	{"internal/geom", "internal/secret", "internal/testenv"},
	// 1: the desktop contract.
	{"internal/desktop"},
	// 2: what works on the contract without choosing an implementation, and
	// the configuration, which takes its defaults from llm and imaging.
	{"internal/desktop/fake", "internal/desktop/suite", "internal/imaging", "internal/safety", "internal/action",
		"internal/llm", "internal/sampleapp", "internal/trace/browsertest", "internal/config", "internal/ask",
		"internal/ocr", "internal/ocr/regions", "internal/uitree"},
	// 3: implementations: backends and the platform that picks one, model
	// providers and their scripted fakes.
	// The action executor, which every front end performs input through, and
	// the OCR engine on the tesseract program.
	{"internal/backend/", "internal/platform", "internal/llm/", "internal/vision", "internal/operate", "internal/ocr/tesseract"},
	// 4: the task loop.
	{"internal/agent"},
	// 5: run records of tasks and MCP sessions; flows, which run steps and
	// tasks and record them, and Midscene scripts translated into flows;
	// metrics.
	{"internal/trace", "internal/flow", "internal/midscene", "internal/telemetry"},
	// 6: the two front ends, which never import each other, and the hosting
	// of an MCP server (stdio framing, the HTTP front's checks).
	{"internal/mcpserver", "internal/web", "internal/hosting"},
	// 7: the assembly of all parts (internal/app), the public package at the
	// module root built on it, the binary and its end-to-end tests.
	// The fleet, a server per session, is wiring too; the evaluator builds a
	// private App per run.
	{"internal/app", "internal/fleet", "internal/eval", "cmd/", "e2e", "deploy/", ""},
}

// layerOf returns the layer of pkg (module-relative path), or -1.
func layerOf(pkg string) int {
	best, layer := -1, -1
	for i, l := range layers {
		for _, p := range l {
			match := pkg == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p)) || strings.HasPrefix(pkg, p+"/")
			if p == "" {
				match = pkg == ""
			}
			if match && len(p) > best {
				best, layer = len(p), i
			}
		}
	}
	return layer
}

// TestLayers holds the import direction of ARCHITECTURE.md: lower layers
// never import higher ones; web and mcpserver are imported by cmd only (web
// does not import mcpserver: mcpserver mounts the handler web builds); geom
// and secret import only the standard library.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/guiagent/guiagent"
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, mod), "/") }
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := rel(fields[0])
		lp := layerOf(pkg)
		if lp < 0 {
			t.Errorf("package %s has no layer: add it to layers in deps_test.go and to ARCHITECTURE.md", fields[0])
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, mod+"/") {
				if (pkg == "internal/geom" || pkg == "internal/secret") && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
					t.Errorf("%s must import only the standard library, imports %s", pkg, imp)
				}
				continue
			}
			ip := rel(imp)
			if li := layerOf(ip); li > lp && !strings.HasPrefix(ip, pkg+"/") {
				t.Errorf("%s (layer %d) imports %s (layer %d): a lower layer never imports a higher one (see ARCHITECTURE.md)", pkg, lp, ip, li)
			}
			for _, front := range []string{"internal/mcpserver", "internal/web"} {
				if (ip == front || strings.HasPrefix(ip, front+"/")) && !strings.HasPrefix(pkg, "cmd/") && pkg != "internal/app" && pkg != "internal/fleet" && !strings.HasPrefix(pkg, front) {
					t.Errorf("%s imports %s; only internal/app and cmd wire the front ends together", pkg, ip)
				}
			}
		}
	}
}

// TestMCPServerUsesAgentOnlyForTasks: mcpserver records its atomic calls in
// its own terms (action.Trace for the inputs); it uses the agent package only
// for the gui_execute_task tool (a task, its result and progress events).
func TestMCPServerUsesAgentOnlyForTasks(t *testing.T) {
	allowed := map[string]bool{"Task": true, "Result": true, "Event": true, "EvProgress": true, "Failed": true}
	files, err := filepath.Glob("internal/mcpserver/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "agent" && !allowed[sel.Sel.Name] {
				t.Errorf("%s: mcpserver uses agent.%s; only the task tool may use agent (%v)", fset.Position(sel.Pos()), sel.Sel.Name, allowed)
			}
			return true
		})
	}
}

// inputActions are desktop.Input's action methods: only internal/operate
// (and what it builds on) calls them.
var inputActions = map[string]bool{"Click": true, "Move": true, "MouseDown": true, "MouseUp": true, "Drag": true,
	"Scroll": true, "Hotkey": true, "PressKey": true, "KeyDown": true, "KeyUp": true, "Type": true}

// TestOnlyTheExecutorDrivesInput: the four front ends (the agent loop,
// flows, the MCP tools, the public Go API) perform input through
// operate.Executor, never by calling desktop.Input's actions themselves, so
// the key policy, confirmations, waits and the release ledger are the same
// on every path.
func TestOnlyTheExecutorDrivesInput(t *testing.T) {
	fset := token.NewFileSet()
	inOperate := 0 // the executor's own calls: proof that the check recognises one
	for _, dir := range []string{"internal/operate", "internal/agent", "internal/flow", "internal/mcpserver", "internal/app", "."} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !inputActions[sel.Sel.Name] {
					return true
				}
				var recv strings.Builder
				_ = printer.Fprint(&recv, fset, sel.X)
				r := recv.String()
				direct := strings.HasSuffix(r, "nput") || strings.HasSuffix(r, "nput()") || r == "in" || strings.HasSuffix(r, ".in")
				switch {
				case !direct:
				case dir == "internal/operate":
					inOperate++
				default:
					t.Errorf("%s: %s.%s drives desktop.Input directly: perform the action through operate.Executor.Do", fset.Position(sel.Pos()), r, sel.Sel.Name)
				}
				return true
			})
		}
	}
	if inOperate < 5 {
		t.Fatalf("the check saw %d of the executor's own calls of desktop.Input: it does not recognise one", inOperate)
	}
}

// TestNoLongFunctions: no non-test function is longer than 100 lines; a
// longer one is split into named steps.
func TestNoLongFunctions(t *testing.T) {
	const maxLines = 100
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxLines {
				t.Errorf("%s: %s is %d lines long (at most %d): split it into named steps", fset.Position(fn.Pos()), fn.Name.Name, n, maxLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Like a go/analysis pass, say what was covered: a walk that saw no file
	// (or only a handful) checked nothing and must not pass.
	if files < 100 {
		t.Fatalf("the walk inspected %d non-test Go files: it is not looking at the tree", files)
	}
	t.Logf("inspected %d non-test Go files", files)
}
