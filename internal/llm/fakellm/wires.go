package fakellm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/geom"
)

// Fake is a running fake server of one wire format.
type Fake struct {
	// BaseURL is what to configure an adapter with (GUI_AGENT_BASE_URL).
	BaseURL string
	*Core
	Close func()
}

// wires start the fake of each wire format an adapter registers
// (llm.AdapterSpec.Wire), for a model whose convention is profile.
var wires = map[string]func(brain Brain, profile geom.Profile) Fake{
	"chat": func(b Brain, p geom.Profile) Fake {
		s := NewChatServer(b, ChatOptions{Profile: p})
		return Fake{s.URL, s.Core, s.Close}
	},
	"uitars": func(b Brain, p geom.Profile) Fake {
		s := NewChatServer(b, ChatOptions{Format: ChatUITARS, Profile: p})
		return Fake{s.URL, s.Core, s.Close}
	},
	"anthropic": func(b Brain, _ geom.Profile) Fake {
		s := NewAnthropicServer(b)
		return Fake{s.URL, s.Core, s.Close}
	},
	"responses": func(b Brain, _ geom.Profile) Fake {
		s := NewResponsesServer(b)
		return Fake{s.URL, s.Core, s.Close}
	},
	"gemini": func(b Brain, _ geom.Profile) Fake {
		s := NewGeminiServer(b)
		return Fake{s.URL, s.Core, s.Close}
	},
}

// Start starts the fake of wire (an llm.AdapterSpec.Wire) answering with
// brain, for a model whose coordinate convention is profile.
func Start(wire string, brain Brain, profile geom.Profile) (Fake, error) {
	start, ok := wires[wire]
	if !ok {
		var names []string
		for n := range wires {
			names = append(names, n)
		}
		slices.Sort(names)
		return Fake{}, fmt.Errorf("fakellm has no %q wire: use one of %s", wire, strings.Join(names, ", "))
	}
	return start(brain, profile), nil
}
