package config

import (
	"flag"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md's table from Knobs")

// notKnobs are the Config fields no knob sets, and why.
var notKnobs = map[string]string{
	"XAuthority":       "the session's X authority file ($XAUTHORITY, else ~/.Xauthority), read by FillSessionDefaults",
	"Sources":          "bookkeeping: which layer set each knob",
	"Credentials":      "each provider's own key and endpoint, variables derived from the llm registry's provider names (credentials.go)",
	"modelsGiven":      "LoadWithModels: the command names its models itself",
	"replaced":         "keys WithModel replaced, still among Secrets",
	"Session":          "the desktop session's variables (XDG_SESSION_TYPE, WAYLAND_DISPLAY, XDG_CURRENT_DESKTOP, XDG_RUNTIME_DIR), read by FillSessionDefaults",
	"SessionBus":       "the session's D-Bus ($DBUS_SESSION_BUS_ADDRESS), read by FillSessionDefaults",
	"AccessibilityBus": "the session's accessibility bus ($AT_SPI_BUS_ADDRESS), read by FillSessionDefaults",
}

// TestEveryConfigFieldIsAKnob fails when a Config field is added without a
// knob (or a reason in notKnobs), and when a knob names no field or a field
// of a type its kind cannot set, so that nothing is loaded, validated or
// documented by hand.
func TestEveryConfigFieldIsAKnob(t *testing.T) {
	kindTypes := map[Kind]reflect.Type{
		KindText: reflect.TypeOf(""), KindChoice: reflect.TypeOf(""), KindURL: reflect.TypeOf(""),
		KindInt: reflect.TypeOf(0), KindDuration: reflect.TypeOf(time.Duration(0)), KindBool: reflect.TypeOf(false),
		KindList: reflect.TypeOf([]string{}), KindSize: reflect.TypeOf(geom.Size{}),
	}
	ct := reflect.TypeOf(Config{})
	seen := map[string]bool{}
	envs, flags := map[string]bool{}, map[string]bool{}
	for _, k := range Knobs {
		f, ok := ct.FieldByName(k.Name)
		switch {
		case !ok:
			t.Errorf("knob %s names no Config field", k.Name)
			continue
		case f.Type != kindTypes[k.Kind]:
			t.Errorf("knob %s: field type %s does not suit its kind (want %s)", k.Name, f.Type, kindTypes[k.Kind])
		case seen[k.Name]:
			t.Errorf("knob %s is declared twice", k.Name)
		case k.Env == "" && k.Flag == "":
			t.Errorf("knob %s has neither a variable nor a flag", k.Name)
		case k.Env != "" && !strings.HasPrefix(k.Env, EnvPrefix):
			t.Errorf("knob %s: variable %s does not begin with %s", k.Name, k.Env, EnvPrefix)
		case k.Doc == "":
			t.Errorf("knob %s has no doc", k.Name)
		case (k.Kind == KindChoice) != (k.Choices != nil):
			t.Errorf("knob %s: Choices belong to KindChoice knobs", k.Name)
		case k.Kind == KindDuration && k.Unit == 0:
			t.Errorf("knob %s: a duration needs its unit", k.Name)
		case (k.Kind == KindInt || k.Kind == KindDuration) && k.Min > k.Max:
			t.Errorf("knob %s: range %d-%d is empty", k.Name, k.Min, k.Max)
		case k.Secret && k.Kind != KindText:
			t.Errorf("knob %s: a secret is text", k.Name)
		}
		if envs[k.Env] && k.Env != "" || flags[k.Flag] && k.Flag != "" {
			t.Errorf("knob %s: variable %q or flag %q is another knob's", k.Name, k.Env, k.Flag)
		}
		seen[k.Name], envs[k.Env], flags[k.Flag] = true, true, true
	}
	for i := 0; i < ct.NumField(); i++ {
		name := ct.Field(i).Name
		if !seen[name] && notKnobs[name] == "" {
			t.Errorf("Config.%s has no knob: add it to Knobs (variable, flag, kind, default, doc), or to notKnobs with the reason", name)
		}
		if seen[name] && notKnobs[name] != "" {
			t.Errorf("Config.%s is a knob and in notKnobs", name)
		}
	}
}

// TestKnobDefaults: Default gives every knob its documented default, those
// of the packages that own them included, and every default is valid.
func TestKnobDefaults(t *testing.T) {
	c := Default()
	want := map[string]any{
		"ModelTimeout": llm.DefaultTimeout, "JPEGQuality": imaging.DefaultQuality, "MaxLongEdge": imaging.DefaultMaxLongEdge,
		"MaxImageBytes": imaging.DefaultMaxBytes, "KeepImages": llm.DefaultKeepImages, "MaxSteps": 50,
		"TaskTimeout": 600 * time.Second, "AskTimeout": 300 * time.Second, "OnBusy": "queue", "HumanOverride": true,
		"HTTPAddr": "127.0.0.1:60008", "DebugImages": true, "RunsKeep": 200, "RunsMaxMB": 2048, "LogLevel": "info",
		"LogFormat": "text", "ImageFormat": "jpeg", "MaxDesktops": numCPU(), "SessionKeepAlive": 10 * time.Second,
		"HTTP": false, "StepDelay": time.Duration(0), "Provider": "",
	}
	for name, w := range want {
		k, _ := KnobNamed(name)
		if got := k.field(&c).Interface(); !reflect.DeepEqual(got, w) {
			t.Errorf("default %s = %v, want %v", name, got, w)
		}
	}
	for _, k := range Knobs {
		if err := k.validate(&c); err != nil {
			t.Errorf("the default of %s is refused: %v", k.Name, err)
		}
	}
}

// TestEveryKnobLoadsAndRefuses sets each knob's variable to a good value
// and finds it in the Config with its source, then to a bad one (for kinds
// that refuse some text) and gets an error naming the variable.
func TestEveryKnobLoadsAndRefuses(t *testing.T) {
	good := map[Kind]string{KindText: "x", KindInt: "", KindDuration: "", KindBool: "on", KindList: "a, b",
		KindSize: "800x600", KindChoice: "", KindURL: "https://example.test/v1"}
	bad := map[Kind]string{KindInt: "lots", KindDuration: "-1", KindBool: "maybe", KindSize: "big", KindChoice: "bogus", KindURL: "example.test"}
	texts := map[string]string{"CoordinateMode": "normalized-1000", "ModelCoordinates": "normalized-0-1", "VNC": "10.0.0.5:5901",
		"HTTPAddr": "127.0.0.1:1", "HTTPToken": strings.Repeat("t", 20), "Model": "m", "SessionCommand": "",
		"DisableActions": "zoom, drag", "OCRLangs": "eng+jpn"}
	for _, k := range Knobs {
		if k.Env == "" {
			continue
		}
		v := good[k.Kind]
		switch {
		case texts[k.Name] != "":
			v = texts[k.Name]
		case k.Kind == KindInt || k.Kind == KindDuration:
			v = itoa(k.Max)
		case k.Kind == KindChoice:
			v = k.Choices()[len(k.Choices())-1]
		}
		if k.Name == "SessionCommand" || k.Name == "DesktopPerSession" || k.Name == "Tools" {
			continue // they need other knobs (TestDesktopPerSession, TestToolSelection)
		}
		e := map[string]string{k.Env: v, "GUI_AGENT_PROVIDER": "openai", "GUI_AGENT_MODEL": "m"}
		if k.Name == "Provider" || k.Name == "Model" {
			e[k.Env] = map[string]string{"Provider": "gemini", "Model": "m"}[k.Name]
		}
		if k.Name == "AllowRemote" {
			e["GUI_AGENT_HTTP_TOKEN"] = strings.Repeat("t", 20)
		}
		if k.Name == "MemoryProvider" {
			e["GUI_AGENT_MEMORY_API_KEY"] = "k"
		}
		c, _, err := Load("serve", nil, env(e))
		if err != nil {
			t.Errorf("%s=%s: %v", k.Env, e[k.Env], err)
			continue
		}
		if got := k.format(&c); got == k.format(&Config{}) && k.Kind != KindBool || c.Sources.Of(k.key()) != SourceEnv {
			t.Errorf("%s=%s: Config.%s = %q (source %s)", k.Env, e[k.Env], k.Name, got, c.Sources.Of(k.key()))
		}
		if b, ok := bad[k.Kind]; ok {
			_, _, err := Load("serve", nil, env(map[string]string{k.Env: b}))
			if err == nil || !strings.Contains(err.Error(), k.Env) {
				t.Errorf("%s=%s: error %v, want one naming the variable", k.Env, b, err)
			}
		}
	}
}

// TestGoValuesAreHeldToTheKnobRanges: a value set in Go (as guiagent.New
// passes Options) is validated like the variable would be.
func TestGoValuesAreHeldToTheKnobRanges(t *testing.T) {
	for name, set := range map[string]func(*Config){
		"GUI_AGENT_JPEG_QUALITY=101":     func(c *Config) { c.JPEGQuality = 101 },
		"GUI_AGENT_TASK_TIMEOUT_S=0.5":   func(c *Config) { c.TaskTimeout = 500 * time.Millisecond },
		"--max-desktops/GUI_AGENT_MAX_D": func(c *Config) { c.MaxDesktops = 5000 },
		"GUI_AGENT_VIRTUAL_DISPLAY":      func(c *Config) { c.VirtualDisplay = geom.Size{W: 10, H: 10} },
		`GUI_AGENT_IMAGE_FORMAT="gif"`:   func(c *Config) { c.ImageFormat = "gif" },
	} {
		c := Default()
		c.RunsDir = "/r"
		set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("want an error containing %q, got %v", name, err)
		}
	}
}

// TestVarNamesKnobs: Var gives a knob's variable and panics on a name that
// is not one (TestNoHardCodedVariableNames at the module root checks every
// call's name).
func TestVarNamesKnobs(t *testing.T) {
	if Var("APIKey") != "GUI_AGENT_API_KEY" || Var("MemoryAPIKey") != "GUI_AGENT_MEMORY_API_KEY" {
		t.Fatalf("Var: %s, %s", Var("APIKey"), Var("MemoryAPIKey"))
	}
	for _, name := range []string{"NoSuchKnob", "HTTP"} { // HTTP is a flag without a variable
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Var(%q) did not panic", name)
				}
			}()
			Var(name)
		}()
	}
}

// TestDocsNameOnlyKnobs: a variable a knob's doc mentions is a knob's.
func TestDocsNameOnlyKnobs(t *testing.T) {
	envs := map[string]bool{}
	for _, k := range Knobs {
		envs[k.Env] = true
	}
	re := regexp.MustCompile(EnvPrefix + `[A-Z0-9_]+`)
	for _, k := range Knobs {
		for _, v := range re.FindAllString(k.Doc+k.Shown, -1) {
			if !envs[v] {
				t.Errorf("knob %s's doc names %s, which no knob has", k.Name, v)
			}
		}
	}
}

// TestSettingsAreTextKnobs: every run-time setting is a text knob with a
// variable, and Get and Set reach that knob's field.
func TestSettingsAreTextKnobs(t *testing.T) {
	for _, s := range Settings {
		k := s.knob
		if k.Env == "" || k.field(&Config{}).Kind() != reflect.String || s.Var() != k.Env || s.Env != k.key() {
			t.Errorf("setting %s: knob %s (variable %q) is not a text knob with a variable", s.Name, k.Name, k.Env)
		}
		var c Config
		s.Set(&c, "v-"+s.Name)
		if s.Get(c) != "v-"+s.Name || k.field(&c).String() != "v-"+s.Name {
			t.Errorf("setting %s does not set Config.%s", s.Name, k.Name)
		}
	}
}

// TestREADMEConfigurationTable holds docs/configuration.md's table to
// the one MarkdownTable generates from Knobs; after changing a knob, run
// `go test ./internal/config -run TestREADMEConfigurationTable -update`.
func TestREADMEConfigurationTable(t *testing.T) {
	const path = "../../docs/configuration.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const endMark = "<!-- knobs:end -->"
	i := strings.Index(s, "<!-- knobs:begin")
	j := strings.Index(s, endMark)
	if i < 0 || j < i {
		t.Fatalf("%s has no <!-- knobs:begin ... --> ... %s block", path, endMark)
	}
	i += strings.Index(s[i:], "\n") + 1
	want := MarkdownTable()
	if *update {
		if err := os.WriteFile(path, []byte(s[:i]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := s[i:j]; got != want {
		t.Errorf("docs/configuration.md's table is not the one Knobs generate: run `go test ./internal/config -run TestREADMEConfigurationTable -update` and commit docs/configuration.md.\n--- docs/configuration.md\n%s\n--- generated\n%s", got, want)
	}
}

// TestEmptyFlagValuesAreNotGiven: an empty --tools or --virtual-display
// leaves the variable's value, as before the flags came from the table.
func TestEmptyFlagValuesAreNotGiven(t *testing.T) {
	c, _, err := Load("serve", []string{"--tools=", "--virtual-display", ""}, env(map[string]string{"GUI_AGENT_TOOLS": "input", "GUI_AGENT_VIRTUAL_DISPLAY": "800x600"}))
	if err != nil || strings.Join(c.Tools, ",") != "input" || c.VirtualDisplay != (geom.Size{W: 800, H: 600}) {
		t.Fatalf("empty flags: tools %q, virtual display %v, %v", c.Tools, c.VirtualDisplay, err)
	}
}

// A URL with a line break (a header injected into every provider request)
// or spaces is refused, as a variable and through the settings.
func TestURLsHoldNoLineBreaks(t *testing.T) {
	for _, v := range []string{"https://api.example.test/v1\r\nX-Evil: 1", "https://api.example.test/v1\n", "https://a b.test/"} {
		_, _, err := Load("serve", nil, env(map[string]string{"GUI_AGENT_PROVIDER": "openai", "GUI_AGENT_MODEL": "m", "GUI_AGENT_BASE_URL": v}))
		if v == "https://api.example.test/v1\n" {
			continue // a trailing newline is trimmed from a variable
		}
		if err == nil || !strings.Contains(err.Error(), "no spaces, line breaks or control characters") {
			t.Errorf("base URL %q: %v", v, err)
		}
	}
	c := Default()
	c.Provider, c.Model, c.BaseURL = "openai", "m", "https://api.example.test/v1\r\nX-Evil: 1"
	if err := c.Validate(); err == nil {
		t.Error("Validate accepted a base URL with CR/LF")
	}
}
