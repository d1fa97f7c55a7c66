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
