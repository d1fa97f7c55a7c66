package mcpserver

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestToolSchemasGolden pins every tool as a client sees it (name, title,
// description, annotations, input schema): a change to the public interface
// shows in the diff of testdata/tools.golden.json. Run with -update to accept it.
func TestToolSchemasGolden(t *testing.T) {
	e := newEnv(t, nil, Options{Tasks: &scriptedRunner{}, Flows: &lateFlows{}, Vision: blindSeer{}})
	tools := listTools(t, e.cs)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tools); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/mcpserver -run Golden -update to create it)", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("tool schemas differ from %s; if the change is intended, run with -update and review the diff.\ngot:\n%s", path, firstDiff(want, b.Bytes()))
	}
}

// firstDiff shows the lines around the first difference.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + string(w) + "\n  got:  " + string(g)
		}
	}
	return "(no line differs)"
}

// TestToolSchemasArePortable: as a client receives them, every property of
// every tool's input schema (nested ones included) has exactly one `type`, a
// string, and no schema uses $ref or $defs, so clients that accept one type
// per property (Gemini and others) take every tool.
func TestToolSchemasArePortable(t *testing.T) {
	e := newEnv(t, nil, Options{Tasks: &scriptedRunner{}})
	tools := listTools(t, e.cs)
	if len(tools) < 10 {
		t.Fatalf("only %d tools listed", len(tools))
	}
	props := 0
	for _, tool := range tools {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var root map[string]any
		if err := json.Unmarshal(b, &root); err != nil {
			t.Fatal(err)
		}
		var check func(path string, s map[string]any)
		check = func(path string, s map[string]any) {
			for _, k := range []string{"$ref", "$defs", "definitions", "$dynamicRef", "anyOf", "oneOf"} {
				if _, ok := s[k]; ok {
					t.Errorf("%s: %s uses %s", tool.Name, path, k)
				}
			}
			if typ, ok := s["type"].(string); !ok || typ == "" || typ == "null" {
				t.Errorf("%s: %s has type %v, want one type name", tool.Name, path, s["type"])
			}
			ps, _ := s["properties"].(map[string]any)
			for name, p := range ps {
				props++
				ps, ok := p.(map[string]any)
				if !ok {
					t.Errorf("%s: %s.%s is not a schema object", tool.Name, path, name)
					continue
				}
				check(path+"."+name, ps)
			}
			if items, ok := s["items"].(map[string]any); ok {
				check(path+"[]", items)
			}
		}
		check("input", root)
	}
	if props < 30 {
		t.Errorf("checked only %d properties", props)
	}
}
