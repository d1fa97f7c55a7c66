package openai

import (
	"errors"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

// TestModelAnswerWithControlCharacterKeyIsRefused holds hole 1 of issue 9 for
// a model's answer: a key named by the control character U+0008 (which X
// would receive as BackSpace, making ctrl+alt+BackSpace) is a bad answer.
func TestModelAnswerWithControlCharacterKeyIsRefused(t *testing.T) {
	for _, raw := range []string{
		`{"actions":[{"action":"key","keys":["ctrl","alt","\b"]}],"status":"continue"}`,
		`{"actions":[{"action":"key","keys":["ctrl+alt+\u0008"]}],"status":"continue"}`,
		`{"actions":[{"action":"click","x":1,"y":2,"keys":["alt","\u007f"]}],"status":"continue"}`,
	} {
		_, _, err := step(t, fakellm.Script(fakellm.Fixed(fakellm.Reply{Raw: raw})), llm.Config{})
		if !errors.Is(err, llm.ErrBadOutput) || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%s: err = %v, want ErrBadOutput naming the control character", raw, err)
		}
	}
}
