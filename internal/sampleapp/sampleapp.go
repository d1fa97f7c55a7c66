// Package sampleapp is a small real X11 application in pure Go (its own xgb
// connection, no cgo) for end-to-end tests, agent tests and `guiagent demo`.
// It shows one scene of flat-coloured widgets (see Layout and the colour
// constants) and reports what the user did as JSON lines and as Events.
//
// Scenes:
//   - "form": Name, Email and City fields and a Submit button. Clicking a field
//     focuses it; typing fills it; BackSpace deletes; ctrl+a selects all, and
//     so do Home then shift+End (Home alone puts the caret before the text);
//     ctrl+v pastes the CLIPBOARD; Tab and shift+Tab move focus; Submit (or
//     Return) reports {"event":"submit","fields":{...}}.
//   - "dialog": a Next button; clicking it shows OK and Cancel; OK reports
//     {"event":"confirmed"}, Cancel {"event":"cancelled"} and returns to Next.
//   - "buttons": red, green, blue, yellow and purple buttons; each click reports
//     {"event":"click","button":name,"x":..,"y":..} (window pixels).
//   - "typing": one focused field; Return reports {"event":"text","value":...}.
//
// Every mouse click also reports {"event":"click",...} with the widget under it
// in "target" and the mouse button in "mouse"; text changes report
// {"event":"change","field":..,"value":..}; {"event":"ready"} comes once the
// window is mapped, exposed, raised and focused.
package sampleapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// Options configures the application. The zero value runs the form scene on
// $DISPLAY at the screen's size and prints nothing.
type Options struct {
	// Display is the X display (":99"); empty means $DISPLAY.
	Display string
	// Scene is one of Scenes; empty means "form".
	Scene string
	// Out receives one JSON object per line for every event; nil discards them.
	Out io.Writer
	// Width and Height are the window size in pixels; zero means the screen's size.
	Width, Height int
	// X and Y are the window's position on the screen in pixels (without a
	// window manager, where it stays); zero is the top-left corner.
	X, Y int
	// Labels replaces the labels of widgets, by widget name (for example
	// {"submit": "Send"}); a name that is not a widget of the scene is an error.
	Labels map[string]string
}

// Event is one thing the application reports.
type Event struct {
	// Event is the kind: ready, click, scroll, focus, change, submit, screen,
	// confirmed, cancelled, text, closed.
	Event string `json:"event"`
	// Scene is set on ready.
	Scene string `json:"scene,omitempty"`
	// Button is the clicked button widget's name (click on a button).
	Button string `json:"button,omitempty"`
	// Target is the widget under a click ("" for the background).
	Target string `json:"target,omitempty"`
	// Mouse is the mouse button of a click: left, middle or right.
	Mouse string `json:"mouse,omitempty"`
	// X and Y are window pixels of a click or scroll.
	X int `json:"x"`
	Y int `json:"y"`
	// Direction is set on scroll: up, down, left or right.
	Direction string `json:"direction,omitempty"`
	// Field names the field of focus and change events.
	Field string `json:"field,omitempty"`
	// Value is the field's text (change) or the typed line (text).
	Value string `json:"value,omitempty"`
	// Fields holds the form on submit: name, email, city.
	Fields map[string]string `json:"fields,omitempty"`
	// Screen is the dialog screen now shown (screen events).
	Screen int `json:"screen,omitempty"`
	// Width and Height are the window size on ready.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// MarshalJSON writes x and y only for events that have a position.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	type wire struct {
		plain
		X *int `json:"x,omitempty"`
		Y *int `json:"y,omitempty"`
	}
	w := wire{plain: plain(e)}
	if e.Event == "click" || e.Event == "scroll" {
		w.X, w.Y = &e.X, &e.Y
	}
	return json.Marshal(w)
}

// App is a running application started by Start.
type App struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done closes

	mu      sync.Mutex
	events  []Event
	changed chan struct{}
	cursor  int // WaitFor consumes events up to here
	fields  map[string]string
	chOnce  sync.Once
	ch      chan Event
	move    func(x, y int) error // set once the window exists
}

func newApp() *App {
	return &App{done: make(chan struct{}), changed: make(chan struct{}), fields: map[string]string{}}
}

// emit records e, writes it to out and wakes waiters.
func (a *App) emit(out io.Writer, e Event) {
	if out != nil {
		if b, err := json.Marshal(e); err == nil {
			a.mu.Lock()
			_, _ = out.Write(append(b, '\n'))
			a.mu.Unlock()
		}
	}
	a.mu.Lock()
	a.events = append(a.events, e)
	close(a.changed)
	a.changed = make(chan struct{})
	a.mu.Unlock()
}

func (a *App) setField(name, value string) {
	a.mu.Lock()
	a.fields[name] = value
	a.mu.Unlock()
}

// Field returns the current text of a field ("name", "email", "city", "text").
func (a *App) Field(name string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fields[name]
}

// Events returns a channel of every event from the start, in order; it is
// closed when the application stops. Every call returns the same channel.
func (a *App) Events() <-chan Event {
	a.chOnce.Do(func() {
		a.ch = make(chan Event)
		go func() {
			defer close(a.ch)
			for i := 0; ; i++ {
				e, ok := a.eventAt(i)
				if !ok {
					return
				}
				a.ch <- e
			}
		}()
	})
	return a.ch
}

// eventAt waits for event i; false once the app stopped without it.
func (a *App) eventAt(i int) (Event, bool) {
	for {
		a.mu.Lock()
		if i < len(a.events) {
			e := a.events[i]
			a.mu.Unlock()
			return e, true
		}
		ch := a.changed
		a.mu.Unlock()
		select {
		case <-ch:
		case <-a.done:
			a.mu.Lock()
			n := len(a.events)
			a.mu.Unlock()
			if i >= n {
				return Event{}, false
			}
		}
	}
}

// WaitFor returns the first event matching pred that came after the event the
// previous WaitFor returned (from the start, for the first call). It fails when
// ctx ends or the application stops first.
func (a *App) WaitFor(ctx context.Context, pred func(Event) bool) (Event, error) {
	for {
		a.mu.Lock()
		for a.cursor < len(a.events) {
			e := a.events[a.cursor]
			a.cursor++
			if pred(e) {
				a.mu.Unlock()
				return e, nil
			}
		}
		ch := a.changed
		a.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("sample app: no matching event before %w; events so far: %s", ctx.Err(), a.summary())
		case <-a.done:
			a.mu.Lock()
			more := a.cursor < len(a.events)
			a.mu.Unlock()
			if !more {
				return Event{}, fmt.Errorf("sample app stopped (%v) before a matching event; events: %s", a.err, a.summary())
			}
		}
	}
}

// History returns every event so far.
func (a *App) History() []Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.events)
}

func (a *App) summary() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var s []byte
	for i, e := range a.events {
		if i > 0 {
			s = append(s, ' ')
		}
		b, _ := json.Marshal(e)
		s = append(s, b...)
	}
	return string(s)
}

// Move moves the window to (x, y) on the screen, in pixels, as a window
// manager or the user would; the application redraws it there.
func (a *App) Move(x, y int) error {
	a.mu.Lock()
	move := a.move
	a.mu.Unlock()
	if move == nil {
		return errors.New("sample app: the window is not there to move")
	}
	return move(x, y)
}

// Close stops the application, closes its window and returns Run's error.
func (a *App) Close() error {
	a.cancel()
	<-a.done
	return a.err
}

// Start runs the application in a goroutine and returns once its window is
// ready (the ready event), or with the error that stopped it. ctx bounds only
// the wait for ready: the application runs until Close (or until its X server
// goes away), so callers must Close it.
func Start(ctx context.Context, o Options) (*App, error) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := newApp()
	a.cancel = cancel
	go func() {
		a.err = run(rctx, o, a)
		close(a.done)
	}()
	if _, err := a.WaitFor(ctx, func(e Event) bool { return e.Event == "ready" }); err != nil {
		cancel()
		<-a.done
		if a.err != nil {
			return nil, a.err
		}
		return nil, err
	}
	a.mu.Lock()
	a.cursor = 0 // let callers see ready too
	a.mu.Unlock()
	return a, nil
}

// Run shows the scene and handles input until ctx ends (returning nil) or the
// window is closed (nil) or the X connection fails (an error).
func Run(ctx context.Context, o Options) error {
	return run(ctx, o, newApp())
}

// ErrUnknownScene is returned for a scene name not in Scenes.
var ErrUnknownScene = errors.New("unknown sample scene")
