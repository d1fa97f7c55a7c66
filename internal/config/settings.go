package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Source names the layer that set a configuration value. Precedence, highest
// first: flag, environment, settings file, default.
type Source string

// The sources of a value.
const (
	SourceDefault Source = "default"
	SourceFile    Source = "settings file"
	SourceEnv     Source = "environment"
	SourceFlag    Source = "flag"
	// SourceOptions is a value a Go program gave guiagent.New directly.
	SourceOptions Source = "Go options"
)

// Locked reports whether a value from s ranks above the settings file, so
// the settings API must not change it.
func (s Source) Locked() bool { return s == SourceFlag || s == SourceEnv || s == SourceOptions }

// Sources says which layer set each value that is not a default, keyed by the
// name of its GUI_AGENT_ variable without the prefix ("MODEL", "DISPLAY_INDEX"),
// or by "--name" for a flag with no variable.
type Sources map[string]Source

// Of returns the source of the value of variable name (without GUI_AGENT_).
func (s Sources) Of(name string) Source {
	if src, ok := s[name]; ok {
		return src
	}
	return SourceDefault
}

// Setting is one value a host application may change at run time (the
// settings API and the settings file): the vision model and the display.
type Setting struct {
	// Name is its JSON name in the settings file and the settings API.
	Name string
	// Env is its GUI_AGENT_ variable without the prefix (its Sources key).
	Env string
	// Secret settings are write-only: never returned, logged or recorded.
	Secret bool
	knob   Knob
}

// Var is the setting's environment variable.
func (s Setting) Var() string { return s.knob.Env }

// Get returns the setting's value in c.
func (s Setting) Get(c Config) string { return s.knob.field(&c).String() }

// Set sets the setting's value in c.
func (s Setting) Set(c *Config, v string) { s.knob.field(c).SetString(v) }

// Settings lists the run-time settings, in the order the API shows them:
// each is a text knob of Knobs under its API name.
var Settings = func() []Setting {
	var out []Setting
	for _, n := range []struct{ api, knob string }{
		{"provider", "Provider"}, {"model", "Model"}, {"base_url", "BaseURL"}, {"api_key", "APIKey"},
		{"coordinate_mode", "CoordinateMode"}, {"display", "DisplayIndex"}, {"adapter", "Adapter"},
		{"grounding_model", "GroundingModel"}, {"memory_model", "MemoryModel"},
	} {
		k, ok := KnobNamed(n.knob)
		if !ok {
			panic("config: setting " + n.api + " names no knob") // TestSettingsAreTextKnobs
		}
		out = append(out, Setting{Name: n.api, Env: k.key(), Secret: k.Secret, knob: k})
	}
	return out
}()

// SettingNamed returns the setting called name.
func SettingNamed(name string) (Setting, bool) {
	for _, s := range Settings {
		if s.Name == name {
			return s, true
		}
	}
	return Setting{}, false
}

// SettingNames lists the settings' JSON names.
func SettingNames() []string {
	names := make([]string, len(Settings))
	for i, s := range Settings {
		names[i] = s.Name
	}
	return names
}

// markFlags records the flags fs was given in c.Sources: under the variable
// of their knob, or as "--name" for a flag that has none (--display, --http).
func (c *Config) markFlags(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) {
		name := "--" + f.Name
		for _, k := range Knobs {
			if k.Flag == f.Name {
				name = k.key()
			}
		}
		c.source(name, SourceFlag)
	})
}

// SourceOf says which layer set the knob of Config field name.
func (c Config) SourceOf(name string) Source {
	if k, ok := knobNamed(name); ok {
		return c.Sources.Of(k.key())
	}
	return SourceDefault
}

// MarkSource records that layer s set the knob of Config field name (the
// public package marks what a Go program gave it).
func (c *Config) MarkSource(name string, s Source) {
	if k, ok := knobNamed(name); ok {
		c.source(k.key(), s)
	}
}

func knobNamed(name string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

func (c *Config) source(name string, s Source) {
	if c.Sources == nil {
		c.Sources = Sources{}
	}
	c.Sources[name] = s
}

// DefaultSettingsFile is where the settings API keeps its values:
// GUI_AGENT_SETTINGS_FILE, else os.UserConfigDir()/guiagent/settings.json
// computed from getenv ("" when getenv names no config or home directory, so
// a test that passes its own getenv never reads the user's file).
func DefaultSettingsFile(getenv func(string) string) string {
	if f := strings.TrimSpace(getenv(Var("SettingsFile"))); f != "" {
		return f
	}
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = getenv("AppData")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			dir = filepath.Join(h, "Library", "Application Support")
		}
	default:
		dir = getenv("XDG_CONFIG_HOME")
		if dir == "" || !filepath.IsAbs(dir) {
			dir = ""
			if h := getenv("HOME"); h != "" {
				dir = filepath.Join(h, ".config")
			}
		}
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "guiagent", "settings.json")
}

// ReadSettingsFile reads the settings file at path: a JSON object of Settings
// names to strings. A missing file is empty; an unknown name or a value that
// is not a string is an error naming the file and the name.
func ReadSettingsFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("settings file: %w", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("settings file %s is not a JSON object: %w (fix or delete it)", path, err)
	}
	out := map[string]string{}
	for k, v := range raw {
		if _, ok := SettingNamed(k); !ok {
			return nil, fmt.Errorf("settings file %s: unknown setting %q: want one of %s (fix or delete it)", path, k, strings.Join(SettingNames(), ", "))
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("settings file %s: %q must be a string (fix or delete it)", path, k)
		}
		out[k] = s
	}
	return out, nil
}

// WriteSettingsFile replaces the settings file at path with values (empty
// values are left out), atomically (a temporary file renamed over it) and
// readable by its owner only (0600: it may hold the API key). The directory
// is created 0700 when missing.
func WriteSettingsFile(path string, values map[string]string) error {
	clean := map[string]string{}
	for k, v := range values {
		if _, ok := SettingNamed(k); !ok {
			return fmt.Errorf("unknown setting %q", k)
		}
		if v != "" {
			clean[k] = v
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(clean); err != nil { // map keys are sorted: a stable file
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("settings file: %w", err)
	}
	f, err := os.CreateTemp(dir, ".settings-*.json")
	if err != nil {
		return fmt.Errorf("settings file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := f.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		f.Close()
		return fmt.Errorf("settings file: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("settings file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("settings file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("settings file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("settings file: %w", err)
	}
	return nil
}

// staleTempAge is how old a settings temp file must be to be removed: a
// write under way (another guiagent) has its temp file for milliseconds.
const staleTempAge = time.Minute

// RemoveStaleSettingsTemps removes the temp files (.settings-*.json) a
// guiagent killed while writing the settings file left beside it: they may
// hold old keys. It removes only files older than staleTempAge.
func RemoveStaleSettingsTemps(path string) {
	olds, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".settings-*.json"))
	for _, f := range olds {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleTempAge {
			_ = os.Remove(f)
		}
	}
}

// loadSettingsFile applies the settings file (the layer under the
// environment) to c and records its path in c.SettingsFile.
func (c *Config) loadSettingsFile(getenv func(string) string) error {
	c.SettingsFile = DefaultSettingsFile(getenv)
	if c.SettingsFile == "" {
		return nil
	}
	RemoveStaleSettingsTemps(c.SettingsFile)
	values, err := ReadSettingsFile(c.SettingsFile)
	if err != nil {
		return fmt.Errorf("%w (%s names another file)", err, Var("SettingsFile"))
	}
	for _, s := range Settings {
		if v, ok := values[s.Name]; ok && v != "" {
			s.Set(c, v)
			c.source(s.Env, SourceFile)
		}
	}
	return nil
}

// ApplySettingsFile applies c.SettingsFile to the settings c leaves empty and
// marks the others as given by a Go program (SourceOptions), which rank above
// the file. It is for configurations not built by Load (guiagent.New).
func (c *Config) ApplySettingsFile() error {
	for _, s := range Settings {
		if s.Get(*c) != "" {
			c.source(s.Env, SourceOptions)
		}
	}
	if c.SettingsFile == "" {
		return nil
	}
	values, err := ReadSettingsFile(c.SettingsFile)
	if err != nil {
		return err
	}
	for _, s := range Settings {
		if v := values[s.Name]; v != "" && s.Get(*c) == "" {
			s.Set(c, v)
			c.source(s.Env, SourceFile)
		}
	}
	return nil
}
