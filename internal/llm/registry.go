package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

// The provider registry. Each provider package registers, in its init, the
// adapters it implements (RegisterAdapter) and, for a provider of its own,
// the provider (RegisterProvider): its name, the adapters it may use, the
// table of rules that picks an adapter, tool version and coordinate profile
// from a model id, the lifecycle of its models, its text and vision models and
// its doctor checks. Configuration validation, internal/app, doctor and the
// README take their lists from here; adding a provider is one package plus one
// blank import in internal/llm/providers.

// AdapterSpec is one adapter as its package registers it.
type AdapterSpec struct {
	// Name is the GUI_AGENT_ADAPTER value ("generic", "anthropic-computer", ...).
	Name string
	// Doc is one line for the README table and doctor: what the adapter speaks.
	Doc string
	// New builds the adapter for a configuration.
	New func(Config) (Adapter, error)
	// Profile names the geom.Profiles row the adapter speaks in whatever the
	// model is called ("" = the model's own row, see ProfileFor); a rule's
	// Profile overrides it.
	Profile string
	// Wire names the fakellm server that speaks the adapter's wire format
	// ("chat", "uitars", "anthropic", "responses", "gemini"); every adapter has one.
	Wire string
	// Rules pick the adapter's tool version and profile by model id, first
	// match wins (their Adapter is the adapter's own name); a provider's
	// rules pick the adapter.
	Rules []Rule
	// Package is the Go import path of the package that registered the
	// adapter, filled in by RegisterAdapter (deps_test guards it).
	Package string
}

// Rule picks how a model id is spoken to: the first rule of a provider whose
// Match has a pattern matching the normalized id (NormalizeModel) wins.
type Rule struct {
	// Match holds path.Match patterns over the normalized, lower-cased id.
	Match []string
	// Adapter is the adapter's name.
	Adapter string
	// ToolVersion is the native tool version ("" = none, or the adapter's own choice).
	ToolVersion string
	// Profile names a geom.Profiles row ("" = the adapter's Profile).
	Profile string
	// NoVision marks models that cannot answer the plain-vision questions
	// (the vision tools): they speak only their computer tool.
	NoVision bool
}

// Lifecycle is a model's retirement as its provider announced it.
type Lifecycle struct {
	// Model is the id, as the provider's SDK spells it.
	Model string
	// Date is the announced shutdown (end-of-life) date, "2006-01-02".
	Date string
	// Replacement is the model the provider recommends instead, when it names one.
	Replacement string
	// Note is the provider's own wording, when it says more than a date.
	Note string
}

// Check is one doctor finding.
type Check struct {
	Level  string // "ok", "warn" or "FAIL"
	Name   string
	Detail string
	Fix    string
}

// VisionModel answers a plain-vision question about one image: the answer
// is JSON matching schema (internal/vision's Model).
type VisionModel interface {
	Ask(ctx context.Context, img Image, system, prompt string, schema json.RawMessage) (json.RawMessage, Usage, error)
	Profile() geom.Profile
}

// Provider is one model provider as its package registers it.
type Provider struct {
	// Name is the GUI_AGENT_PROVIDER value.
	Name string
	// Doc is one line for the README table and doctor.
	Doc string
	// Adapters are the names of the adapters the provider's models may use
	// (GUI_AGENT_ADAPTER may pick any of them).
	Adapters []string
	// Rules map model ids to an adapter, tool version and profile; the last
	// one should match everything ("*").
	Rules []Rule
	// Models lists models with an announced shutdown, taken from the SDK's
	// own deprecation markers where it has them.
	Models []Lifecycle
	// Example is a current model id to show in examples and errors.
	Example string
	// KeyEnv and BaseURLEnv are the provider SDK's own variables for its API
	// key and endpoint, in the SDK's order of precedence (ANTHROPIC_API_KEY,
	// OPENAI_BASE_URL, ...): config falls back to them for the provider's
	// models after GUI_AGENT_<PROVIDER>_API_KEY and _BASE_URL, and hands the
	// adapters the key it found (only config reads the environment); a base
	// URL variable is listed only where the SDK's endpoint means what
	// BaseURL means for the provider.
	KeyEnv, BaseURLEnv []string
	// Text builds the text model that condenses old steps; nil = none.
	Text func(Config) (TextModel, error)
	// Vision builds the plain-vision model of the vision tools; nil = none.
	Vision func(Config) (VisionModel, error)
	// Grounder builds a grounding model (GUI_AGENT_GROUNDING_MODEL); nil = none.
	Grounder func(Config) (Grounder, error)
	// Doctor adds the provider's own findings about a configuration; nil = none.
	Doctor func(Config) []Check
	// Package is the Go import path of the registering package, filled in by
	// RegisterProvider.
	Package string
}

var registry struct {
	sync.RWMutex
	providers map[string]Provider
	adapters  map[string]AdapterSpec
}

// callerPackage is the import path of the package whose code called the
// function that calls it (the registering init).
func callerPackage() string {
	pc, _, _, ok := runtime.Caller(2)
	if !ok {
		return ""
	}
	name := runtime.FuncForPC(pc).Name() // ".../internal/llm/anthropic.init.0"
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}

// RegisterAdapter adds an adapter. It panics on a duplicate or incomplete
// registration: that is a programming error found at start-up.
func RegisterAdapter(a AdapterSpec) {
	a.Package = callerPackage()
	if a.Name == "" || a.New == nil || a.Wire == "" {
		panic(fmt.Sprintf("llm.RegisterAdapter from %s: Name, New and Wire are required", a.Package))
	}
	if a.Profile != "" {
		profileRow(a.Profile) // panics on an unknown row
	}
	for i := range a.Rules {
		a.Rules[i].Adapter = a.Name
		checkRule(a.Name, a.Rules[i])
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.adapters == nil {
		registry.adapters = map[string]AdapterSpec{}
	}
	if _, dup := registry.adapters[a.Name]; dup {
		panic("llm.RegisterAdapter: adapter " + a.Name + " registered twice")
	}
	registry.adapters[a.Name] = a
}

// RegisterProvider adds a provider. It panics on a duplicate or malformed
// registration (a rule with a bad pattern, an unknown profile row, a bad date).
func RegisterProvider(p Provider) {
	p.Package = callerPackage()
	if p.Name == "" || len(p.Rules) == 0 {
		panic(fmt.Sprintf("llm.RegisterProvider from %s: Name and Rules are required", p.Package))
	}
	for _, r := range p.Rules {
		checkRule(p.Name, r)
		if !slices.Contains(p.Adapters, r.Adapter) {
			panic(fmt.Sprintf("llm.RegisterProvider %s: rule %v names adapter %q, which is not in Adapters", p.Name, r.Match, r.Adapter))
		}
	}
	for _, m := range p.Models {
		if _, err := time.Parse(time.DateOnly, m.Date); err != nil && (m.Date != "" || m.Note == "") {
			panic(fmt.Sprintf("llm.RegisterProvider %s: model %s: bad date %q", p.Name, m.Model, m.Date))
		}
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.providers == nil {
		registry.providers = map[string]Provider{}
	}
	if _, dup := registry.providers[p.Name]; dup {
		panic("llm.RegisterProvider: provider " + p.Name + " registered twice")
	}
	registry.providers[p.Name] = p
}

// checkRule panics on a rule with a bad pattern or an unknown profile row.
func checkRule(owner string, r Rule) {
	for _, pat := range r.Match {
		if _, err := path.Match(pat, ""); err != nil {
			panic(fmt.Sprintf("llm: %s: bad pattern %q: %v", owner, pat, err))
		}
	}
	if r.Profile != "" {
		profileRow(r.Profile)
	}
}

// Providers returns the registered providers, sorted by name.
func Providers() []Provider {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]Provider, 0, len(registry.providers))
	for _, p := range registry.providers {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Provider) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ProviderNames returns the registered provider names, sorted.
func ProviderNames() []string {
	var out []string
	for _, p := range Providers() {
		out = append(out, p.Name)
	}
	return out
}

// ProviderNamed returns the provider registered as name.
func ProviderNamed(name string) (Provider, bool) {
	registry.RLock()
	defer registry.RUnlock()
	p, ok := registry.providers[name]
	return p, ok
}

// Adapters returns the registered adapters, sorted by name.
func Adapters() []AdapterSpec {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]AdapterSpec, 0, len(registry.adapters))
	for _, a := range registry.adapters {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b AdapterSpec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// AdapterNames returns the registered adapter names, sorted.
func AdapterNames() []string {
	var out []string
	for _, a := range Adapters() {
		out = append(out, a.Name)
	}
	return out
}

// AdapterNamed returns the adapter registered as name.
func AdapterNamed(name string) (AdapterSpec, bool) {
	registry.RLock()
	defer registry.RUnlock()
	a, ok := registry.adapters[name]
	return a, ok
}

// vendorPrefix matches the prefixes cloud platforms put before a provider's
// own model id: Bedrock's "us.anthropic.", "global.anthropic.", "anthropic.".
var vendorPrefix = regexp.MustCompile(`^(?:(?:us|eu|apac|jp|au|us-gov|global)\.)?(?:anthropic|openai|google|meta|amazon)\.`)

// NormalizeModel returns the provider's own id of a model as a deployment may
// spell it: lower case, without a "vendor/" path (OpenRouter), a cloud
// platform's "us.anthropic." prefix (Bedrock) or an "@date" suffix (Vertex AI).
func NormalizeModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.IndexByte(m, '@'); i >= 0 {
		m = m[:i]
	}
	return vendorPrefix.ReplaceAllString(m, "")
}

// Matches reports whether the rule matches a normalized model id.
func (r Rule) Matches(normalized string) bool {
	for _, pat := range r.Match {
		if ok, _ := path.Match(pat, normalized); ok {
			return true
		}
	}
	return false
}

// Choose returns the first rule of p matching model (NormalizeModel), and
// false when none does.
func (p Provider) Choose(model string) (Rule, bool) {
	m := NormalizeModel(model)
	for _, r := range p.Rules {
		if r.Matches(m) {
			return r, true
		}
	}
	return Rule{}, false
}

// RuleFor is the rule that speaks to model through adapter: the adapter's
// first rule matching model, else the first rule of any provider naming
// adapter and matching model, else a rule with just the adapter.
func RuleFor(adapter, model string) Rule {
	m := NormalizeModel(model)
	if a, ok := AdapterNamed(adapter); ok {
		for _, r := range a.Rules {
			if r.Matches(m) {
				return r
			}
		}
	}
	for _, p := range Providers() {
		for _, r := range p.Rules {
			if r.Adapter == adapter && r.Matches(m) {
				return r
			}
		}
	}
	return Rule{Adapter: adapter}
}

// LifecycleOf returns what provider announced about model's retirement, if
// anything: an exact match of the id, else of its normalized form.
func LifecycleOf(provider, model string) (Lifecycle, bool) {
	p, ok := ProviderNamed(provider)
	if !ok {
		return Lifecycle{}, false
	}
	for _, id := range []string{strings.TrimSpace(model), NormalizeModel(model)} {
		for _, l := range p.Models {
			if strings.EqualFold(l.Model, id) {
				return l, true
			}
		}
	}
	return Lifecycle{}, false
}

// ShutDown reports whether l's date is past at now (a model without a date
// is one the provider does not serve: its Note says why).
func (l Lifecycle) ShutDown(now time.Time) bool {
	if l.Date == "" {
		return true
	}
	d, err := time.Parse(time.DateOnly, l.Date)
	return err == nil && !now.Before(d)
}

// Describe says what l means at now: "shut down on 2026-07-23" or
// "deprecated: shuts down on 2026-11-30", with the replacement when known.
func (l Lifecycle) Describe(now time.Time) string {
	s := "deprecated: shuts down on " + l.Date
	switch {
	case l.Date == "":
		s = "not served"
	case l.ShutDown(now):
		s = "shut down on " + l.Date
	}
	if l.Replacement != "" {
		s += "; use " + l.Replacement
	}
	if l.Note != "" {
		s += " (" + l.Note + ")"
	}
	return s
}
