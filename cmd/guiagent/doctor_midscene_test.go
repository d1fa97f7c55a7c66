package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/testenv"
)

// TestDoctorOnAMidsceneScript: `guiagent doctor SCRIPT.yaml` says that the
// Midscene script runs, on the platform it names (and checks that one: the
// browser here), and, for each of Midscene's variables set, that guiagent
// does not read it and which GUI_AGENT_ setting replaces it, without ever
// printing a key or an address; a script guiagent cannot run fails with
// its lines named.
func TestDoctorOnAMidsceneScript(t *testing.T) {
	testenv.NeedChromium(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "shop.yaml")
	os.WriteFile(script, []byte("web:\n  url: http://127.0.0.1:9/\ntasks:\n  - name: buy\n    flow:\n      - aiTap: the Buy button\n      - aiAssert: the cart has one item\n"), 0o600)
	env := baseEnv(t)
	for k, v := range map[string]string{
		"MIDSCENE_MODEL_NAME": "qwen3-vl-plus", "MIDSCENE_MODEL_API_KEY": "sk-midscene-canary-7781",
		"MIDSCENE_MODEL_BASE_URL": "https://dashscope.internal.example/v1", "MIDSCENE_MODEL_FAMILY": "qwen3-vl",
		"MIDSCENE_MODEL_TIMEOUT": "90000", "MIDSCENE_MODEL_TEMPERATURE": "0.2",
	} {
		env[k] = v
	}
	_, out, _ := runCmd(t, env, "doctor", script)
	for _, want := range []string{
		`ok   script           Midscene script "shop" (web:) runs on the browser backend: 1 task, 3 steps of guiagent's`,
		"ok   browser",
		"MIDSCENE_MODEL_NAME is Midscene's and is not read here", "fix: set GUI_AGENT_MODEL=qwen3-vl-plus",
		"MIDSCENE_MODEL_API_KEY is Midscene's and is not read here", "fix: set GUI_AGENT_API_KEY",
		"MIDSCENE_MODEL_BASE_URL is Midscene's", "fix: set GUI_AGENT_BASE_URL",
		"MIDSCENE_MODEL_FAMILY is Midscene's", "(qwen3-vl here",
		"fix: set GUI_AGENT_MODEL_TIMEOUT_S=90 (seconds)",
		"MIDSCENE_MODEL_TEMPERATURE is Midscene's and is not read here; guiagent has no counterpart",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor on a Midscene script does not say %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{"sk-midscene-canary-7781", "dashscope.internal.example"} {
		if strings.Contains(out, secret) {
			t.Errorf("doctor printed %q:\n%s", secret, out)
		}
	}

	// With guiagent's own model set, Midscene's name is information only.
	env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"], env["GUI_AGENT_API_KEY"] = "openai", "gpt-4.1", "sk-guiagent-canary-5512"
	_, out, _ = runCmd(t, env, "doctor", script)
	if !strings.Contains(out, "info Midscene setting MIDSCENE_MODEL_NAME is not read here; GUI_AGENT_MODEL is set and used") || strings.Contains(out, "sk-guiagent-canary-5512") {
		t.Errorf("with GUI_AGENT_MODEL set:\n%s", out)
	}

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("web:\n  url: http://127.0.0.1:9/\ntasks:\n  - name: buy\n    flow:\n      - aiTap: the Buy button\n        xpath: //button\n"), 0o600)
	code, out, _ := runCmd(t, baseEnv(t), "doctor", bad)
	if code != 1 || !strings.Contains(out, "FAIL script") || !strings.Contains(out, "line 7, column 9: aiTap: xpath") {
		t.Errorf("doctor on a script with an xpath: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "Midscene setting none set: guiagent reads GUI_AGENT_PROVIDER, GUI_AGENT_MODEL") {
		t.Errorf("doctor on a script with no Midscene variables set does not say what chooses the model:\n%s", out)
	}
}
