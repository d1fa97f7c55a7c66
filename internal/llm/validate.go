package llm

import (
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

// ParseActions parses a model's raw actions, whose numbers are in p's
// convention, with action.ParseModelAll; any problem is an error wrapping
// ErrBadOutput that names each bad action ("actions[1] (click): ...").
func ParseActions(raws []action.Raw, p geom.Profile) ([]action.Action, error) {
	acts, err := action.ParseModelAll(raws, p.Space())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadOutput, err)
	}
	return acts, nil
}

// ValidateDecision checks d's status, that a continuing decision has actions,
// and each action (action.Action.Validate). Errors wrap ErrBadOutput.
func ValidateDecision(d *Decision) error {
	switch d.Status {
	case Continue, Done, Blocked, Failed:
	default:
		return fmt.Errorf("%w: status %q is not one of continue, done, blocked, failed", ErrBadOutput, d.Status)
	}
	if d.Status == Continue && len(d.Actions) == 0 {
		return fmt.Errorf("%w: status is continue but there are no actions: give at least one action, or status done/blocked/failed", ErrBadOutput)
	}
	var probs []string
	for i, a := range d.Actions {
		if err := a.Validate(); err != nil {
			probs = append(probs, fmt.Sprintf("actions[%d] (%s): %v", i, a.Kind, err))
		}
	}
	if err := action.CheckAsks(d.Actions); err != nil {
		probs = append(probs, err.Error())
	}
	if len(probs) > 0 {
		return fmt.Errorf("%w: %s", ErrBadOutput, strings.Join(probs, "; "))
	}
	return nil
}
