package eval

import (
	"errors"
	"fmt"
	"image"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// FakeProvider is the provider name of the scripted models eval serves in
// process, for offline suites and tests: `--model fake:sample`.
const FakeProvider = "fake"

// Model is one model a suite runs against: "provider:model" as given.
type Model struct {
	// Name is the spelling of --model, the key of its results.
	Name     string
	Provider string
	ID       string
	// Fake is the scripted brain of a fake model (nil for a real provider),
	// Delay how long each of its answers is held back.
	Fake  scripted.Brain
	Delay time.Duration
}

// fakeModels are the scripted models fake: names, with what each does.
var fakeModels = []struct {
	name, doc string
	brain     func() scripted.Brain
}{
	{"sample", "plays the sample application's form and dialog scenes, finding widgets by colour as a vision model would", sampleBrain},
	{"demo-form", "fills the sample form with Ada Lovelace, ada@example.org, London and submits it, as guiagent demo does", func() scripted.Brain { return scripted.DemoFormBrain(scripted.DefaultDemoForm) }},
	{"demo-dialog", "presses Next, then OK in the sample dialog", scripted.DemoDialogBrain},
	{"done", "answers done at once without acting, a model that claims success, so its checks fail", func() scripted.Brain {
		return func(scripted.Turn) scripted.Reply { return scripted.Finish("done") }
	}},
}

// FakeModelNames lists the fake: models with what each does, for help texts.
func FakeModelNames() string {
	var b strings.Builder
	for _, m := range fakeModels {
		fmt.Fprintf(&b, "fake:%s %s; ", m.name, m.doc)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// ParseModel reads "provider:model": a provider of the registry (openai,
// anthropic, gemini, ...) and its model id, or fake:NAME for a scripted
// model served in process, optionally with ?delay=1s to hold each answer
// back (timing measurements).
func ParseModel(s string) (Model, error) {
	provider, id, ok := strings.Cut(s, ":")
	if !ok || provider == "" || id == "" {
		return Model{}, fmt.Errorf("--model %q: give provider:model, such as anthropic:claude-sonnet-5-5 or fake:sample (providers: %s)", s, providers())
	}
	m := Model{Name: s, Provider: strings.ToLower(provider), ID: id}
	if m.Provider != FakeProvider {
		if _, ok := llm.ProviderNamed(m.Provider); !ok {
			return Model{}, fmt.Errorf("--model %q: unknown provider %q (providers: %s)", s, provider, providers())
		}
		return m, nil
	}
	name, query, _ := strings.Cut(id, "?")
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return Model{}, fmt.Errorf("--model %q: %v (give fake:NAME?delay=1s)", s, err)
		}
		for k := range q {
			if k != "delay" {
				return Model{}, fmt.Errorf("--model %q: unknown option %q (a fake model takes delay=DURATION)", s, k)
			}
		}
		d, err := time.ParseDuration(q.Get("delay"))
		if err != nil || d < 0 || d > time.Minute {
			return Model{}, fmt.Errorf("--model %q: delay must be a duration up to 1m, such as 1s", s)
		}
		m.Delay = d
	}
	i := slices.IndexFunc(fakeModels, func(f struct {
		name, doc string
		brain     func() scripted.Brain
	}) bool {
		return f.name == name
	})
	if i < 0 {
		return Model{}, fmt.Errorf("--model %q: no fake model %q: the fake models are %s", s, name, FakeModelNames())
	}
	m.ID, m.Fake = name, fakeModels[i].brain()
	return m, nil
}

func providers() string { return strings.Join(append(llm.ProviderNames(), FakeProvider), ", ") }

// configure points c at m, with m's provider's own key and endpoint
// (config.WithModel: never another provider's); for a fake model it
// starts the model's server, which stop ends.
func (m Model) configure(c config.Config) (_ config.Config, stop func(), err error) {
	c.MemoryModel, c.MemoryProvider, c.GroundingModel = "", "", ""
	if m.Fake == nil {
		c = c.WithModel(m.Provider, m.ID)
		if err := c.Validate(); err != nil {
			return c, nil, fmt.Errorf("--model %s: %w", m.Name, err)
		}
		return c, func() {}, nil
	}
	brain := m.Fake
	if m.Delay > 0 {
		inner := brain
		brain = func(t scripted.Turn) scripted.Reply {
			r := inner(t)
			r.Delay = m.Delay
			return r
		}
	}
	// The fake reads no tokens, so it reports none (no invented counts).
	srv := fakellm.NewChatServer(brain, fakellm.ChatOptions{Model: "guiagent-fake-" + m.ID, NoUsage: true})
	c = c.WithModel("openai", "guiagent-fake-"+m.ID) // the keys it replaces are still scrubbed
	c.BaseURL, c.APIKey, c.Adapter = srv.URL, "fake-no-key", "generic"
	return c, srv.Close, nil
}

// sampleBrain plays the sample application: the form scene with the demo's
// values, the dialog scene with Next and OK; anything else is blocked.
func sampleBrain() scripted.Brain {
	form := scripted.DemoFormBrain(scripted.DefaultDemoForm)
	dialog := scripted.DemoDialogBrain()
	return func(t scripted.Turn) scripted.Reply {
		if t.Image == nil {
			return scripted.Reply{Status: llm.Failed, Result: "the request carried no screenshot"}
		}
		if has(t.Image, sampleapp.SubmitColor) {
			return form(t)
		}
		if has(t.Image, sampleapp.NextColor) || has(t.Image, sampleapp.OKColor) {
			return dialog(t)
		}
		return scripted.Reply{Status: llm.Blocked, Result: "neither the sample form nor the sample dialog is on the screen"}
	}
}

func has(img image.Image, c sampleapp.Color) bool {
	_, ok := scripted.BlobBox(img, c.ToRGBA(), scripted.ColorTol)
	return ok
}

// NoKeyError says that model m has no key, and where its provider's key may
// be set (the variables' names, never a value).
func NoKeyError(c config.Config, m Model) error {
	p, _ := llm.ProviderNamed(m.Provider)
	vars := append([]string{config.ProviderKeyVar(m.Provider)}, p.KeyEnv...)
	msg := fmt.Sprintf("--model %s: no API key for provider %s: set %s (or %s for a server that needs no key)",
		m.Name, m.Provider, strings.Join(vars, " or "), config.ProviderBaseURLVar(m.Provider))
	switch {
	case c.APIKey != "" && c.Provider == "":
		msg += fmt.Sprintf("; %s is set, but it serves only the models of %s, which is not set", config.Var("APIKey"), config.Var("Provider"))
	case c.APIKey != "" && c.Provider != m.Provider:
		msg += fmt.Sprintf("; %s is %s=%s's key and is never sent to another provider", config.Var("APIKey"), config.Var("Provider"), c.Provider)
	}
	return errors.New(msg)
}
