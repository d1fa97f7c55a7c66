package guiagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/vision"
)

// The vision methods (Locate, Query, Assert, WaitFor) look at a new
// screenshot with the configured vision model, as the MCP tools gui_locate,
// gui_query, gui_assert and gui_wait_for do. Without a model they return
// ErrNoModel. Their ScreenshotOptions choose the display (and may cap the
// image); the image is prepared for the model that looks at it.

// Box is a rectangle in image pixels of one screenshot: corners (X1, Y1)
// top-left and (X2, Y2) bottom-right.
type Box struct{ X1, Y1, X2, Y2 float64 }

// Location is what Locate found.
type Location struct {
	// Found false with a Reason is a normal answer: the element is not visible.
	Found bool
	// Box and Center are in pixels of Shot's image; Center is a Point the
	// input methods accept (Click(ctx, loc.Center, ...)). Zero when not found.
	Box    Box
	Center Point
	// Shot is the screenshot the model looked at.
	Shot *Screenshot
	// Reason is the model's words.
	Reason string
}

// Answer is what Query read: Data is JSON valid against the schema asked for.
type Answer struct {
	Data   json.RawMessage
	Reason string
}

// Decode unmarshals the answer's data into v.
func (a Answer) Decode(v any) error { return json.Unmarshal(a.Data, v) }

// Verdict is what Assert decided.
type Verdict struct {
	Pass   bool
	Reason string
}

// vision is the vision service in force, or ErrNoModel.
func (a *Agent) vision() (*vision.Service, error) {
	svc, err := a.app.Vision()
	if errors.Is(err, app.ErrNoModel) {
		return nil, ErrNoModel
	}
	if err != nil {
		return nil, fmt.Errorf("guiagent: the vision model: %w", err)
	}
	return svc, nil
}

// visionShot captures display d prepared for profile p.
func (a *Agent) visionShot(ctx context.Context, d geom.Display, o ScreenshotOptions, p geom.Profile) (*Screenshot, llm.Image, error) {
	shot, err := a.captureFor(ctx, d, geom.Rect{}, o, &p)
	if err != nil {
		return nil, llm.Image{}, err
	}
	return shot, llm.Image{MIME: shot.MIME, Data: shot.Data, Frame: shot.frame}, nil
}

// Locate finds the element target describes in words ("the Submit button")
// on a new screenshot. Not found is a Location with Found false, not an error.
func (a *Agent) Locate(ctx context.Context, target string, o ScreenshotOptions) (loc Location, err error) {
	defer a.audit("locate", map[string]any{"target": target}, time.Now(), &err)
	if strings.TrimSpace(target) == "" {
		return Location{}, errors.New(`guiagent: Locate: the target is empty: describe the element in words, e.g. "the Submit button"`)
	}
	d, err := a.display(ctx, o.Display)
	if err != nil {
		return Location{}, err
	}
	svc, err := a.vision()
	if err != nil {
		return Location{}, err
	}
	shot, img, err := a.visionShot(ctx, d, o, svc.LocateProfile())
	if err != nil {
		return Location{}, err
	}
	l, _, err := svc.Locate(ctx, img, target)
	if err != nil {
		return Location{}, fmt.Errorf("guiagent: locating %q: %w", target, err)
	}
	loc = Location{Found: l.Found, Shot: shot, Reason: l.Reason}
	if l.Found {
		c := l.Box.Center()
		loc.Box, loc.Center = Box{l.Box.X1, l.Box.Y1, l.Box.X2, l.Box.Y2}, shot.Point(c.X, c.Y)
	}
	return loc, nil
}

// Query asks the vision model a question about a new screenshot; the
// answer's Data is valid against schema, a JSON Schema (nil: a string).
func (a *Agent) Query(ctx context.Context, question string, schema json.RawMessage, o ScreenshotOptions) (ans Answer, err error) {
	defer a.audit("query", map[string]any{"question": question}, time.Now(), &err)
	if strings.TrimSpace(question) == "" {
		return Answer{}, errors.New("guiagent: Query: the question is empty: ask what to read from the screen")
	}
	if len(schema) > 0 {
		if err := vision.ValidateSchema(schema); err != nil {
			return Answer{}, fmt.Errorf("guiagent: Query: %w", err)
		}
	}
	d, err := a.display(ctx, o.Display)
	if err != nil {
		return Answer{}, err
	}
	svc, err := a.vision()
	if err != nil {
		return Answer{}, err
	}
	_, img, err := a.visionShot(ctx, d, o, svc.AskProfile())
	if err != nil {
		return Answer{}, err
	}
	v, _, err := svc.Query(ctx, img, question, schema)
	if err != nil {
		return Answer{}, fmt.Errorf("guiagent: query %q: %w", question, err)
	}
	return Answer{Data: v.Data, Reason: v.Reason}, nil
}

// Assert asks the vision model whether a statement about a new screenshot
// is true. Pass false is a normal answer, not an error.
func (a *Agent) Assert(ctx context.Context, assertion string, o ScreenshotOptions) (v Verdict, err error) {
	defer a.audit("assert", map[string]any{"assertion": assertion}, time.Now(), &err)
	if strings.TrimSpace(assertion) == "" {
		return Verdict{}, errors.New("guiagent: Assert: the assertion is empty: state what should be true of the screen")
	}
	d, err := a.display(ctx, o.Display)
	if err != nil {
		return Verdict{}, err
	}
	svc, err := a.vision()
	if err != nil {
		return Verdict{}, err
	}
	_, img, err := a.visionShot(ctx, d, o, svc.AskProfile())
	if err != nil {
		return Verdict{}, err
	}
	r, _, err := svc.Assert(ctx, img, assertion)
	if err != nil {
		return Verdict{}, fmt.Errorf("guiagent: assert %q: %w", assertion, err)
	}
	return Verdict{Pass: r.Pass, Reason: r.Reason}, nil
}

// WaitOptions bound WaitFor. Zero fields take the defaults.
type WaitOptions struct {
	// Timeout is how long to wait, at most 5 minutes; default 15 s.
	Timeout time.Duration
	// Interval is how often to look, at least 250 ms; default 1 s.
	Interval time.Duration
	// Display is the display id; "" means Options.Display, else the primary.
	Display string
}

// WaitResult is what WaitFor saw.
type WaitResult struct {
	// Met false at the timeout is a normal answer, not an error.
	Met     bool
	Elapsed time.Duration
	// Checks counts looks at the screen; ModelCalls the model calls, made
	// only when the screen changed since the model's last answer.
	Checks, ModelCalls int
	// Reason is the model's last reason.
	Reason string
}

// WaitFor waits until a statement about the screen is true (or the timeout
// passes), as gui_wait_for does: it looks at the screen every interval and
// asks the model again only when the screen has changed.
func (a *Agent) WaitFor(ctx context.Context, condition string, o WaitOptions) (res WaitResult, err error) {
	defer a.audit("wait_for", map[string]any{"condition": condition}, time.Now(), &err)
	timeout, every, err := o.limits()
	if err != nil {
		return WaitResult{}, err
	}
	if strings.TrimSpace(condition) == "" {
		return WaitResult{}, errors.New("guiagent: WaitFor: the condition is empty: state what the screen should show")
	}
	d, err := a.display(ctx, o.Display)
	if err != nil {
		return WaitResult{}, err
	}
	svc, err := a.vision()
	if err != nil {
		return WaitResult{}, err
	}
	look := vision.Look{
		Shoot: func(ctx context.Context) (llm.Image, imaging.Thumb, error) {
			shot, img, err := a.visionShot(ctx, d, ScreenshotOptions{}, svc.AskProfile())
			if err != nil {
				return llm.Image{}, imaging.Thumb{}, err
			}
			return img, shot.thumb, nil
		},
		Thumb: func(ctx context.Context) (imaging.Thumb, error) {
			return a.app.Shots().Thumb(ctx, a.app.Screen(), d, geom.Rect{})
		},
	}
	r, err := vision.WaitFor(ctx, svc, look, condition, timeout, every)
	res = WaitResult{Met: r.Met, Elapsed: r.Elapsed, Checks: r.Checks, ModelCalls: r.ModelCalls, Reason: r.Reason}
	if err != nil {
		return res, fmt.Errorf("guiagent: waiting for %q: %w", condition, err)
	}
	return res, nil
}

// limits are o's timeout and interval with their defaults.
func (o WaitOptions) limits() (timeout, every time.Duration, err error) {
	timeout, every = vision.WaitDefaultTimeout, vision.WaitDefaultEvery
	switch {
	case o.Timeout < 0 || o.Timeout > vision.WaitMaxTimeout:
		return 0, 0, fmt.Errorf("guiagent: WaitOptions.Timeout %v: want 0 (%v) to %v", o.Timeout, vision.WaitDefaultTimeout, vision.WaitMaxTimeout)
	case o.Interval != 0 && o.Interval < vision.WaitMinEvery:
		return 0, 0, fmt.Errorf("guiagent: WaitOptions.Interval %v: want 0 (%v) or at least %v", o.Interval, vision.WaitDefaultEvery, vision.WaitMinEvery)
	}
	if o.Timeout > 0 {
		timeout = o.Timeout
	}
	if o.Interval > 0 {
		every = o.Interval
	}
	return timeout, every, nil
}
