package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// TestRunFlowWithTheConfiguredModel: `guiagent run` with a model configured
// the way a user does (provider, model, base URL) locates through the plain
// vision API of that model (fakellm's colour brain behind Chat Completions).
func TestRunFlowWithTheConfiguredModel(t *testing.T) {
	vd := xvfbtest.Start(t, 1280, 800)
	model := fakellm.NewChatServer(fakellm.VisionBrain(fakellm.SampleAppWidgets), fakellm.ChatOptions{})
	defer model.Close()
	path := filepath.Join(t.TempDir(), "form.yaml")
	os.WriteFile(path, []byte(`name: fill the form
steps:
  - type: {target: the Name field, text: Ada}
  - click: the Submit button
  - wait_for: {condition: the form was submitted, timeout_s: 10}
`), 0o600)
	env := baseEnv(t)
	env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"], env["GUI_AGENT_BASE_URL"] = "openai", "gpt-4.1", model.URL
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	app, err := sampleapp.Start(ctx, sampleapp.Options{Display: vd.Display})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	code, stdout, stderr := runCmd(t, env, "run", path, "--display", vd.Display)
	t.Logf("%d model calls; output:\n%s", model.Calls(), stdout)
	if code != 0 || !strings.Contains(stdout, "passed") {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	submitted := false
	for _, ev := range app.History() {
		submitted = submitted || (ev.Event == "submit" && ev.Fields["name"] == "Ada")
	}
	if !submitted {
		t.Fatalf("the app got no submit of Ada: %+v", app.History())
	}
	if n := model.Calls(); n < 3 {
		t.Fatalf("the configured model was asked %d times, want at least 3 (two locates and the wait)", n)
	}
}
