// Package actiontest holds test helpers for code that produces actions.
package actiontest

import (
	"encoding/json"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

// Same reports whether got are want parsed as a model's answer in space sp
// (compared as JSON), logging both when they differ.
func Same(t testing.TB, got []action.Action, want []action.Raw, sp geom.Space) bool {
	t.Helper()
	w, err := action.ParseModelAll(want, sp)
	if err != nil {
		t.Fatalf("want does not parse: %v", err)
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(w)
	if string(a) != string(b) {
		t.Logf("actions %s\nwant    %s", a, b)
		return false
	}
	return true
}
