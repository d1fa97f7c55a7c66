package guiagent_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/api.txt from the package's exported API")

// TestExportedAPI holds the public package's exported API (declarations
// without doc comments or bodies) against testdata/api.txt, so every change
// to it is deliberate: run `go test -run TestExportedAPI -update .` and
// review the diff.
func TestExportedAPI(t *testing.T) {
	got := exportedAPI(t)
	if *update {
		if err := os.WriteFile("testdata/api.txt", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/api.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the exported API changed; if on purpose, run `go test -run TestExportedAPI -update .` and commit testdata/api.txt.\n--- want\n%s\n--- got\n%s", want, got)
	}
}

// exportedAPI prints every exported declaration of the package in this
// directory, one per entry, sorted.
func exportedAPI(t *testing.T) string {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	var decls []string
	print := func(n any) string {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				d.Body, d.Doc = nil, nil
				decls = append(decls, print(d))
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if e := exportedSpec(s); e != nil {
						decls = append(decls, d.Tok.String()+" "+print(e))
					}
				}
			}
		}
	}
	sort.Strings(decls)
	out := strings.Join(decls, "\n") + "\n"
	// Removed comments leave blank lines and alignment that depend on
	// them: one space between words, no blank lines.
	out = regexp.MustCompile(`\n\s*\n`).ReplaceAllString(out, "\n")
	return regexp.MustCompile(`([^\n\t])\t+`).ReplaceAllString(out, "$1 ")
}

func exportedRecv(fl *ast.FieldList) bool {
	typ := fl.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// exportedSpec returns s stripped to its exported part (nil when none):
// comments, values of vars and unexported struct fields removed.
func exportedSpec(s ast.Spec) ast.Node {
	switch s := s.(type) {
	case *ast.TypeSpec:
		if !s.Name.IsExported() {
			return nil
		}
		s.Doc, s.Comment = nil, nil
		if st, ok := s.Type.(*ast.StructType); ok {
			var kept []*ast.Field
			for _, f := range st.Fields.List {
				f.Doc, f.Comment = nil, nil
				var names []*ast.Ident
				for _, n := range f.Names {
					if n.IsExported() {
						names = append(names, n)
					}
				}
				if len(f.Names) == 0 || len(names) > 0 {
					f.Names = names
					kept = append(kept, f)
				}
			}
			st.Fields.List = kept
		}
		return s
	case *ast.ValueSpec:
		var names []*ast.Ident
		for _, n := range s.Names {
			if n.IsExported() {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return nil
		}
		s.Names, s.Doc, s.Comment = names, nil, nil
		if len(s.Values) != len(s.Names) {
			s.Values = nil
		}
		return s
	}
	return nil
}
