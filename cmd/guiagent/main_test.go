package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/testenv"
)

// runCmd runs guiagent in-process with only the given environment.
func runCmd(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code = run(args, getenv, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func baseEnv(t *testing.T) map[string]string {
	dir := t.TempDir()
	return map[string]string{"HOME": dir, "GUI_AGENT_RUNS_DIR": dir + "/runs"}
}

// TestDemoOffline is the README's first command: a private desktop, the sample
// app and the scripted model complete the form and leave a report.
func TestDemoOffline(t *testing.T) {
	testenv.NeedX(t)
	env := baseEnv(t)
	code, stdout, stderr := runCmd(t, env, "demo")
	if code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var res struct {
		Status string `json:"status"`
		Steps  int    `json:"steps"`
		Report string `json:"report"`
		Usage  struct {
			Calls int `json:"model_calls"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("demo stdout is not the JSON result: %v\n%s", err, stdout)
	}
	if res.Status != "completed" || res.Usage.Calls > 2 {
		t.Fatalf("demo result %+v", res)
	}
	var received struct {
		Fields map[string]string `json:"sample_app_received"`
	}
	if err := json.Unmarshal([]byte(stdout), &received); err != nil || received.Fields["name"] != "Ada Lovelace" || received.Fields["city"] != "London" {
		t.Fatalf("demo result lacks what the sample app received: %v\n%s", err, stdout)
	}
	if !strings.Contains(stderr, "scripted model") || !strings.Contains(stderr, `name="Ada Lovelace"`) {
		t.Fatalf("demo should say it is scripted and show what the app received:\n%s", stderr)
	}
	if _, err := os.Stat(res.Report); err != nil {
		t.Fatalf("report missing: %v", err)
	}
	code, stdout, _ = runCmd(t, env, "runs")
	if code != 0 || !strings.Contains(stdout, "completed") {
		t.Fatalf("runs: exit %d\n%s", code, stdout)
	}
}

func TestDoctorSaysWhatIsMissing(t *testing.T) {
	env := baseEnv(t)
	env["GUI_AGENT_PROVIDER"] = "anthropic"
	env["GUI_AGENT_MODEL"] = "claude-sonnet-5-5"
	env["GUI_AGENT_API_KEY"] = "sk-canary-doctor-0123456789"
	code, stdout, stderr := runCmd(t, env, "doctor") // no DISPLAY
	if code != 1 {
		t.Fatalf("doctor without a display should exit 1, got %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"FAIL display", "--virtual-display", "adapter anthropic-computer", "API key from GUI_AGENT_API_KEY",
		"ok   vision tools", "locating by claude-sonnet-5-5", "computer_toolset_20260801 (chosen by model), GA Messages API without a beta header"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout+stderr, "canary") {
		t.Fatalf("doctor printed the API key:\n%s", stdout)
	}

	testenv.NeedX(t) // the rest runs doctor on a private display
	code, stdout, _ = runCmd(t, env, "doctor", "--virtual-display", "800x600")
	if code != 0 || !strings.Contains(stdout, "ok   input") || !strings.Contains(stdout, "ok   capture") {
		t.Fatalf("doctor on a private display: exit %d\n%s", code, stdout)
	}
}

// TestDoctorNamesWhereEachKeyComesFrom: the configured model's key and
// every provider's (those guiagent eval --model may name) are shown by the
// variable they come from, never by value; a provider without one is named
// with the variables to set.
func TestDoctorNamesWhereEachKeyComesFrom(t *testing.T) {
	env := baseEnv(t)
	env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"] = "anthropic", "claude-sonnet-5-5"
	env["GUI_AGENT_ANTHROPIC_API_KEY"], env["OPENAI_API_KEY"] = "sk-canary-anthropic-0123456789", "sk-canary-openai-0123456789"
	_, stdout, stderr := runCmd(t, env, "doctor") // no display: the model rows come all the same
	for _, want := range []string{"model claude-sonnet-5-5", "API key from GUI_AGENT_ANTHROPIC_API_KEY", "provider keys",
		"anthropic: API key from GUI_AGENT_ANTHROPIC_API_KEY", "openai: API key from OPENAI_API_KEY", "no key for gemini",
		"gemini's key in one of GUI_AGENT_GEMINI_API_KEY, GOOGLE_API_KEY, GEMINI_API_KEY"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout+stderr, "canary") {
		t.Fatalf("doctor printed a key:\n%s", stdout)
	}
}

// TestDoctorWarnsAboutRetiredModels: the SDKs' deprecation markers reach
// doctor: claude-sonnet-4-5 (end of life 2026-11-30) and the shut-down
// computer-use-preview are named with their dates and replacements.
func TestDoctorWarnsAboutRetiredModels(t *testing.T) {
	for _, tc := range []struct {
		provider, model string
		want            []string
	}{
		{"anthropic", "claude-sonnet-4-5", []string{"warn model lifecycle", "2026-11-30", "claude-sonnet-5-5", "computer_20250124"}},
		{"openai", "computer-use-preview", []string{"warn model lifecycle", "shut down on 2026-07-23", "computer_use_preview tool were shut down", "gpt-5.5"}},
	} {
		env := baseEnv(t)
		env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"], env["GUI_AGENT_API_KEY"] = tc.provider, tc.model, "sk-test-0123456789"
		_, stdout, _ := runCmd(t, env, "doctor", "--virtual-display", "800x600")
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("doctor for %s lacks %q:\n%s", tc.model, w, stdout)
			}
		}
	}
	env := baseEnv(t)
	env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"], env["GUI_AGENT_API_KEY"] = "openai", "gpt-5.5", "sk-test-0123456789"
	if _, stdout, _ := runCmd(t, env, "doctor", "--virtual-display", "800x600"); strings.Contains(stdout, "model lifecycle") {
		t.Errorf("doctor warns about the current gpt-5.5:\n%s", stdout)
	}
}

func TestDoctorSaysWhyTheVisionToolsAreOff(t *testing.T) {
	_, stdout, _ := runCmd(t, baseEnv(t), "doctor", "--virtual-display", "800x600")
	for _, want := range []string{"warn vision tools", "gui_locate", "not offered", "GUI_AGENT_MODEL"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor without a model lacks %q:\n%s", want, stdout)
		}
	}
	env := baseEnv(t)
	env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"], env["GUI_AGENT_BASE_URL"] = "openai", "gpt-4.1", "http://127.0.0.1:9/v1"
	env["GUI_AGENT_GROUNDING_MODEL"] = "ui-tars-1.5-7b"
	_, stdout, _ = runCmd(t, env, "doctor", "--virtual-display", "800x600")
	if !strings.Contains(stdout, "query/assert by gpt-4.1, locating by ui-tars-1.5-7b") {
		t.Errorf("doctor does not say which model locates:\n%s", stdout)
	}
}

func TestBadConfigNamesTheVariable(t *testing.T) {
	env := baseEnv(t)
	env["GUI_AGENT_JPEG_QUALITY"] = "0"
	code, stdout, stderr := runCmd(t, env, "serve")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "GUI_AGENT_JPEG_QUALITY") || !strings.Contains(stderr, "1 to 100") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = runCmd(t, baseEnv(t), "frobnicate")
	if code != 2 || !strings.Contains(stderr, "unknown command") {
		t.Fatalf("unknown command: exit %d, %q", code, stderr)
	}
}

func TestBenchCapturePrintsMedians(t *testing.T) {
	testenv.NeedX(t)
	code, stdout, stderr := runCmd(t, baseEnv(t), "bench", "capture", "--size", "1280x720", "--max-long-edge", "640", "-n", "3")
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, stderr)
	}
	var rep map[string]float64
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("bench output is not one JSON object: %v\n%s", err, stdout)
	}
	for _, k := range []string{"capture_ms", "scale_ms", "encode_ms", "total_ms", "bytes"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("bench output lacks %s: %s", k, stdout)
		}
	}
	if rep["width"] != 640 || rep["height"] != 360 || rep["n"] != 3 || rep["bytes"] <= 0 {
		t.Fatalf("bench report %v", rep)
	}
}

// `guiagent runs` shortens a long task on a character boundary: a non-ASCII
// task is never cut inside a UTF-8 sequence.
func TestRunsListShortensOnCharacters(t *testing.T) {
	env := baseEnv(t)
	store := openStore(func(k string) string { return env[k] })
	task := "abcd" + strings.Repeat("Grüße ", 8) + "an das Wörterbuch übermitteln" // byte 57 is inside ß
	r, err := store.Begin("20260102-150405-abcdef", task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	store.Close()
	code, stdout, stderr := runCmd(t, env, "runs")
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, stderr)
	}
	if !utf8.ValidString(stdout) || !strings.Contains(stdout, "Grüße Grüße") || !strings.Contains(stdout, "...") {
		t.Fatalf("runs output is not valid UTF-8 or lost the shortened task:\n%q", stdout)
	}
}

// TestDoctorShowsWhereEachSettingCameFrom: flag, environment, settings file
// or default, per setting; the key only as set.
func TestDoctorShowsWhereEachSettingCameFrom(t *testing.T) {
	env := baseEnv(t)
	env["GUI_AGENT_MODEL"] = "gpt-4o"
	env["GUI_AGENT_MAX_STEPS"] = "20"
	env["GUI_AGENT_SETTINGS_FILE"] = filepath.Join(env["HOME"], "settings.json")
	if err := os.WriteFile(env["GUI_AGENT_SETTINGS_FILE"], []byte(`{"base_url":"http://127.0.0.1:9/v1","api_key":"sk-canary-doctor-file-0123"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stdout, stderr := runCmd(t, env, "doctor", "--provider", "openai", "--display", ":98")
	for _, want := range []string{
		"settings file    " + env["GUI_AGENT_SETTINGS_FILE"],
		"provider         openai (source: flag)",
		"model            gpt-4o (source: environment)",
		"base_url         http://127.0.0.1:9/v1 (source: settings file)",
		"api_key          set (source: settings file)",
		"GUI_AGENT_MAX_STEPS (environment)",
		"GUI_AGENT_RUNS_DIR (environment)",
		"--display (flag)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout+stderr, "canary") {
		t.Fatalf("doctor printed the API key:\n%s", stdout)
	}
}
