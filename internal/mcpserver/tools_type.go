package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/safety"
)

// TypeArgs are gui_type's arguments.
type TypeArgs struct {
	Text    string `json:"text" jsonschema:"typed exactly, any Unicode; keys go to gui_press_key"`
	Target  string `json:"target,omitempty" jsonschema:"the field, clicked first; default: the focused one"`
	Ref     string `json:"ref,omitempty"`
	Mode    string `json:"mode,omitempty" jsonschema:"replace: the field's text; append: at its end; type (default): at the caret"`
	Display string `json:"display,omitempty"`
}

func (s *Server) typeTool() toolDef {
	return withResult(newTool(s, GroupInput, "gui_type", "Type text",
		"Type text into the focused element exactly as given: any language, symbols, emoji.",
		changesDesk, func(sc *jsonschema.Schema) {
			prop(sc, "text").MinLength = new(1)
			enum(sc, "mode", "replace", "append", "type")
		},
		func(ctx context.Context, c *call, in TypeArgs) (*mcp.CallToolResult, error) {
			return s.typeText(ctx, c, in)
		}), inputResultSchema)
}

func (s *Server) typeText(ctx context.Context, c *call, in TypeArgs) (*mcp.CallToolResult, error) {
	if in.Text == "" {
		return nil, fmt.Errorf("text is empty: give the text to type")
	}
	a, err := s.parse(action.Raw{Kind: action.TypeText, Text: in.Text}, "")
	if err != nil {
		return nil, err
	}
	mode, err := operate.ParseTypeMode(in.Mode)
	if err != nil {
		return nil, err
	}
	d, _, err := s.display(ctx, in.Display)
	if err != nil {
		return nil, err
	}
	clicked, err := s.clickField(ctx, c, in)
	if err != nil {
		return nil, err
	}
	if clicked != nil {
		d = clicked.Display
	}
	var field desktop.Element
	fieldOK, fallback := false, ""
	if mode == operate.Replace { // the field is looked up only to replace its text
		field, fieldOK = s.focusedField(ctx, d, clicked)
	}
	if fieldOK {
		done, how, err := s.replaceByAccessibility(ctx, c, d, field, in.Text)
		if err != nil {
			return nil, err
		}
		if done {
			return s.done(ctx, c, d, s.inputResult(c, clicked, d), "%s%s%s", note(clicked), map[bool]string{true: "clicked it, ", false: ""}[clicked != nil], how)
		}
		fallback = " (" + how + ")" // why the keys are used instead
	}
	// The typed text may be a password: the record keeps its length only, as the audit does.
	if _, err := s.act(ctx, c, operate.Op{Action: a, Mode: mode, Display: in.Display}, "type", func(t *action.Trace) {
		if t.Action.Kind == action.TypeText {
			t.Action.Text = safety.MaskText(in.Text)
		}
	}); err != nil {
		return nil, err
	}
	how := map[operate.TypeMode]string{operate.Replace: "clicked it, selected its text and ", operate.Append: "clicked it, went to the end and ", operate.TypeAtCaret: "clicked it and "}[mode]
	if clicked == nil {
		how = map[operate.TypeMode]string{operate.Replace: "selected the field's text and ", operate.Append: "went to the end and "}[mode]
	}
	check := ""
	if mode == operate.Replace {
		check = fallback + "; " + s.verifyField(ctx, d, field, fieldOK, in.Text)
	}
	// The keystrokes are queued, not necessarily consumed: a slow
	// application (notepad under Wine: 30 s for 1500 characters) may
	// still be taking them in, and typing them again would double them.
	return s.done(ctx, c, d, s.inputResult(c, clicked, d), "%s%styped %d characters%s; %s", note(clicked), how, len([]rune(in.Text)), check, typingMayLag)
}

// typingMayLag is gui_type's note that the text may still be arriving.
const typingMayLag = "a slow application may still be receiving them: check the screen before acting on the text, and do not type it again"

// clickField clicks gui_type's field when a target or ref names it, and
// returns where (nil when it names none: the focused element is typed in).
func (s *Server) clickField(ctx context.Context, c *call, in TypeArgs) (*operate.Place, error) {
	words, ref := strings.TrimSpace(in.Target), strings.TrimSpace(in.Ref)
	op := operate.Op{Action: action.Action{Kind: action.Click, Target: words}, Display: in.Display}
	verb := "click on " + fmt.Sprintf("%q", words)
	switch {
	case words != "" && ref != "":
		return nil, errors.New("give either target or ref, not both")
	case ref != "":
		p, err := s.refPoint(ctx, c, ref)
		if err != nil {
			return nil, err
		}
		op.At, op.Action.Target, verb = p.place, "", "click on "+ref
		op.Action.At = &action.Point{Space: geom.SpaceImage, X: p.place.Image.X, Y: p.place.Image.Y}
	case words == "":
		return nil, nil
	}
	res, err := s.act(ctx, c, op, verb)
	if err != nil {
		return nil, err
	}
	return res.At, nil
}

// focusedField is the focused text field on display d, as the element
// source sees it (false when there is none, or no element source). After a
// click it waits a little for the focus to reach the field clicked.
func (s *Server) focusedField(ctx context.Context, d geom.Display, clicked *operate.Place) (desktop.Element, bool) {
	if s.elements == nil {
		return desktop.Element{}, false
	}
	deadline := time.Now().Add(time.Second)
	for {
		snap, err := s.elements.Elements(ctx, desktop.ElementQuery{Bounds: []geom.Rect{d.Bounds}, MaxElements: desktop.MaxElementsCap})
		if err == nil {
			for _, e := range snap.Elements {
				if e.States.Focused && e.States.Editable && (clicked == nil || e.Box.Contains(clicked.Global)) {
					return e, true
				}
			}
		}
		if err != nil || clicked == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return desktop.Element{}, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replaceByAccessibility replaces field's text through the platform's
// EditableText (desktop.ElementActor) and reads it back. done is false when
// the field or the platform cannot (how then says why, and the keys are
// used); an error is the kill switch.
func (s *Server) replaceByAccessibility(ctx context.Context, c *call, d geom.Display, field desktop.Element, text string) (done bool, how string, err error) {
	actor, ok := desktop.ActorOf(s.screen)
	if !ok || field.Handle == "" {
		return false, "the platform cannot set the field's text", nil
	}
	if s.input.Gate != nil {
		if err := s.input.Gate(ctx); err != nil {
			return false, "", err
		}
	}
	start := time.Now()
	if err := actor.SetText(ctx, field.Handle, text); err != nil {
		return false, "setting the text through the accessibility interface failed: " + err.Error(), nil
	}
	how = fmt.Sprintf("set the text of %s %q (%d characters) through the accessibility interface (EditableText)", field.Role, field.Name, len([]rune(text)))
	switch verified, why := s.readBack(ctx, actor, field, text); {
	case verified:
		how += ", verified by reading it back"
	case field.States.Protected:
		how += "; " + why
	default:
		return false, how + ", but " + why + ", so it was typed instead", nil
	}
	tr := action.Trace{Action: action.Action{Kind: action.TypeText, Text: safety.MaskText(text)}, LocatedBy: operate.ByAccessibility,
		Outcome: action.OutcomeOK, Millis: time.Since(start).Milliseconds()}
	s.noteAction(c, tr, d, nil, nil)
	return true, how, nil
}

// readBack waits (up to 1.5 s: typed keys may still be arriving) until the
// field reads text, and says so, or why it could not tell.
func (s *Server) readBack(ctx context.Context, actor desktop.ElementActor, field desktop.Element, text string) (bool, string) {
	if field.States.Protected {
		return false, "not verified: a password field is never read"
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	for {
		got, err := actor.Text(ctx, field.Handle)
		if err != nil {
			return false, "not verified: reading the field back failed: " + err.Error()
		}
		if got == text {
			return true, ""
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false, fmt.Sprintf("warning: the field reads %d characters that are not the text given", len([]rune(got)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// verifyField says whether the keys replaced the field's text: read back
// through the accessibility interface when the field is readable, else why
// it could not be verified.
func (s *Server) verifyField(ctx context.Context, d geom.Display, field desktop.Element, ok bool, text string) string {
	if !ok {
		field, ok = s.focusedField(ctx, d, nil)
	}
	actor, can := desktop.ActorOf(s.screen)
	switch {
	case s.elements == nil:
		return "not verified: this desktop has no accessibility tree to read the field from"
	case !ok:
		return "not verified: no focused text field is in the accessibility tree (the application may expose none, as Tk does)"
	case !can:
		return "not verified: the platform cannot read the field's text"
	}
	if verified, why := s.readBack(ctx, actor, field, text); !verified {
		return why
	}
	return "verified by reading the field back"
}
