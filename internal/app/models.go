package app

import (
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	_ "github.com/guiagent/guiagent/internal/llm/providers" // registers every provider
	"github.com/guiagent/guiagent/internal/platform"
	"github.com/guiagent/guiagent/internal/vision"
)

// modelConfigured reports whether the configuration names a model to use.
func modelConfigured(c config.Config) bool { return c.Model != "" && c.Provider != "" }

// adapterName picks the adapter: GUI_AGENT_ADAPTER, else the first of the
// provider's rules (llm.Provider.Choose) matching the model.
func adapterName(c config.Config) string {
	if c.Adapter != "" {
		return c.Adapter
	}
	if p, ok := llm.ProviderNamed(c.Provider); ok {
		if r, ok := p.Choose(c.Model); ok {
			return r.Adapter
		}
	}
	return llm.AdapterGeneric
}

// disabled are the action kinds the model is not offered:
// GUI_AGENT_DISABLE_ACTIONS, and the held-button members under --read-only.
func disabled(c config.Config) []action.Kind {
	var out []action.Kind
	for _, k := range c.DisableActions {
		out = append(out, action.Kind(k))
	}
	if c.ReadOnly {
		out = append(out, action.MouseDown, action.MouseUp)
	}
	return out
}

// profileFor is the coordinate profile of model behind adapter, chosen by
// llm.ProfileFor (c.ModelCoordinateMode overrides the convention of a
// model the table does not know).
func profileFor(c config.Config, adapter, model string) (geom.Profile, error) {
	return llm.ProfileFor(adapter, model, c.ModelCoordinateMode())
}

// modelVars are the variables of one model's name, key and endpoint, for
// its errors.
func modelVars(model, key, baseURL string) llm.Vars {
	return llm.Vars{Model: model, APIKey: key, BaseURL: baseURL, Timeout: config.Var("ModelTimeout"),
		ToolVersion: config.Var("ToolVersion"), DisableActions: config.Var("DisableActions")}
}

func llmConfig(c config.Config, adapter, provider, model string) (llm.Config, error) {
	p, err := profileFor(c, adapter, model)
	if err != nil {
		return llm.Config{}, err
	}
	return llm.Config{
		Provider: provider, Model: model, APIKey: c.APIKey, BaseURL: c.BaseURL,
		Timeout: c.ModelTimeout, KeepImages: c.KeepImages, Profile: &p, ToolVersion: c.ToolVersion, Disabled: disabled(c),
		Refs:   c.Elements != "" && c.Elements != "off",
		Device: deviceOf(c),
		Vars:   modelVars(config.Var("Model"), config.Var("APIKey"), config.Var("BaseURL")),
	}, nil
}

// newAdapter builds the model adapter the configuration selects.
func newAdapter(c config.Config) (llm.Adapter, error) {
	if !modelConfigured(c) {
		return nil, ErrNoModel
	}
	if c.APIKey == "" && c.BaseURL == "" {
		return nil, fmt.Errorf("%s is not set for provider %s (a local OpenAI-compatible server needs %s instead)", config.Var("APIKey"), c.Provider, config.Var("BaseURL"))
	}
	name := adapterName(c)
	spec, ok := llm.AdapterNamed(name)
	if !ok {
		return nil, fmt.Errorf("%s=%q: want one of %s", config.Var("Adapter"), name, strings.Join(llm.AdapterNames(), ", "))
	}
	lc, err := llmConfig(c, name, c.Provider, c.Model)
	if err != nil {
		return nil, err
	}
	return spec.New(lc)
}

// newMemoryModel builds the text model that condenses old steps (the
// provider's registered Text model), or nil when there is no model name
// (older steps are then shortened without a model).
func newMemoryModel(c config.Config) (llm.TextModel, error) {
	provider, model := c.MemoryProvider, c.MemoryModel
	if provider == "" {
		provider = c.Provider
	}
	if model == "" {
		model = c.Model
	}
	if model == "" {
		return nil, nil
	}
	lc, err := llmConfig(c, llm.AdapterGeneric, provider, model)
	if err != nil {
		return nil, err
	}
	if c.MemoryModel != "" {
		lc.Vars = modelVars(config.Var("MemoryModel"), config.Var("MemoryAPIKey"), config.Var("MemoryBaseURL"))
	}
	if provider != c.Provider { // another provider: its own endpoint and key, never the main ones
		lc.BaseURL, lc.APIKey = c.MemoryBaseURL, c.MemoryAPIKey
	}
	if c.MemoryBaseURL != "" {
		lc.BaseURL = c.MemoryBaseURL
	}
	if c.MemoryAPIKey != "" {
		lc.APIKey = c.MemoryAPIKey
	}
	p, ok := llm.ProviderNamed(provider)
	if !ok || p.Text == nil {
		return nil, fmt.Errorf("provider %s has no text model for memory summaries: set %s to one of %s", provider, config.Var("MemoryProvider"), strings.Join(llm.ProviderNames(), ", "))
	}
	return p.Text(lc)
}

// compatible is the provider whose models speak OpenAI-compatible Chat
// Completions, which grounding models are called over.
func compatible() (llm.Provider, error) {
	p, ok := llm.ProviderNamed("openai")
	if !ok || p.Grounder == nil || p.Vision == nil {
		return llm.Provider{}, fmt.Errorf("%s needs the openai provider, which this binary does not link in", config.Var("GroundingModel"))
	}
	return p, nil
}

// newGrounder builds the optional grounding model.
func newGrounder(c config.Config) (llm.Grounder, error) {
	if c.GroundingModel == "" {
		return nil, nil
	}
	lc, err := groundingConfig(c)
	if err != nil {
		return nil, err
	}
	p, err := compatible()
	if err != nil {
		return nil, err
	}
	return p.Grounder(lc)
}

// groundingConfig is the model configuration of the grounding model:
// OpenAI-compatible Chat Completions, on its own endpoint when one is given.
func groundingConfig(c config.Config) (llm.Config, error) {
	provider := c.Provider
	if provider != "gemini" || c.GroundingBaseURL != "" {
		provider = "openai" // gemini: its OpenAI-compatible endpoint
	}
	lc, err := llmConfig(c, llm.AdapterGeneric, provider, c.GroundingModel)
	if err != nil {
		return llm.Config{}, err
	}
	lc.Vars = modelVars(config.Var("GroundingModel"), config.Var("GroundingAPIKey"), config.Var("GroundingBaseURL"))
	if c.GroundingBaseURL != "" {
		lc.BaseURL = c.GroundingBaseURL
	}
	if c.GroundingAPIKey != "" {
		lc.APIKey = c.GroundingAPIKey
	}
	return lc, nil
}

// visionModels is the plain-vision service and the name of the model that locates.
type visionModels struct {
	seer     *vision.Service
	locateBy string
}

// newVision builds the plain-vision service of gui_locate, gui_query,
// gui_assert, gui_wait_for and `target`: the main model (Anthropic Messages
// or OpenAI-compatible Chat Completions), and the grounding model for
// locating when one is configured. It returns an error saying why there is
// none.
func newVision(c config.Config) (visionModels, error) {
	if !modelConfigured(c) {
		return visionModels{}, fmt.Errorf("no model configured: set %s", config.Vars("Provider", "Model", "APIKey"))
	}
	adapter := adapterName(c)
	if llm.RuleFor(adapter, c.Model).NoVision {
		return visionModels{}, fmt.Errorf("the model %s speaks only its computer tool, not plain vision: use a chat model (e.g. %s) for the vision tools", c.Model, "gpt-5.5")
	}
	lc, err := llmConfig(c, adapter, c.Provider, c.Model)
	if err != nil {
		return visionModels{}, err
	}
	p, ok := llm.ProviderNamed(c.Provider)
	if !ok || p.Vision == nil {
		return visionModels{}, fmt.Errorf("provider %s has no plain-vision model", c.Provider)
	}
	main, err := p.Vision(lc)
	if err != nil {
		return visionModels{}, err
	}
	vm := visionModels{locateBy: c.Model}
	var ground vision.Model
	if c.GroundingModel != "" {
		gc, err := groundingConfig(c)
		if err != nil {
			return visionModels{}, fmt.Errorf("%s: %w", config.Var("GroundingModel"), err)
		}
		cp, err := compatible()
		if err != nil {
			return visionModels{}, err
		}
		if ground, err = cp.Vision(gc); err != nil {
			return visionModels{}, fmt.Errorf("%s: %w", config.Var("GroundingModel"), err)
		}
		vm.locateBy = c.GroundingModel
	}
	if vm.seer, err = vision.NewService(main, ground); err != nil {
		return visionModels{}, err
	}
	return vm, nil
}

// deviceOf is what the configured backend's screen is, for the model's
// system prompt: a desktop (""), a browser tab or a phone.
func deviceOf(c config.Config) string {
	switch b := platform.Backend(c.Backend); {
	case b == platform.Browser:
		return llm.DeviceBrowser
	case b.Phone():
		return llm.DevicePhone
	}
	return ""
}
