package llm

import (
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

func TestProfileForChoosesOnce(t *testing.T) {
	for _, tc := range []struct {
		adapter, model, mode string
		want                 string
		divisor              float64
		maxEdge              int
	}{
		// A Claude model whose name does not start with "claude" (a proxy's
		// alias) still gets the Anthropic tool's 1568 px cap.
		{AdapterAnthropic, "eu.anthropic.sonnet-4-5-v1", "", "anthropic", 0, 1568},
		{AdapterAnthropic, "claude-sonnet-4-5", "normalized-1000", "anthropic", 0, 1568},
		{AdapterOpenAIComputer, "my-cua", "", "openai-computer", 0, 0},
		{AdapterUITARS, "some-gui-model", "", "ui-tars-1.5", 0, 0},
		{AdapterUITARS, "ui-tars-72b-dpo", "", "ui-tars", 1000, 0},
		{AdapterGeneric, "gemini-2.5-pro", "image-absolute", "gemini", 1000, 0}, // known models keep their row
		{AdapterGeneric, "local-vlm", "normalized-1000", "default", 1000, 0},    // unknown ones take the mode
		{AdapterGeneric, "local-vlm", "", "default", 0, 0},
	} {
		p, err := ProfileFor(tc.adapter, tc.model, tc.mode)
		if err != nil || p.Name != tc.want || p.Divisor != tc.divisor || p.MaxLongEdge != tc.maxEdge {
			t.Errorf("ProfileFor(%s, %s, %q) = %+v, %v; want row %s, divisor %g, max edge %d",
				tc.adapter, tc.model, tc.mode, p, err, tc.want, tc.divisor, tc.maxEdge)
		}
	}
	if _, err := ProfileFor(AdapterGeneric, "local-vlm", "screen"); err == nil {
		t.Error("screen accepted as a model coordinate mode")
	}
	given := geom.Profile{Name: "given"}
	if p := (Config{Model: "claude-x", Profile: &given}).ProfileOf(AdapterAnthropic); p.Name != "given" {
		t.Errorf("Config.Profile not honoured: %+v", p)
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.Timeout != DefaultTimeout || c.MaxTokens != DefaultMaxTokens || c.KeepImages != DefaultKeepImages {
		t.Fatalf("defaults %+v", c)
	}
	c = Config{Timeout: time.Second, MaxTokens: 5, KeepImages: 1}.WithDefaults()
	if c.Timeout != time.Second || c.MaxTokens != 5 || c.KeepImages != 1 {
		t.Fatalf("set values replaced: %+v", c)
	}
}
