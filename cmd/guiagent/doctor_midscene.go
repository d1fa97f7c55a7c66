package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/midscene"
	"github.com/guiagent/guiagent/internal/platform"
)

// doctorScript takes the script doctor is asked about (`guiagent doctor
// SCRIPT.yaml`) out of args: the first argument that is not a flag and
// names a .yaml or .yml file.
func doctorScript(args []string) (rest []string, script string) {
	for i, a := range args {
		if a == "--" {
			return append(rest, args[i:]...), script
		}
		ext := strings.ToLower(filepath.Ext(a))
		if script == "" && !strings.HasPrefix(a, "-") && (ext == ".yaml" || ext == ".yml") {
			script = a
			continue
		}
		rest = append(rest, a)
	}
	return rest, script
}

// checkMidsceneScript reads a Midscene script as `guiagent run` would,
// says what it runs on or what guiagent cannot honour in it, and points c
// at the backend it needs, so that the rest of doctor checks that one.
func checkMidsceneScript(path string, c *config.Config, getenv func(string) string, cs *checks) {
	text, err := os.ReadFile(path)
	if err != nil {
		cs.add("FAIL", "script", err.Error(), "give the path of a Midscene script: guiagent doctor SCRIPT.yaml")
		return
	}
	if !midscene.Looks(text) {
		cs.add("info", "script", path+" is not a Midscene script (no tasks: with flow:)", "")
		return
	}
	var backends []string
	for _, b := range platform.Backends() {
		backends = append(backends, string(b))
	}
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
	plan, err := midscene.Parse(text, midscene.Options{Getenv: getenv, AllowJavaScript: true, Backends: backends, Name: name})
	if err != nil {
		cs.add("FAIL", "script", strings.ReplaceAll(err.Error(), "\n", "\n     "+strings.Repeat(" ", 17)), "change what the lines above name; docs/midscene.md lists what runs")
		return
	}
	if err := configureFor(plan, c); err != nil {
		cs.add("FAIL", "script", err.Error(), "leave --backend and "+config.Var("Backend")+" unset: the script chooses its platform")
		return
	}
	tasks, steps, js := 0, 0, false
	for _, st := range plan.Flow.Steps {
		if st.Kind == flow.Group {
			tasks++
		} else {
			steps++
		}
		js = js || st.Kind == flow.Evaluate
	}
	on := "this computer's desktop"
	if plan.Backend != "" {
		on = "the " + plan.Backend + " backend"
	}
	cs.add("ok", "script", fmt.Sprintf("Midscene script %q (%s:) runs on %s: %s, %s of guiagent's", plan.Name, plan.Section, on, count(tasks, "task"), count(steps, "step")), "")
	if js {
		cs.add("warn", "script", "its javascript items run only with guiagent run --allow-javascript", "pass --allow-javascript to guiagent run if you trust the script")
	}
}

// count is "1 task", "2 tasks".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// midsceneSetting is what replaces Midscene's environment variables here.
type midsceneSetting struct {
	names []string
	// instead says what to set; with show the variable's value is put
	// into it (%s): never for a key or an address.
	instead string
	show    bool
	// replaces names the GUI_AGENT_ variable that takes its place, when
	// one does: set, the row is information, not a warning.
	replaces string
	// ms: the value is milliseconds, shown as seconds.
	ms bool
}

// intents are Midscene's model roles, each with its own variables: the
// default model and the planning one are guiagent's model, insight
// (grounding and questions) its grounding model.
var intents = []string{"MIDSCENE_MODEL_", "MIDSCENE_PLANNING_MODEL_"}

func modelVars(suffix string) []string {
	var out []string
	for _, p := range intents {
		out = append(out, p+suffix)
	}
	return out
}

// midsceneSettings follows Midscene's own list (packages/shared/src/env/
// types.ts at the commit internal/midscene names).
var midsceneSettings = []midsceneSetting{
	{names: modelVars("NAME"), instead: config.Var("Model") + "=%s (and " + config.Var("Provider") + ")", show: true, replaces: config.Var("Model")},
	{names: modelVars("API_KEY"), instead: config.Var("APIKey") + ", or " + config.EnvPrefix + "<PROVIDER>_API_KEY (guiagent doctor names the one each model uses)", replaces: config.Var("APIKey")},
	{names: modelVars("BASE_URL"), instead: config.Var("BaseURL") + ", or " + config.EnvPrefix + "<PROVIDER>_BASE_URL", replaces: config.Var("BaseURL")},
	{names: append(modelVars("FAMILY"), "MIDSCENE_INSIGHT_MODEL_FAMILY"), instead: config.Var("Provider") + " and " + config.Var("Model") + ": guiagent knows a model's coordinates by its name (%s here; " + config.Var("ModelCoordinates") + " for one it does not know)", show: true},
	{names: []string{"MIDSCENE_USE_QWEN_VL", "MIDSCENE_USE_QWEN3_VL", "MIDSCENE_USE_VLM_UI_TARS", "MIDSCENE_USE_DOUBAO_VISION", "MIDSCENE_USE_GEMINI", "MIDSCENE_USE_VL_MODEL"},
		instead: config.Var("Provider") + " and " + config.Var("Model") + ": guiagent knows a model's coordinates by its name (" + config.Var("Adapter") + "=ui-tars for UI-TARS, " + config.Var("ModelCoordinates") + " for a model it does not know)"},
	{names: []string{"OPENAI_API_KEY"}, instead: "nothing while " + config.Var("Provider") + "=openai: it is that provider's key here too; " + config.Var("APIKey") + " for another provider", replaces: config.Var("APIKey")},
	{names: []string{"OPENAI_BASE_URL"}, instead: "nothing while " + config.Var("Provider") + "=openai: it is that provider's address here too; " + config.Var("BaseURL") + " for another provider", replaces: config.Var("BaseURL")},
	{names: []string{"MIDSCENE_INSIGHT_MODEL_NAME"}, instead: config.Var("GroundingModel") + "=%s: the model that turns a named target into a point (questions go to " + config.Var("Model") + ")", show: true, replaces: config.Var("GroundingModel")},
	{names: []string{"MIDSCENE_INSIGHT_MODEL_API_KEY"}, instead: config.Var("GroundingAPIKey"), replaces: config.Var("GroundingAPIKey")},
	{names: []string{"MIDSCENE_INSIGHT_MODEL_BASE_URL"}, instead: config.Var("GroundingBaseURL"), replaces: config.Var("GroundingBaseURL")},
	{names: append(modelVars("TIMEOUT"), "MIDSCENE_INSIGHT_MODEL_TIMEOUT"), instead: config.Var("ModelTimeout") + "=%s (seconds)", show: true, ms: true, replaces: config.Var("ModelTimeout")},
	{names: append(append(modelVars("HTTP_PROXY"), modelVars("SOCKS_PROXY")...), "MIDSCENE_INSIGHT_MODEL_HTTP_PROXY", "MIDSCENE_INSIGHT_MODEL_SOCKS_PROXY", "MIDSCENE_OPENAI_HTTP_PROXY", "MIDSCENE_OPENAI_SOCKS_PROXY"),
		instead: "HTTPS_PROXY (guiagent's model clients read it, http:// or socks5://)"},
	{names: []string{"MIDSCENE_CHROME_PATH", "MIDSCENE_MCP_CHROME_PATH"}, instead: config.Var("BrowserPath") + "=%s", show: true, replaces: config.Var("BrowserPath")},
	{names: []string{"MIDSCENE_ADB_REMOTE_HOST", "MIDSCENE_ADB_REMOTE_PORT"}, instead: config.Var("ADB") + "=HOST:PORT (or the script's remoteAdbHost and remoteAdbPort)", replaces: config.Var("ADB")},
	{names: []string{"MIDSCENE_ADB_PATH"}, instead: "nothing: guiagent speaks the adb server's protocol itself, and starts the adb on PATH when no server answers"},
	{names: []string{"MIDSCENE_RUN_DIR"}, instead: config.Var("RunsDir") + "=%s", show: true, replaces: config.Var("RunsDir")},
	{names: []string{"MIDSCENE_REPLANNING_CYCLE_LIMIT"}, instead: config.Var("MaxSteps") + "=%s (or the script's agent.replanningCycleLimit)", show: true, replaces: config.Var("MaxSteps")},
	{names: []string{"MIDSCENE_CACHE"}, instead: "nothing: guiagent run caches by default (--cache read-write, read-only, write-only or off; the script's agent.cache)"},
	{names: []string{"MIDSCENE_DEBUG_MODE", "MIDSCENE_DEBUG_MODEL_PROFILE", "MIDSCENE_DEBUG_MODEL_RESPONSE", "MIDSCENE_RECORD_MODEL_CALL"}, instead: config.Var("LogLevel") + "=debug; every run's record keeps its model calls", replaces: config.Var("LogLevel")},
}

// midsceneUnmatched are Midscene's other variables: nothing here takes
// their place.
var midsceneUnmatched = func() []string {
	var out []string
	for _, s := range []string{"INIT_CONFIG_JSON", "EXTRA_BODY_JSON", "TEMPERATURE", "RETRY_COUNT", "RETRY_INTERVAL",
		"REASONING_EFFORT", "REASONING_ENABLED", "REASONING_BUDGET", "RESPONSE_FORMAT"} {
		out = append(out, modelVars(s)...)
		out = append(out, "MIDSCENE_INSIGHT_MODEL_"+s)
	}
	return append(out, "MIDSCENE_OPENAI_INIT_CONFIG_JSON", "MIDSCENE_PREFERRED_LANGUAGE", "MIDSCENE_CACHE_MAX_FILENAME_LENGTH",
		"MIDSCENE_REPORT_TAG_NAME", "MIDSCENE_REPORT_QUIET", "MIDSCENE_LANGSMITH_DEBUG", "MIDSCENE_LANGFUSE_DEBUG",
		"MIDSCENE_ANDROID_IME_STRATEGY", "MIDSCENE_ANDROID_SCREENSHOT_STRATEGY", "MIDSCENE_IOS_DEVICE_UDID",
		"MIDSCENE_IOS_SIMULATOR_UDID", "MIDSCENE_IOS_DEVICE_CLASS_OVERRIDE", "MATCH_BY_POSITION")
}()

// checkMidsceneEnv says, for each of Midscene's variables set here, that
// guiagent does not read it and what takes its place (a key's or an
// address's value is never printed). With none set, and asked about a
// script, it says which settings choose the model.
func checkMidsceneEnv(getenv func(string) string, script bool, add func(level, name, detail, fix string)) {
	found := false
	for _, s := range midsceneSettings {
		for _, n := range s.names {
			v := getenv(n)
			if v == "" || (strings.HasPrefix(n, "OPENAI_") && !script) {
				continue
			}
			found = true
			instead := s.instead
			if strings.Contains(instead, "%s") {
				shown := "its value"
				if s.show {
					shown = v
					if s.ms {
						if msec, err := strconv.Atoi(v); err == nil {
							shown = strconv.Itoa(max(1, (msec+999)/1000))
						}
					}
				}
				instead = fmt.Sprintf(instead, shown)
			}
			if s.replaces != "" && getenv(s.replaces) != "" {
				add("info", "Midscene setting", fmt.Sprintf("%s is not read here; %s is set and used", n, s.replaces), "")
				continue
			}
			if strings.HasPrefix(n, "OPENAI_") {
				add("info", "Midscene setting", n+" is read here only for "+config.Var("Provider")+"=openai", "set "+instead)
				continue
			}
			add("warn", "Midscene setting", n+" is Midscene's and is not read here", "set "+instead)
		}
	}
	for _, n := range midsceneUnmatched {
		if getenv(n) != "" {
			found = true
			add("warn", "Midscene setting", n+" is Midscene's and is not read here; guiagent has no counterpart", "unset it, or leave it for Midscene")
		}
	}
	if !found && script {
		add("info", "Midscene setting", "none set: guiagent reads "+config.Var("Provider")+", "+config.Var("Model")+", "+config.Var("APIKey")+" and "+config.Var("BaseURL")+", never MIDSCENE_MODEL_*", "")
	}
}
