package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/guiagent/guiagent/internal/llm"
)

// Credentials per provider. Each provider of the llm registry has its own
// key and endpoint, so that models of several providers can run side by
// side (guiagent eval --model anthropic:... --model openai:...), each with
// its own:
//
//  1. GUI_AGENT_<PROVIDER>_API_KEY and GUI_AGENT_<PROVIDER>_BASE_URL
//     (ProviderKeyVar, ProviderBaseURLVar: the names come from the
//     registry's provider names, not a list of their own);
//  2. else the provider SDK's own variables (llm.Provider.KeyEnv and
//     BaseURLEnv: ANTHROPIC_API_KEY, OPENAI_API_KEY, GOOGLE_API_KEY or
//     GEMINI_API_KEY, ANTHROPIC_BASE_URL, OPENAI_BASE_URL).
//
// GUI_AGENT_API_KEY and GUI_AGENT_BASE_URL (or the settings file's api_key
// and base_url) are the configured provider's (GUI_AGENT_PROVIDER) and win
// for it: they are what the configuration names for that provider. They are
// never sent to another provider, and with no GUI_AGENT_PROVIDER they serve
// none: a key is not guessed to belong to whichever provider a model names.

// Credential is one provider's API key and endpoint as guiagent found them,
// with the variables they came from (names only, for doctor and errors).
type Credential struct {
	APIKey, BaseURL    string
	KeyVar, BaseURLVar string // "" = not set
}

// Credentials are the credentials found for each registered provider, by
// provider name (a provider with none is absent).
type Credentials map[string]Credential

// ProviderKeyVar is the variable of provider p's own API key:
// GUI_AGENT_ANTHROPIC_API_KEY for anthropic.
func ProviderKeyVar(p string) string { return EnvPrefix + envWord(p) + "_API_KEY" }

// ProviderBaseURLVar is the variable of provider p's own endpoint:
// GUI_AGENT_OPENAI_BASE_URL for openai.
func ProviderBaseURLVar(p string) string { return EnvPrefix + envWord(p) + "_BASE_URL" }

// envWord is a provider name as a part of a variable name (upper case,
// anything but letters and digits as _).
func envWord(p string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, p)
}

// ProviderVars lists every per-provider variable config reads, for each
// registered provider: its own key and base URL, then its SDK's.
func ProviderVars() []string {
	var out []string
	for _, name := range llm.ProviderNames() {
		p, _ := llm.ProviderNamed(name)
		out = append(out, ProviderKeyVar(name), ProviderBaseURLVar(name))
		out = append(out, p.KeyEnv...)
		out = append(out, p.BaseURLEnv...)
	}
	return out
}

// readCredentials reads every registered provider's key and endpoint
// through getenv. A base URL that is not an http(s) URL is an error naming
// its variable.
func readCredentials(getenv func(string) string) (Credentials, error) {
	out := Credentials{}
	var errs []string
	for _, name := range llm.ProviderNames() {
		p, _ := llm.ProviderNamed(name)
		var cr Credential
		cr.APIKey, cr.KeyVar = firstSet(getenv, append([]string{ProviderKeyVar(name)}, p.KeyEnv...))
		cr.BaseURL, cr.BaseURLVar = firstSet(getenv, append([]string{ProviderBaseURLVar(name)}, p.BaseURLEnv...))
		if cr.BaseURL != "" {
			if v := cr.BaseURL; !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") || strings.ContainsFunc(v, unicode.IsControl) || strings.ContainsAny(v, " \t") {
				errs = append(errs, fmt.Sprintf("%s=%q: want an http:// or https:// URL without spaces (provider %s's endpoint)", cr.BaseURLVar, v, name))
			}
		}
		if cr != (Credential{}) {
			out[name] = cr
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

func firstSet(getenv func(string) string, vars []string) (value, name string) {
	for _, v := range vars {
		if s := strings.TrimSpace(getenv(v)); s != "" {
			return s, v
		}
	}
	return "", ""
}

// CredentialFor is provider p's key and endpoint: for the configured
// provider, APIKey and BaseURL when set (GUI_AGENT_API_KEY,
// GUI_AGENT_BASE_URL, the settings file, a settings change), each
// otherwise from p's own variables, then its SDK's; for any other provider
// only the latter.
func (c Config) CredentialFor(p string) Credential {
	cr := c.Credentials[p]
	if p == "" || p != c.Provider {
		return cr
	}
	if c.APIKey != "" && c.APIKey != cr.APIKey {
		cr.APIKey, cr.KeyVar = c.APIKey, c.layerOf("APIKey")
	}
	if c.BaseURL != "" && c.BaseURL != cr.BaseURL {
		cr.BaseURL, cr.BaseURLVar = c.BaseURL, c.layerOf("BaseURL")
	}
	return cr
}

// layerOf names where knob name's value came from, for messages: its
// variable, or the settings file, or a setting changed while running.
func (c Config) layerOf(name string) string {
	k, _ := knobNamed(name)
	switch c.Sources.Of(k.key()) {
	case SourceFile:
		return "the settings file (" + c.SettingsFile + ")"
	case SourceEnv, SourceDefault:
		return Var(name)
	}
	return "a setting (" + Var(name) + ")"
}

// fillMainCredential gives the configured provider the key and endpoint of
// its own variables, or its SDK's, when GUI_AGENT_API_KEY and
// GUI_AGENT_BASE_URL (and the settings file) leave them empty.
func (c *Config) fillMainCredential() {
	if c.Provider == "" {
		return
	}
	cr := c.Credentials[strings.ToLower(c.Provider)]
	if c.APIKey == "" {
		c.APIKey = cr.APIKey
	}
	if c.BaseURL == "" {
		c.BaseURL = cr.BaseURL
	}
}

// WithModel is c with provider p's model m as the main model, with p's key
// and endpoint (CredentialFor: never another provider's). A key it replaces
// stays among Secrets: it was read, so it is still scrubbed.
func (c Config) WithModel(p, m string) Config {
	cr := c.CredentialFor(p)
	if c.APIKey != "" && c.APIKey != cr.APIKey {
		c.replaced = append(slices.Clip(c.replaced), c.APIKey)
	}
	c.Provider, c.Model, c.APIKey, c.BaseURL = p, m, cr.APIKey, cr.BaseURL
	return c
}

// credentialSecrets are the keys of Credentials and those WithModel
// replaced, for Secrets.
func (c Config) credentialSecrets() []string {
	out := slices.Clone(c.replaced)
	for _, cr := range c.Credentials {
		if cr.APIKey != "" {
			out = append(out, cr.APIKey)
		}
	}
	return out
}
