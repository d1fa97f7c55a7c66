package flow

import (
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/safety"
)

// replaceByActor replaces the focused text field's text through the
// platform's element actor (desktop.ElementActor: AT-SPI EditableText, UIA
// ValuePattern, a phone's set-value), as gui_type does, and reads it back:
// a backend without the keys that select a field's text (iOS through
// WebDriverAgent has no Home or End) still replaces it. done is false when
// there is no actor or focused field, or the text did not read back (the
// keys are used then); a password field is set and not read.
func (ru *run) replaceByActor(text string, sr *StepResult) (done bool, err error) {
	actor, ok := desktop.ActorOf(ru.r.o.Screen)
	if !ok {
		return false, nil
	}
	var field desktop.Element
	deadline := time.Now().Add(time.Second)
	for field.Handle == "" {
		if snap := ru.snapshot(); snap != nil {
			for _, e := range snap.Elements {
				if e.States.Focused && e.States.Editable && e.Handle != "" {
					field = e
				}
			}
		}
		if field.Handle == "" {
			if time.Now().After(deadline) {
				return false, nil
			}
			if err := sleep(ru.ctx, 50*time.Millisecond); err != nil {
				return false, err
			}
		}
	}
	if g := ru.r.o.Input.Gate; g != nil {
		if err := g(ru.ctx); err != nil {
			return false, err
		}
	}
	start := time.Now()
	if err := actor.SetText(ru.ctx, field.Handle, text); err != nil {
		return false, nil
	}
	if !field.States.Protected {
		if got, err := actor.Text(ru.ctx, field.Handle); err != nil || got != text {
			return false, nil
		}
	}
	sr.Actions = append(sr.Actions, action.Trace{Action: action.Action{Kind: action.TypeText, Text: safety.MaskText(text)},
		LocatedBy: operate.ByAccessibility, Outcome: action.OutcomeOK, Millis: time.Since(start).Milliseconds()})
	return true, nil
}
