package config

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, rest, err := Load("serve", nil, env(map[string]string{"HOME": "/home/u", "DISPLAY": ":7"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 0 || c.JPEGQuality != 75 || c.MaxLongEdge != 1920 || c.MaxSteps != 50 || c.HTTPAddr != "127.0.0.1:60008" ||
		c.OnBusy != "queue" || !c.HumanOverride || !c.DebugImages || c.XDisplay != ":7" {
		t.Fatalf("unexpected defaults: %+v", c)
	}
	if c.RunsDir != "/home/u/.local/state/guiagent/runs" {
		t.Fatalf("runs dir %q", c.RunsDir)
	}
}

func TestAccessibility(t *testing.T) {
	c, _, err := Load("serve", nil, env(map[string]string{"HOME": "/home/u"}))
	if err != nil || c.Accessibility != "auto" || c.SessionBus != "" {
		t.Fatalf("default accessibility %q, session bus %q, %v: want auto and none", c.Accessibility, c.SessionBus, err)
	}
	c, _, err = Load("serve", nil, env(map[string]string{"GUI_AGENT_ACCESSIBILITY": "On",
		"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1/bus", "AT_SPI_BUS_ADDRESS": "unix:path=/tmp/a11y"}))
	if err != nil || c.Accessibility != "on" || c.SessionBus != "unix:path=/run/user/1/bus" || c.AccessibilityBus != "unix:path=/tmp/a11y" {
		t.Fatalf("accessibility %q, buses %q %q, %v", c.Accessibility, c.SessionBus, c.AccessibilityBus, err)
	}
}

func TestEnvAndFlags(t *testing.T) {
	c, rest, err := Load("serve", []string{"--http", "--addr", "127.0.0.1:9999", "--virtual-display", "1024x768", "extra"}, env(map[string]string{
		"GUI_AGENT_PROVIDER": "Anthropic", "GUI_AGENT_MODEL": "claude-sonnet-4-5", "GUI_AGENT_API_KEY": "sk-secret",
		"GUI_AGENT_JPEG_QUALITY": "60", "GUI_AGENT_STEP_DELAY_MS": "250", "GUI_AGENT_BLOCKED_HOTKEYS": "ctrl+q, super+d",
		"GUI_AGENT_SCREENSHOT_AFTER_ACTION": "yes", "GUI_AGENT_HTTP_ADDR": "127.0.0.1:1", "XDG_STATE_HOME": "/s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != "anthropic" || c.JPEGQuality != 60 || c.StepDelay != 250*time.Millisecond || !c.ScreenshotAfterAction ||
		!c.HTTP || c.HTTPAddr != "127.0.0.1:9999" || c.VirtualDisplay != (geom.Size{W: 1024, H: 768}) ||
		len(c.BlockedHotkeys) != 2 || c.BlockedHotkeys[1] != "super+d" || c.RunsDir != "/s/guiagent/runs" {
		t.Fatalf("unexpected config: %+v", c)
	}
	if len(rest) != 1 || rest[0] != "extra" {
		t.Fatalf("rest %v", rest)
	}
}

func TestBadValuesNameTheVariable(t *testing.T) {
	cases := []struct{ name, val, want string }{
		{"GUI_AGENT_JPEG_QUALITY", "101", `GUI_AGENT_JPEG_QUALITY="101": want a whole number from 1 to 100`},
		{"GUI_AGENT_MAX_STEPS", "0", `GUI_AGENT_MAX_STEPS="0": want a whole number from 1 to 500`},
		{"GUI_AGENT_PROVIDER", "bogus", "want one of anthropic, gemini, openai"},
		{"GUI_AGENT_COORDINATE_MODE", "bogus", "unknown coordinate mode"},
		{"GUI_AGENT_ON_BUSY", "bogus", `GUI_AGENT_ON_BUSY="bogus": want one of queue, preempt, reject`},
		{"GUI_AGENT_VIRTUAL_DISPLAY", "big", "WIDTHxHEIGHT"},
		{"GUI_AGENT_HUMAN_OVERRIDE", "maybe", "want true or false"},
		{"GUI_AGENT_BASE_URL", "api.example", "want an http:// or https:// URL"},
		{"GUI_AGENT_ACCESSIBILITY", "yes", `GUI_AGENT_ACCESSIBILITY="yes": want one of auto, on, off`},
	}
	for _, tc := range cases {
		_, _, err := Load("serve", nil, env(map[string]string{tc.name: tc.val}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: error %v, want it to contain %q", tc.name, tc.val, err, tc.want)
		}
	}
}

func TestRemoteNeedsToken(t *testing.T) {
	_, _, err := Load("serve", []string{"--addr", "0.0.0.0:60008"}, env(nil))
	if err == nil || !strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("non-loopback without --allow-remote: %v", err)
	}
	_, _, err = Load("serve", []string{"--addr", "0.0.0.0:60008", "--allow-remote"}, env(nil))
	if err == nil || !strings.Contains(err.Error(), "GUI_AGENT_HTTP_TOKEN") {
		t.Fatalf("--allow-remote without token: %v", err)
	}
	_, _, err = Load("serve", []string{"--addr", "0.0.0.0:60008", "--allow-remote"}, env(map[string]string{"GUI_AGENT_HTTP_TOKEN": strings.Repeat("t", 32)}))
	if err != nil {
		t.Fatal(err)
	}
}

func TestRedactedHidesSecrets(t *testing.T) {
	c, _, err := Load("serve", nil, env(map[string]string{"GUI_AGENT_PROVIDER": "openai", "GUI_AGENT_MODEL": "gpt-4o", "GUI_AGENT_API_KEY": "sk-canary-123", "GUI_AGENT_HTTP_TOKEN": "tok-canary-4567890123"}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c.Redacted())
	if strings.Contains(string(b), "canary") {
		t.Fatalf("redacted config leaks a secret: %s", b)
	}
	if got := c.LogValue().String(); strings.Contains(got, "canary") {
		t.Fatalf("log value leaks: %s", got)
	}
	if len(c.Secrets()) != 2 {
		t.Fatalf("secrets %v", c.Secrets())
	}
}

func TestVNCAddressAndProviderCase(t *testing.T) {
	for in, want := range map[string]string{"10.0.0.5": "10.0.0.5:5900", "vm.local:5901": "vm.local:5901", "::1": "[::1]:5900", "[::1]:5902": "[::1]:5902"} {
		c, _, err := Load("serve", []string{"--vnc", in}, env(map[string]string{"GUI_AGENT_MEMORY_PROVIDER": "OpenAI"}))
		if err != nil {
			t.Fatalf("--vnc %s: %v", in, err)
		}
		if c.VNC != want || c.MemoryProvider != "openai" {
			t.Errorf("--vnc %s gave %q (want %q), memory provider %q", in, c.VNC, want, c.MemoryProvider)
		}
	}
	if _, _, err := Load("serve", []string{"--vnc", "host:port:x y"}, env(nil)); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_VNC") {
		t.Fatalf("bad --vnc: %v", err)
	}
}

func TestGroundingModelEndpoint(t *testing.T) {
	base := map[string]string{"GUI_AGENT_PROVIDER": "anthropic", "GUI_AGENT_MODEL": "claude-sonnet-4-5", "GUI_AGENT_GROUNDING_MODEL": "ui-tars-1.5-7b"}
	if _, _, err := Load("serve", nil, env(base)); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_GROUNDING_BASE_URL") {
		t.Fatalf("anthropic with a grounding model and no endpoint: %v", err)
	}
	base["GUI_AGENT_GROUNDING_BASE_URL"] = "http://127.0.0.1:8000/v1"
	base["GUI_AGENT_GROUNDING_API_KEY"] = "gk-canary-123456"
	c, _, err := Load("serve", nil, env(base))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(c.Redacted()); strings.Contains(string(b), "canary") {
		t.Fatalf("redacted config shows the grounding key: %s", b)
	}
	base["GUI_AGENT_GROUNDING_BASE_URL"] = "localhost:8000"
	if _, _, err := Load("serve", nil, env(base)); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_GROUNDING_BASE_URL") {
		t.Fatalf("bad grounding URL: %v", err)
	}
}

func TestMemoryProviderNeedsItsOwnKey(t *testing.T) {
	base := map[string]string{"GUI_AGENT_PROVIDER": "openai", "GUI_AGENT_MODEL": "gpt-4o", "GUI_AGENT_API_KEY": "sk-x",
		"GUI_AGENT_MEMORY_PROVIDER": "anthropic", "GUI_AGENT_MEMORY_MODEL": "claude-haiku-4-5"}
	if _, _, err := Load("serve", nil, env(base)); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_MEMORY_API_KEY") {
		t.Fatalf("a second provider without its key: %v", err)
	}
	base["GUI_AGENT_MEMORY_API_KEY"] = "sk-ant-canary-0123456789"
	c, _, err := Load("serve", nil, env(base))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(c.Redacted()); strings.Contains(string(b), "canary") {
		t.Fatalf("redacted config shows the memory key: %s", b)
	}
}

// TestRunsDirAndXDisplayComeFromTheEnvironmentHere: the runs and report
// commands find records where serve writes them, and --display defaults to
// $DISPLAY, all read in this package only.
func TestRunsDirAndXDisplayComeFromTheEnvironmentHere(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": "/state", "DISPLAY": ":7"}
	getenv := func(k string) string { return env[k] }
	if got := RunsDir(getenv); got != "/state/guiagent/runs" {
		t.Errorf("RunsDir without GUI_AGENT_RUNS_DIR = %q, want /state/guiagent/runs", got)
	}
	env["GUI_AGENT_RUNS_DIR"] = "/records"
	if got := RunsDir(getenv); got != "/records" {
		t.Errorf("RunsDir = %q, want GUI_AGENT_RUNS_DIR's /records", got)
	}
	c, _, err := Load("serve", nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.RunsDir != RunsDir(getenv) || c.XDisplay != ":7" || XDisplay(getenv) != ":7" {
		t.Errorf("Load: runs dir %q display %q; RunsDir %q", c.RunsDir, c.XDisplay, RunsDir(getenv))
	}
}

func TestRunRetentionKnobs(t *testing.T) {
	c, _, err := Load("serve", nil, env(map[string]string{"HOME": "/h"}))
	if err != nil || c.RunsKeep != 200 || c.RunsMaxMB != 2048 {
		t.Fatalf("defaults: keep %d, max %d MB, %v", c.RunsKeep, c.RunsMaxMB, err)
	}
	c, _, err = Load("serve", nil, env(map[string]string{"HOME": "/h", "GUI_AGENT_RUNS_KEEP": "10", "GUI_AGENT_RUNS_MAX_MB": "50"}))
	if err != nil || c.RunsKeep != 10 || c.RunsMaxMB != 50 {
		t.Fatalf("set: keep %d, max %d MB, %v", c.RunsKeep, c.RunsMaxMB, err)
	}
	for k, v := range map[string]string{"GUI_AGENT_RUNS_KEEP": "0", "GUI_AGENT_RUNS_MAX_MB": "lots"} {
		if _, _, err := Load("serve", nil, env(map[string]string{"HOME": "/h", k: v})); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: error %v does not name the variable", k, v, err)
		}
	}
}

func TestHalfConfiguredModelNamesTheMissingVariable(t *testing.T) {
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"GUI_AGENT_PROVIDER": "openai"}, nil, "GUI_AGENT_PROVIDER=openai is set but GUI_AGENT_MODEL (--model) is not"},
		{map[string]string{"GUI_AGENT_MODEL": "gpt-4o"}, nil, "GUI_AGENT_MODEL=gpt-4o is set but GUI_AGENT_PROVIDER (--provider) is not"},
		{nil, []string{"--model", "gpt-4o"}, "GUI_AGENT_PROVIDER (--provider) is not"},
		{map[string]string{"GUI_AGENT_API_KEY": "sk-x"}, nil, "GUI_AGENT_PROVIDER and GUI_AGENT_MODEL are not"},
	}
	for _, tc := range cases {
		_, _, err := Load("serve", tc.args, env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: got %v, want it to contain %q", tc.env, tc.args, err, tc.want)
		}
	}
	if _, _, err := Load("serve", []string{"--provider", "openai", "--model", "gpt-4o"}, env(nil)); err != nil {
		t.Fatalf("a provider and a model are a whole configuration: %v", err)
	}
}

func TestToolSelection(t *testing.T) {
	c, _, err := Load("serve", []string{"--tools", " gui_click, observe ,"}, env(map[string]string{"GUI_AGENT_TOOLS": "input"}))
	if err != nil || strings.Join(c.Tools, "|") != "gui_click|observe" {
		t.Fatalf("--tools should replace GUI_AGENT_TOOLS: %q, %v", c.Tools, err)
	}
	c, _, err = Load("serve", nil, env(map[string]string{"GUI_AGENT_TOOLS": "input,clipboard"}))
	if err != nil || strings.Join(c.Tools, "|") != "input|clipboard" {
		t.Fatalf("GUI_AGENT_TOOLS: %q, %v", c.Tools, err)
	}
	c, _, err = Load("serve", []string{"--read-only"}, env(nil))
	if err != nil || !c.ReadOnly || len(c.Tools) != 0 {
		t.Fatalf("--read-only: %q, %v", c.Tools, err)
	}
	_, _, err = Load("serve", []string{"--read-only", "--tools", "input"}, env(nil))
	if err == nil || !strings.Contains(err.Error(), "--read-only") || !strings.Contains(err.Error(), "keep one") {
		t.Fatalf("--read-only with --tools input: %v", err)
	}
	_, _, err = Load("serve", []string{"--tools", ","}, env(nil))
	if err == nil || !strings.Contains(err.Error(), "names no tool") {
		t.Fatalf("--tools ',': %v", err)
	}
}

func TestFlowCacheDir(t *testing.T) {
	c, _, err := Load("run", nil, env(map[string]string{"GUI_AGENT_RUNS_DIR": "/st/runs"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.CacheDir != "" || c.FlowCacheDir() != filepath.Join("/st", "flow-cache") {
		t.Errorf("default: CacheDir %q, FlowCacheDir %q", c.CacheDir, c.FlowCacheDir())
	}
	c, _, err = Load("run", nil, env(map[string]string{"GUI_AGENT_CACHE_DIR": "/c"}))
	if err != nil || c.CacheDir != "/c" || c.FlowCacheDir() != "/c" {
		t.Errorf("GUI_AGENT_CACHE_DIR=/c: CacheDir %q, FlowCacheDir %q, %v", c.CacheDir, c.FlowCacheDir(), err)
	}
}

// TestAskKnobs: how long a run waits for a person's answer, and which combos
// need a person's yes, come from the environment with clear errors.
func TestAskKnobs(t *testing.T) {
	c, _, err := Load("serve", nil, env(map[string]string{"HOME": "/h"}))
	if err != nil || c.AskTimeout != 300*time.Second || len(c.ConfirmHotkeys) != 0 {
		t.Fatalf("defaults: ask timeout %v, confirm %q, %v", c.AskTimeout, c.ConfirmHotkeys, err)
	}
	c, _, err = Load("serve", nil, env(map[string]string{"HOME": "/h", "GUI_AGENT_ASK_TIMEOUT_S": "45",
		"GUI_AGENT_CONFIRM_HOTKEYS": " ctrl+w, ctrl+shift+delete ,"}))
	if err != nil || c.AskTimeout != 45*time.Second || strings.Join(c.ConfirmHotkeys, "|") != "ctrl+w|ctrl+shift+delete" {
		t.Fatalf("set: ask timeout %v, confirm %q, %v", c.AskTimeout, c.ConfirmHotkeys, err)
	}
	if c.Sources.Of("ASK_TIMEOUT_S") != SourceEnv || c.Sources.Of("CONFIRM_HOTKEYS") != SourceEnv {
		t.Errorf("sources %v: want both from the environment", c.Sources)
	}
	for _, v := range []string{"0", "86401", "5m", "-3"} {
		_, _, err := Load("serve", nil, env(map[string]string{"HOME": "/h", "GUI_AGENT_ASK_TIMEOUT_S": v}))
		want := `GUI_AGENT_ASK_TIMEOUT_S="` + v + `": want a whole number from 1 to 86400`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("GUI_AGENT_ASK_TIMEOUT_S=%s: error %v, want it to contain %q", v, err, want)
		}
	}
}

func TestOCRLangs(t *testing.T) {
	c, _, err := Load("serve", nil, env(nil))
	if err != nil || !slices.Equal(c.OCRLangs, []string{"eng"}) {
		t.Errorf("default OCR languages %v, %v; want eng", c.OCRLangs, err)
	}
	c, _, err = Load("serve", nil, env(map[string]string{"GUI_AGENT_OCR_LANGS": "eng+jpn, chi_sim,eng"}))
	if err != nil || !slices.Equal(c.OCRLangs, []string{"eng", "jpn", "chi_sim"}) {
		t.Errorf("GUI_AGENT_OCR_LANGS=eng+jpn, chi_sim,eng: %v, %v", c.OCRLangs, err)
	}
	c, _, err = Load("serve", nil, env(map[string]string{"GUI_AGENT_OCR_TESSERACT": "/opt/tesseract/bin/tesseract"}))
	if err != nil || c.OCRTesseract != "/opt/tesseract/bin/tesseract" {
		t.Errorf("GUI_AGENT_OCR_TESSERACT: %q, %v", c.OCRTesseract, err)
	}
	for _, bad := range []string{"eng;rm -rf", "+ ,"} {
		_, _, err = Load("serve", nil, env(map[string]string{"GUI_AGENT_OCR_LANGS": bad}))
		if err == nil || !strings.Contains(err.Error(), "GUI_AGENT_OCR_LANGS") {
			t.Errorf("GUI_AGENT_OCR_LANGS=%q: %v, want an error naming the variable", bad, err)
		}
	}
}
