package operate

import (
	"context"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
)

// TypeMode is how a type action treats the text already in the field.
type TypeMode string

// The type modes.
const (
	TypeAtCaret TypeMode = ""        // type at the caret (gui_type mode "type")
	Replace     TypeMode = "replace" // select all of the field's text, then type over it
	Append      TypeMode = "append"  // go to the end of the field's text, then type
)

// ParseTypeMode reads gui_type's and a flow step's mode ("" and "type" type
// at the caret).
func ParseTypeMode(s string) (TypeMode, error) {
	switch s {
	case "", "type":
		return TypeAtCaret, nil
	case string(Replace):
		return Replace, nil
	case string(Append):
		return Append, nil
	}
	return "", fmt.Errorf("unknown mode %q: use replace, append or type", s)
}

// PlatformPhone is Options.Platform on a touch backend (desktop.Touch).
const PlatformPhone = "phone"

// FieldKeys are the combinations pressed, in order, before typing in mode
// on platform ("darwin", "windows", "linux"..., PlatformPhone).
//
// Replace does not press ctrl+a: in Tk entries and in Emacs-style key themes
// (GTK's, Qt's emacs scheme) ctrl+a moves to the line start, so typing
// "flow 42" over "old text" left "flow 42old text". Instead it goes to the
// start and selects to the end with keys every toolkit reads the same way:
// Home and shift+End (the line, which is all of a one-line field: Tk, GTK,
// Qt's QLineEdit, which ignores ctrl+Home, Chromium, Windows edit controls),
// then ctrl+Home and ctrl+shift+End (the whole text of a multi-line field;
// ignored by the one-line fields that do not know them). On macOS, where Home
// and End scroll instead of moving the caret, cmd+a selects all in Cocoa, Qt,
// Tk and Chromium alike.
//
// Append goes to the end the same way: End, then ctrl+End (cmd+Down on macOS).
//
// On a phone (PlatformPhone) Home is the phone's Home button, so replace
// selects all with ctrl+a (Android 13 and later, HarmonyOS) and append
// presses End alone (a text field's on Android and HarmonyOS; ctrl+End
// needs Android 13).
func FieldKeys(mode TypeMode, platform string) [][]desktop.Key {
	var combos []string
	switch {
	case mode == Replace && platform == PlatformPhone:
		combos = []string{"ctrl+a"}
	case mode == Append && platform == PlatformPhone:
		combos = []string{"End"}
	case mode == Replace && platform == "darwin":
		combos = []string{"cmd+a"}
	case mode == Replace:
		combos = []string{"Home", "ctrl+Home", "shift+End", "ctrl+shift+End"}
	case mode == Append && platform == "darwin":
		combos = []string{"cmd+Down"}
	case mode == Append:
		combos = []string{"End", "ctrl+End"}
	}
	out := make([][]desktop.Key, len(combos))
	for i, c := range combos {
		k, err := desktop.ParseCombo(c)
		if err != nil {
			panic("operate: field keys: " + err.Error())
		}
		out[i] = k
	}
	return out
}

// prepareField presses the type mode's keys before a type action; each is
// vetted like any combination and traced as a key action.
func (e *Executor) prepareField(ctx context.Context, op Op) ([]action.Trace, error) {
	var out []action.Trace
	for _, keys := range FieldKeys(op.Mode, e.o.Platform) {
		t := action.Trace{Action: action.Action{Kind: action.KeyPress, Keys: keys}}
		start := time.Now()
		if err := e.vet(ctx, op, keys); err != nil {
			t.Outcome, t.Error = action.OutcomeNotExecuted, err.Error()
			return append(out, t), fmt.Errorf("%s before typing: %w", ComboText(keys), err)
		}
		err := e.in.Hotkey(ctx, keys)
		t.Millis = time.Since(start).Milliseconds()
		if err != nil {
			t.Outcome, t.Error = action.OutcomeFailed, err.Error()
			return append(out, t), fmt.Errorf("%s before typing: %w", ComboText(keys), err)
		}
		t.Outcome = action.OutcomeOK
		out = append(out, t)
	}
	return out, nil
}
