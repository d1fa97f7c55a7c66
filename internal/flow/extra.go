package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/vision"
)

// Step kinds that flows built in Go use (the Midscene translation,
// internal/midscene); a YAML flow does not name them (they are not in
// Kinds). Each takes its element from Target, like click.
const (
	DoubleClick  Kind = "double_click"   // locate, then double-click
	RightClick   Kind = "right_click"    // locate, then click with the right button (a long press on a phone)
	Hover        Kind = "hover"          // locate, then move the pointer there
	Clear        Kind = "clear"          // locate, click, select the field's text and delete it
	ScrollToEdge Kind = "scroll_to_edge" // scroll in Direction (over Target if any) until the screen stops changing
	Navigate     Kind = "navigate"       // the browser goes to the URL in Target (desktop.Navigator)
	Launch       Kind = "launch"         // a phone opens the app id or URL in Target (desktop.Apps)
	StopApp      Kind = "stop_app"       // a phone stops the app whose id is Target (desktop.Apps)
	Evaluate     Kind = "evaluate"       // the page evaluates the JavaScript expression in Text (desktop.Evaluator); Value is its JSON
	Record       Kind = "record"         // a screenshot into the run's record, titled Target, with Text as its note
	SetCookies   Kind = "set_cookies"    // the browser takes Extra.Cookies (desktop.CookieSetter); Target names where they came from
	// Group starts a named group of steps (Target is its name): a failed
	// step of the group that has ContinueOnError skips the rest of the
	// group and the flow goes on with the next group; a failed step
	// without it ends the flow, as everywhere.
	Group Kind = "group"
)

// Extra holds the options of a step that only flows built in Go set; nil
// for every step a YAML flow parses.
type Extra struct {
	// NoCache makes the step neither read nor write the cache.
	NoCache bool
	// ErrorMessage replaces the statement in a failed assert's error.
	ErrorMessage string
	// Navigate: Wait says when the page is loaded, Timeout bounds the
	// navigation (0: the backend's default), and with IdleErrorOK a
	// navigation that did not reach Wait in time passes with a note (the
	// page is shown as far as it got).
	Wait        desktop.Wait
	Timeout     time.Duration
	IdleErrorOK bool
	// Cookies are set_cookies' cookies, each as the DevTools protocol's
	// CookieParam (name, value, domain or url, path, expires, httpOnly,
	// secure, sameSite), which Puppeteer's cookie files are.
	Cookies []map[string]any
}

// extraStep runs the kinds of this file; ok is false for the others.
func (ru *run) extraStep(st Step, sr *StepResult) (shot *imaging.Shot, err error, ok bool) {
	switch st.Kind {
	case DoubleClick, RightClick, Hover, Clear:
		shot, err = ru.pointerStep(st, sr)
	case ScrollToEdge:
		shot, err = ru.scrollToEdge(st, sr)
	case Navigate:
		err = ru.navigate(st, sr)
	case Launch, StopApp:
		err = ru.launch(st, sr)
	case Evaluate:
		err = ru.evaluate(st, sr)
	case SetCookies:
		err = ru.setCookies(st, sr)
	case Record:
		ru.settle()
		shot, err = ru.shoot()
		sr.Value = st.Text
	case Group:
		sr.Value = st.Target
	default:
		return nil, nil, false
	}
	return shot, err, true
}

// pointerStep locates st.Target and double-clicks, right-clicks, hovers over
// or clears it.
func (ru *run) pointerStep(st Step, sr *StepResult) (*imaging.Shot, error) {
	shot, at, err := ru.locateTarget(st, sr)
	if err != nil {
		return shot, err
	}
	a := action.Action{Kind: action.Click, Target: st.Target, At: imagePoint(at)}
	switch st.Kind {
	case DoubleClick:
		a.Kind = action.DoubleClick
	case RightClick:
		a.Button = desktop.Right
	case Hover:
		a.Kind = action.Move
	}
	if _, err = ru.do(operate.Op{Action: a, At: at}, sr); err != nil || st.Kind != Clear {
		return shot, err
	}
	// Select the field's text as a replace does, then delete it.
	if _, err = ru.do(operate.Op{Action: action.Action{Kind: action.TypeText}, Mode: operate.Replace}, sr); err != nil {
		return shot, err
	}
	keys, _ := desktop.ParseCombo("BackSpace")
	_, err = ru.do(operate.Op{Action: action.Action{Kind: action.KeyPress, Keys: keys}}, sr)
	return shot, err
}

// Bounds of scroll_to_edge: notches per scroll and scrolls at most.
const (
	edgeNotches = 10
	edgeScrolls = 20
)

// scrollToEdge scrolls until two screenshots in a row are the same (the
// content reached its edge), at most edgeScrolls times.
func (ru *run) scrollToEdge(st Step, sr *StepResult) (*imaging.Shot, error) {
	var shot *imaging.Shot
	var at *operate.Place
	if st.Target != "" {
		var err error
		if shot, at, err = ru.locateTarget(st, sr); err != nil {
			return shot, err
		}
	}
	prev, err := ru.r.o.Shots.Thumb(ru.ctx, ru.r.o.Screen, ru.display, ru.display.Bounds)
	if err != nil {
		return shot, err
	}
	for i := 0; i < edgeScrolls; i++ {
		a := action.Action{Kind: action.Scroll, Target: st.Target, Direction: st.Direction, Amount: edgeNotches}
		if at != nil {
			a.At = imagePoint(at)
		}
		if _, err := ru.do(operate.Op{Action: a, At: at}, sr); err != nil {
			return shot, err
		}
		ru.settle()
		cur, err := ru.r.o.Shots.Thumb(ru.ctx, ru.r.o.Screen, ru.display, ru.display.Bounds)
		if err != nil {
			return shot, err
		}
		if imaging.Diff(prev, cur) < 0.001 {
			sr.Value = fmt.Sprintf("the %s edge after %d scrolls", st.Direction, i+1)
			return shot, nil
		}
		prev = cur
	}
	sr.Value = fmt.Sprintf("still moving after %d scrolls of %d notches", edgeScrolls, edgeNotches)
	return shot, nil
}

// navigate has the browser go to st.Target.
func (ru *run) navigate(st Step, sr *StepResult) error {
	nav, ok := desktop.CapabilityOf[desktop.Navigator](ru.r.o.Screen)
	if !ok {
		return errors.New("this desktop has no pages to navigate: run with --backend browser")
	}
	n := desktop.Navigation{URL: st.Target}
	if x := st.Extra; x != nil {
		n.Wait, n.Timeout = x.Wait, x.Timeout
	}
	p, err := nav.Navigate(ru.ctx, n)
	sr.Value = strings.TrimSpace(p.Title + " " + p.URL)
	if err != nil && st.Extra != nil && st.Extra.IdleErrorOK && errors.Is(err, context.DeadlineExceeded) && ru.ctx.Err() == nil {
		sr.Value += fmt.Sprintf(" (did not reach %s in time: going on as it is)", n.Wait)
		return nil
	}
	if err == nil && p.Status >= 400 {
		sr.Value += fmt.Sprintf(" (HTTP %d)", p.Status)
	}
	return err
}

// launch has a phone open an app (by its id) or a URL, or stop an app.
func (ru *run) launch(st Step, sr *StepResult) error {
	apps, ok := desktop.CapabilityOf[desktop.Apps](ru.r.o.Screen)
	if !ok {
		return errors.New("this desktop has no apps to launch: run with --backend android")
	}
	if st.Kind == StopApp {
		sr.Value = "stopped " + st.Target
		return apps.StopApp(ru.ctx, st.Target)
	}
	if strings.Contains(st.Target, "://") {
		sr.Value = "opened " + st.Target
		return apps.OpenURL(ru.ctx, st.Target)
	}
	sr.Value = "launched " + st.Target
	return apps.LaunchApp(ru.ctx, st.Target)
}

// evaluate has the page evaluate st.Text; Value and Data are its JSON.
func (ru *run) evaluate(st Step, sr *StepResult) error {
	ev, ok := desktop.CapabilityOf[desktop.Evaluator](ru.r.o.Screen)
	if !ok {
		return errors.New("this desktop has no page to evaluate JavaScript in: run with --backend browser")
	}
	v, err := ev.Evaluate(ru.ctx, st.Text)
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("the value is not JSON: %w", err)
	}
	sr.Data, sr.Value = b, string(b)
	return nil
}

// LocateData is a locate step's Data: the element's rectangle and centre in
// global logical pixels (CSS pixels on the browser).
type LocateData struct {
	Rect   LocateRect `json:"rect"`
	Center [2]int     `json:"center"`
}

// LocateRect is a rectangle as Midscene writes one.
type LocateRect struct {
	Left   int `json:"left"`
	Top    int `json:"top"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// locateData is box (image pixels of shot) and its placed centre as JSON.
func locateData(shot *imaging.Shot, box vision.Box, at *operate.Place) json.RawMessage {
	f := shot.Frame
	if f.Content.W == 0 || f.Content.H == 0 {
		return nil
	}
	rx, ry := float64(f.Region.W)/float64(f.Content.W), float64(f.Region.H)/float64(f.Content.H)
	l, t := float64(f.Region.X)+box.X1*rx, float64(f.Region.Y)+box.Y1*ry
	d := LocateData{Rect: LocateRect{Left: int(math.Round(l)), Top: int(math.Round(t)),
		Width: int(math.Round((box.X2 - box.X1) * rx)), Height: int(math.Round((box.Y2 - box.Y1) * ry))},
		Center: [2]int{at.Global.X, at.Global.Y}}
	b, _ := json.Marshal(d)
	return b
}

// inGroup reports whether st's failure skips the rest of its group: it has
// ContinueOnError and a Group step came before it.
func (ru *run) inGroup(st Step) bool {
	if !st.ContinueOnError {
		return false
	}
	for _, s := range ru.f.Steps {
		if s.Index >= st.Index {
			return false
		}
		if s.Kind == Group {
			return true
		}
	}
	return false
}

// setCookies gives the browser st.Extra.Cookies.
func (ru *run) setCookies(st Step, sr *StepResult) error {
	cs, ok := desktop.CapabilityOf[desktop.CookieSetter](ru.r.o.Screen)
	if !ok {
		return errors.New("this desktop has no browser to take cookies: run with --backend browser")
	}
	var cookies []map[string]any
	if st.Extra != nil {
		cookies = st.Extra.Cookies
	}
	sr.Value = fmt.Sprintf("%d cookies from %s", len(cookies), st.Target)
	return cs.SetCookies(ru.ctx, cookies)
}
