package guiagent_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/config"
)

// TestNoHardCodedVariableNames: a configuration variable is named in one
// place, its knob in internal/config (Knobs). Every other non-test Go file,
// cmd's help included, gets a name from config.Var (or config.EnvPrefix), so
// a hint in an error cannot name a variable that does not exist or the
// wrong one. It also checks that every config.Var call names a knob with a
// variable (Var panics on any other name).
func TestNoHardCodedVariableNames(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		inConfig := filepath.ToSlash(filepath.Dir(path)) == "internal/config"
		literalsAllowed := inConfig || strings.HasSuffix(path, "_test.go")
		cfg := "" // the name the file gives internal/config
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/guiagent/guiagent/internal/config" {
				cfg = "config"
				if imp.Name != nil {
					cfg = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING && !literalsAllowed && strings.Contains(n.Value, config.EnvPrefix) {
					t.Errorf("%s: %s spells a variable name: use config.Var(\"Field\") (or config.EnvPrefix), so the knob table in internal/config stays the one place it is written",
						fset.Position(n.Pos()), n.Value)
				}
			case *ast.CallExpr:
				checkVarCall(t, fset, n, cfg, inConfig)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("the walk parsed %d Go files: it is not looking at the tree", files)
	}
}

// checkVarCall reports a config.Var or Vars call (inside config, Var or
// Vars) with an argument that is not the name of a knob with a variable.
func checkVarCall(t *testing.T, fset *token.FileSet, call *ast.CallExpr, cfg string, inConfig bool) {
	t.Helper()
	isVar := false
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		id, ok := fn.X.(*ast.Ident)
		isVar = ok && cfg != "" && id.Name == cfg && (fn.Sel.Name == "Var" || fn.Sel.Name == "Vars")
	case *ast.Ident:
		isVar = inConfig && (fn.Name == "Var" || fn.Name == "Vars")
	}
	if !isVar {
		return
	}
	for _, arg := range call.Args {
		lit, ok := arg.(*ast.BasicLit)
		if !ok && inConfig {
			continue // Vars passing its names on, and Var's own test
		}
		if !ok {
			t.Errorf("%s: config.Var and Vars take knob names as string literals, so this test can check them", fset.Position(call.Pos()))
			continue
		}
		name, _ := strconv.Unquote(lit.Value)
		if k, ok := config.KnobNamed(name); !ok || k.Env == "" {
			t.Errorf("%s: config.Var(%q) names no knob with a variable (see config.Knobs)", fset.Position(call.Pos()), name)
		}
	}
}
