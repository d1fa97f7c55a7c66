package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sort"
	"strings"
	"unicode"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/secret"
)

// maxSettingsBody bounds a PUT /api/settings body.
const maxSettingsBody = 64 << 10

// readOnlySettings are fields GET returns that a PUT may send back unchanged
// (a client that GETs, edits and PUTs); they are ignored.
var readOnlySettings = map[string]bool{"api_key_set": true, "sources": true, "settings_file": true, "choices": true}

// SettingsView is the body of GET /api/settings: every run-time setting but
// the key, which shows only as APIKeySet.
type SettingsView struct {
	Provider       string `json:"provider"`
	Model          string `json:"model"`
	BaseURL        string `json:"base_url"`
	APIKeySet      bool   `json:"api_key_set"`
	CoordinateMode string `json:"coordinate_mode"`
	Display        string `json:"display"`
	Adapter        string `json:"adapter"`
	GroundingModel string `json:"grounding_model"`
	MemoryModel    string `json:"memory_model"`
	// Sources names the layer that set each setting: flag, environment,
	// settings file or default. A setting set by a flag or the environment
	// cannot be changed here (they take precedence over the settings file).
	Sources map[string]config.Source `json:"sources"`
	// SettingsFile is where changes persist; "" means they last until exit.
	SettingsFile string `json:"settings_file"`
	// Choices lists the accepted values of the settings that have a fixed
	// set ("" is accepted too: the default).
	Choices map[string][]string `json:"choices"`
}

// SettingsError is a refused settings change: Status is the HTTP status
// (400 bad value, 409 set by a higher layer, 500 not saved).
type SettingsError struct {
	Status int
	Err    error
}

func (e *SettingsError) Error() string { return e.Err.Error() }
func (e *SettingsError) Unwrap() error { return e.Err }

// Settings returns the run-time settings in force.
func (a *App) Settings() SettingsView {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, src := a.cfg, a.sources
	v := SettingsView{
		Provider: c.Provider, Model: c.Model, BaseURL: c.BaseURL, APIKeySet: c.APIKey != "",
		CoordinateMode: c.CoordinateMode, Display: c.DisplayIndex, Adapter: c.Adapter,
		GroundingModel: c.GroundingModel, MemoryModel: c.MemoryModel,
		Sources: map[string]config.Source{}, SettingsFile: c.SettingsFile,
		Choices: map[string][]string{"provider": config.Providers(), "adapter": config.Adapters(), "coordinate_mode": geom.CoordinateModes},
	}
	for _, s := range config.Settings {
		v.Sources[s.Name] = src.Of(s.Env)
	}
	return v
}

// applyChanges returns the configuration with changes applied, the settings
// that really change, and the new secret values among them (each checked to
// look like a key). It changes nothing itself.
func (a *App) applyChanges(changes map[string]string) (config.Config, []config.Setting, []string, error) {
	next := a.cfg
	next.Sources = nil
	var changed []config.Setting
	var keys []string
	for _, name := range sortedKeys(changes) {
		s, ok := config.SettingNamed(name)
		if !ok {
			return next, nil, nil, &SettingsError{http.StatusBadRequest, fmt.Errorf("unknown setting %q: want one of %s", name, strings.Join(config.SettingNames(), ", "))}
		}
		v := strings.TrimSpace(changes[name])
		if v == s.Get(a.cfg) {
			continue
		}
		if s.Secret {
			if err := checkKey(name, v); err != nil {
				return next, nil, nil, &SettingsError{http.StatusBadRequest, err}
			}
			keys = append(keys, v)
		}
		if src := a.sources.Of(s.Env); src.Locked() {
			return next, nil, nil, &SettingsError{http.StatusConflict, fmt.Errorf("%s is set by the %s (%s, its flag or the program's options), which takes precedence over the settings: unset it and restart guiagent to change it here", name, src, s.Var())}
		}
		s.Set(&next, v)
		changed = append(changed, s)
	}
	return next, changed, keys, nil
}

// Limits of a secret set through the settings API.
const (
	minKeyLen = 8
	maxKeyLen = 4096
)

// checkKey refuses a secret setting that cannot be a key: too short, too
// long, with spaces or control characters, or a plain word ("true", "error"),
// which the scrubber would then blank out of every log and record. The value
// itself is never part of the error.
func checkKey(name, v string) error {
	if v == "" {
		return nil // clears it
	}
	switch {
	case len(v) < minKeyLen:
		return fmt.Errorf("%s is %d characters, too short for a key (at least %d); leave it empty for a local server that needs no key", name, len(v), minKeyLen)
	case len(v) > maxKeyLen:
		return fmt.Errorf("%s is %d bytes, longer than any provider's key (at most %d)", name, len(v), maxKeyLen)
	case strings.IndexFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return fmt.Errorf("%s holds spaces or control characters: paste the key alone", name)
	case strings.IndexFunc(v, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 && len(v) < 24:
		return fmt.Errorf("%s is a plain word, not a key: paste the provider's key (keys mix letters with digits or punctuation)", name)
	}
	return nil
}

// UpdateSettings validates changes (setting name -> new value; "" clears)
// exactly as start-up does, builds the task runner they describe, saves them
// to the settings file and makes them the settings of the next task. Nothing
// changes when any of it fails.
func (a *App) UpdateSettings(ctx context.Context, changes map[string]string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	next, changed, keys, err := a.applyChanges(changes)
	if err != nil || len(changed) == 0 {
		return err
	}
	// A new key is not yet known to the writers, so a refusal is scrubbed
	// of it here; it joins the shared scrubber only once accepted (a refused
	// key would otherwise stay in it, and every writer would scrub it).
	refuse := func(status int, err error) error {
		return &SettingsError{status, errors.New(secret.NewScrubber(keys...).String(err.Error()))}
	}
	if err := next.Validate(); err != nil {
		return refuse(http.StatusBadRequest, nameSettings(err))
	}
	if err := a.checkDisplay(ctx, next.DisplayIndex); err != nil {
		return refuse(http.StatusBadRequest, err)
	}
	a.scrub.Add(keys...) // accepted: known to every writer before anything can use it
	var runner *agent.Runner
	if modelConfigured(next) {
		r, err := a.newRunner(next)
		if err != nil {
			return &SettingsError{http.StatusBadRequest, nameSettings(err)}
		}
		runner = r
	}
	if err := a.persist(next, changed); err != nil {
		return &SettingsError{http.StatusInternalServerError, err}
	}
	src := maps.Clone(a.sources) // copied: Config() hands the old map out
	if src == nil {
		src = config.Sources{}
	}
	for _, s := range changed {
		if s.Get(next) == "" {
			delete(src, s.Env)
		} else {
			src[s.Env] = config.SourceFile
		}
	}
	a.sources, next.Sources = src, src
	a.cfg = next
	a.tasks.set(runner, next.DisplayIndex)
	if runner != nil {
		a.server.SetTasks(a.tasks) // offers gui_execute_task if it was not
	} else {
		a.server.SetTasks(nil) // withdraws it: no model
	}
	a.setVision(next)
	a.log.Info("settings changed; the next task uses them", "changed", settingNames(changed), "model", next.Model, "provider", next.Provider)
	return nil
}

// checkDisplay refuses a display id the desktop does not have.
func (a *App) checkDisplay(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	ds, err := a.screen.Displays(ctx)
	if err != nil {
		return fmt.Errorf("display: listing the displays failed: %w", err)
	}
	if _, err := geom.FindDisplay(ds, id); err != nil {
		return fmt.Errorf("display: %w (GET /api/displays lists them)", err)
	}
	return nil
}

// persist writes the changed settings into the settings file, keeping the
// values it holds for the others.
func (a *App) persist(next config.Config, changed []config.Setting) error {
	if next.SettingsFile == "" {
		return nil
	}
	values, err := config.ReadSettingsFile(next.SettingsFile)
	if err != nil {
		return err
	}
	for _, s := range changed {
		values[s.Name] = s.Get(next)
	}
	if err := config.WriteSettingsFile(next.SettingsFile, values); err != nil {
		return fmt.Errorf("saving the settings failed, nothing changed: %w", err)
	}
	return nil
}

// nameSettings rewrites GUI_AGENT_X in a start-up validation message to the
// setting's API name, so the message names the field that was sent.
func nameSettings(err error) error {
	msg := err.Error()
	for _, s := range config.Settings {
		msg = strings.ReplaceAll(msg, s.Var(), s.Name)
	}
	return errors.New(msg)
}

func settingNames(ss []config.Setting) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Displays lists the desktop's displays as gui_list_displays does.
func (a *App) Displays(ctx context.Context) ([]mcpserver.DisplayInfo, error) {
	ds, err := a.screen.Displays(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]mcpserver.DisplayInfo, len(ds))
	for i, d := range ds {
		out[i] = mcpserver.DisplayInfo{ID: d.ID, Name: d.Name, X: d.Bounds.X, Y: d.Bounds.Y, Width: d.Bounds.W, Height: d.Bounds.H, ScaleFactor: d.ScaleFactor(), Primary: d.Primary}
	}
	return out, nil
}

// settingsHandler serves GET/PUT /api/settings and GET /api/displays; the
// dashboard mounts it behind its authentication.
func (a *App) settingsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/displays" && r.Method == http.MethodGet:
			ds, err := a.Displays(r.Context())
			if err != nil {
				http.Error(w, "listing the displays failed: "+err.Error(), http.StatusInternalServerError)
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"displays": ds})
		case r.URL.Path == "/api/settings" && r.Method == http.MethodGet:
			writeJSON(w, http.StatusOK, a.Settings())
		case r.URL.Path == "/api/settings" && r.Method == http.MethodPut:
			a.putSettings(w, r)
		default:
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		}
	})
}

func (a *App) putSettings(w http.ResponseWriter, r *http.Request) {
	changes, err := decodeSettings(io.LimitReader(r.Body, maxSettingsBody+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if err := a.UpdateSettings(r.Context(), changes); err != nil {
		status := http.StatusBadRequest
		var se *SettingsError
		if errors.As(err, &se) {
			status = se.Status
		}
		a.log.Warn("settings change refused", "err", err)
		writeJSON(w, status, map[string]string{"error": a.scrub.String(err.Error())})
		return
	}
	writeJSON(w, http.StatusOK, a.Settings())
}

// decodeSettings reads a PUT body: a JSON object of setting names to strings
// (null clears). Read-only fields GET returns are ignored; any other name is
// an error naming it and what is accepted.
func decodeSettings(r io.Reader) (map[string]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	if len(b) > maxSettingsBody {
		return nil, fmt.Errorf("the body is over %d bytes", maxSettingsBody)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return nil, fmt.Errorf("the body must be a JSON object of settings (%s), e.g. {\"model\":\"gpt-5.5\"}", strings.Join(config.SettingNames(), ", "))
	}
	out := map[string]string{}
	for k, v := range raw {
		if readOnlySettings[k] {
			continue
		}
		if _, ok := config.SettingNamed(k); !ok {
			return nil, fmt.Errorf("unknown field %q: want one of %s", k, strings.Join(config.SettingNames(), ", "))
		}
		var s *string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("%s must be a string (or null to clear it)", k)
		}
		if s != nil {
			out[k] = *s
		} else {
			out[k] = ""
		}
	}
	return out, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
