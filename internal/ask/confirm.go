package ask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
)

// KeysQuestion is the confirm asked before who ("the agent", "a tool call
// (gui_hotkey)", "a flow step") presses keys, a combination that
// GUI_AGENT_CONFIRM_HOTKEYS lists as combo.
func KeysQuestion(who, keys, combo string) Question {
	return Question{Kind: action.AskConfirm,
		Text: fmt.Sprintf("%s wants to press %s (%s lists %s). Allow it?", who, keys, config.Var("ConfirmHotkeys"), combo)}
}

// Confirmer says which key combinations need a person's yes
// (safety.KeyPolicy.NeedsConfirm).
type Confirmer interface {
	NeedsConfirm(keys []desktop.Key) (combo string, ok bool)
}

// ConfirmKeys asks, when p says keys need a yes, whether who may press them,
// through b and chs for at most timeout. It returns nil when no yes is
// needed or the person said yes; otherwise an error says that the keys were
// not sent and why: a no, a decline or cancel, no answer in time, or nobody
// to ask.
func ConfirmKeys(ctx context.Context, b *Broker, p Confirmer, keys []desktop.Key, who string, timeout time.Duration, chs ...Channel) error {
	combo, ok := p.NeedsConfirm(keys)
	if !ok {
		return nil
	}
	what := desktop.ComboString(keys)
	q := KeysQuestion(who, what, combo)
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ans, err := Ask(actx, b, q, chs...)
	switch {
	case errors.Is(err, ErrNoChannel):
		return fmt.Errorf("%s needs a person's yes (%s), and nobody can be asked: the MCP client does not support elicitation and no dashboard is served; serve with --http for the dashboard, or remove it from %[2]s", what, config.Var("ConfirmHotkeys"))
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return fmt.Errorf("%s was not sent: nobody confirmed it within %s (%s)", what, timeout, config.Var("AskTimeout"))
	case err != nil:
		return fmt.Errorf("%s was not sent: asking for confirmation failed: %w", what, err)
	case ans.Outcome != Accept:
		return fmt.Errorf("%s was not sent: the user %sd the confirmation", what, ans.Outcome)
	case !ans.Approved():
		return fmt.Errorf("%s was not sent: the user did not allow it (answered from the %s)", what, ans.By)
	}
	return nil
}
