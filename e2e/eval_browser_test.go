package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/testenv"
)

// TestEvalTaskOnAWebPage: a suite task with url: runs in a private browser
// of its own with the task's display as its viewport: its flow types into
// the page's field and clicks its button through the page's accessibility
// tree (no model), the server receives the form, and the checks pass.
func TestEvalTaskOnAWebPage(t *testing.T) {
	testenv.NeedChromium(t)
	dir := t.TempDir()
	posted := filepath.Join(dir, "posted.txt")
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.Method == http.MethodPost {
			_ = r.ParseForm()
			_ = os.WriteFile(posted, []byte(r.PostForm.Get("name")), 0o600)
			fmt.Fprint(w, "<!doctype html><title>Done</title><h1>Thanks</h1>")
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Form</title><form method=post><label for=n>Name</label> <input id=n name=name> <button>Send</button></form>`)
	}))
	t.Cleanup(site.Close)
	flow := "name: web-form\nsteps:\n  - type: {target: the Name field, text: Ada Lovelace}\n  - click: the Send button\n"
	suite := fmt.Sprintf(`name: web
tasks:
  - name: web-form
    url: %s/
    display: 1024x700
    task: {flow: form.yaml}
    check:
      - command: grep -q "Ada Lovelace" %s
      - assert: the text "Thanks" is shown
`, site.URL, posted)
	for name, text := range map[string]string{"suite.yaml": suite, "form.yaml": flow} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runEval(t, dir, "suite.yaml", "--model", "fake:sample", "--out", "results")
	if code != 0 || !strings.Contains(stdout, "pass rate 100% (1/1)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
