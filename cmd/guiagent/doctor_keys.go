package main

import (
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/llm"
)

// keySource says where the key of provider p's models comes from: the
// variable's name (never its value), or "no key".
func keySource(c config.Config, p string) string {
	cr := c.CredentialFor(p)
	switch {
	case cr.APIKey != "":
		return "API key from " + cr.KeyVar
	case cr.BaseURL != "":
		return "no API key (base URL from " + cr.BaseURLVar + ")"
	}
	return "no API key"
}

// keyVars lists the variables provider p's key is read from, in order.
func keyVars(c config.Config, p string) string {
	pr, _ := llm.ProviderNamed(p)
	vars := append([]string{config.ProviderKeyVar(p)}, pr.KeyEnv...)
	if p == c.Provider {
		vars = append([]string{config.Var("APIKey")}, vars...)
	}
	return strings.Join(vars, ", ")
}

// checkProviderKeys says, for every registered provider, which variable
// its models' key comes from (the configured model's, and any guiagent eval
// --model names), names only.
func checkProviderKeys(c config.Config, add func(level, name, detail, fix string)) {
	var have, missing []string
	for _, p := range llm.ProviderNames() {
		cr := c.CredentialFor(p)
		if cr.APIKey == "" && cr.BaseURL == "" {
			missing = append(missing, p)
			continue
		}
		s := fmt.Sprintf("%s: %s", p, keySource(c, p))
		if cr.BaseURL != "" && cr.APIKey != "" {
			s += ", base URL from " + cr.BaseURLVar
		}
		have = append(have, s)
	}
	detail := strings.Join(have, "; ")
	if len(missing) > 0 {
		if detail != "" {
			detail += "; "
		}
		detail += "no key for " + strings.Join(missing, ", ")
	}
	fix := ""
	if len(missing) > 0 {
		var sets []string
		for _, p := range missing {
			sets = append(sets, p+"'s key in one of "+keyVars(c, p))
		}
		fix = "to run models of these providers (guiagent eval --model PROVIDER:MODEL), set " + strings.Join(sets, "; ")
	}
	add("info", "provider keys", detail, fix)
}
