package flow

import (
	"strings"
	"testing"
)

// TestFlowStartPage: a flow's url: becomes a first step that opens the
// page, the other steps keep their order and are numbered after it, and an
// address a browser cannot open is refused with its line.
func TestFlowStartPage(t *testing.T) {
	f, err := Parse([]byte("name: web\nurl: http://127.0.0.1:8080/form\nsteps:\n  - click: the Send button\n  - assert: the page says Thanks\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Steps) != 3 || f.Steps[0].Kind != Navigate || f.Steps[0].Target != "http://127.0.0.1:8080/form" || f.URL != "http://127.0.0.1:8080/form" {
		t.Fatalf("steps %+v, want the navigation to the url first", f.Steps)
	}
	for i, st := range f.Steps {
		if st.Index != i+1 {
			t.Errorf("step %d is numbered %d", i+1, st.Index)
		}
	}
	if f.Steps[1].Kind != Click || f.Steps[2].Kind != Assert {
		t.Errorf("the flow's own steps moved: %+v", f.Steps[1:])
	}
	_, err = Parse([]byte("name: web\nurl: the login page\nsteps:\n  - click: OK\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "http://") {
		t.Errorf("a url that is no address: %v", err)
	}
}
