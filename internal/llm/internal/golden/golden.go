// Package golden compares recorded JSON bodies with golden files under a test
// package's testdata/ folder. It imports testing and is imported only by the
// adapters' tests.
package golden

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// JSON compares got, a JSON body, indented two spaces, with testdata/name, or
// writes it there when update is set (the test package's -update flag).
func JSON(t testing.TB, name string, got []byte, update bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("%s: not JSON: %v", name, err)
	}
	pretty, _ := json.MarshalIndent(v, "", "  ")
	pretty = append(pretty, '\n')
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(pretty, want) {
		t.Fatalf("%s differs from the golden file (run go test -update after checking):\n got: %s", name, pretty)
	}
}
