package openai

import (
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/llm"
)

// TestSystemPromptSaysWhatTheScreenIs: on a phone the generic adapter's
// system prompt speaks of taps, swipes and the phone's keys; on a browser
// of one page; on a desktop of neither.
func TestSystemPromptSaysWhatTheScreenIs(t *testing.T) {
	for _, c := range []struct {
		device    string
		want, not []string
	}{
		{"", nil, []string{"touch screen", "web page"}},
		{llm.DevicePhone, []string{"touch screen", "XF86Back", "XF86HomePage", "swipe"}, []string{"web page"}},
		{llm.DeviceBrowser, []string{"web page", "no address bar"}, []string{"touch screen"}},
	} {
		a, err := NewGeneric(llm.Config{Provider: "openai", Model: "gpt-4o", APIKey: "k", Device: c.device})
		if err != nil {
			t.Fatal(err)
		}
		system := a.(*Generic).system
		for _, w := range c.want {
			if !strings.Contains(system, w) {
				t.Errorf("device %q: the system prompt does not say %q", c.device, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(system, n) {
				t.Errorf("device %q: the system prompt says %q", c.device, n)
			}
		}
	}
}
