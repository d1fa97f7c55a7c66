package flow

import (
	"fmt"
	"image"
	"strings"
	"sync"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/vision"
)

// Observable is the optional side of a TaskRunner that lets a flow watch the
// agent's screenshots and actions (*agent.Runner), so that an act step's
// actions can be cached with fingerprints of what they acted on.
type Observable interface {
	AddObserver(obs agent.Observer) (remove func())
}

// CachedAction is one action an act step executed, as cached: the action, its
// point in image pixels of a screenshot whose content was ContentSize, and a
// fingerprint of the pixels around that point (none for actions without a
// point: type, key, wait).
type CachedAction struct {
	Action      action.Action `yaml:"-"`
	Text        string        `yaml:"action"` // action.Action.String, for the reader
	JSON        string        `yaml:"json"`   // the action itself
	ContentSize string        `yaml:"content_size,omitempty"`
	// FingerprintRect and Fingerprint are as in CacheEntry.
	FingerprintRect [4]int `yaml:"fingerprint_rect,flow,omitempty"`
	Fingerprint     string `yaml:"fingerprint,omitempty"`
}

// actFingerprintHalfW and actFingerprintHalfH are half the size of an act
// action's fingerprint (image pixels around the point it acted on): larger
// than a typical button, so that it holds the element's edges and is not
// one flat colour that matches anywhere inside a larger area.
const actFingerprintHalfW, actFingerprintHalfH = 96, 40

// actWatcher collects one agent run's screenshots (decoded) and actions.
type actWatcher struct {
	task string

	mu      sync.Mutex
	runID   string
	shots   map[int]*image.RGBA // by agent step
	content map[int]geom.Size
	actions []CachedAction
	unsafe  bool // an action the cache cannot replay (zoom, or no screenshot)
}

func (w *actWatcher) OnEvent(ev agent.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev.Kind == agent.EvStart && w.runID == "" && ev.Message == w.task {
		w.runID = ev.RunID
	}
	if ev.RunID != w.runID || w.runID == "" {
		return
	}
	switch {
	case ev.Kind == agent.EvScreenshot && ev.Image != nil && !strings.HasPrefix(ev.Message, "zoom"):
		if m, err := decodeImage(ev.Image); err == nil {
			w.shots[ev.Step], w.content[ev.Step] = m, ev.Image.Frame.Content
		}
	case ev.Kind == agent.EvAction && ev.Action != nil && ev.Action.OK():
		w.add(ev.Step, *ev.Action)
	}
}

// add caches one executed action with a fingerprint around its point.
func (w *actWatcher) add(step int, t action.Trace) {
	a := t.Action
	if a.Kind == action.Zoom || a.Kind == action.Drag || a.Kind == action.HoldKey {
		w.unsafe = true
		return
	}
	ca := CachedAction{Action: a, Text: a.String()}
	b, _ := a.MarshalJSON()
	ca.JSON = string(b)
	if t.Image != nil && a.Kind.UsesPoint() {
		m, ok := w.shots[step]
		if !ok {
			w.unsafe = true
			return
		}
		p := image.Pt(int(t.Image.X), int(t.Image.Y))
		fp := takeFingerprint(m, vision.Box{X1: float64(p.X - actFingerprintHalfW), Y1: float64(p.Y - actFingerprintHalfH),
			X2: float64(p.X + actFingerprintHalfW), Y2: float64(p.Y + actFingerprintHalfH)})
		ca.FingerprintRect = [4]int{fp.Rect.Min.X, fp.Rect.Min.Y, fp.Rect.Max.X, fp.Rect.Max.Y}
		ca.Fingerprint = fp.encode()
		sz := w.content[step]
		ca.ContentSize = sizeString(sz.W, sz.H)
		// The point is kept in the action itself, as image pixels.
		ca.Action.At = &action.Point{Space: geom.SpaceImage, X: t.Image.X, Y: t.Image.Y}
		b, _ = ca.Action.MarshalJSON()
		ca.JSON = string(b)
	}
	w.actions = append(w.actions, ca)
}

func decodeImage(img *llm.Image) (*image.RGBA, error) {
	m, err := imaging.Decode(img.Data)
	if err != nil {
		return nil, err
	}
	return imaging.ToRGBA(m), nil
}

// actTolerance loosens the fingerprint check for act steps: their
// fingerprints come from the lossy screenshots the agent sent its model.
const (
	actPixelTolerance = 48
	actDifferentShare = 0.03
)

// replayAct replays an act step's cached actions, each verified on the
// screen first. It returns how many were replayed, and done=false when one
// did not verify (the step diverged there).
func (ru *run) replayAct(e *CacheEntry, sr *StepResult) (int, bool, error) {
	for i, ca := range e.Actions {
		var a action.Action
		if err := a.UnmarshalJSON([]byte(ca.JSON)); err != nil {
			return i, false, nil
		}
		if ca.Fingerprint == "" {
			if err := ru.execute(a, nil, sr); err != nil {
				return i, false, err
			}
			continue
		}
		shot, at, ok := ru.findActTarget(ca, a)
		if !ok {
			return i, false, nil
		}
		if err := ru.execute(a, &actPoint{shot: shot, image: at}, sr); err != nil {
			return i, false, err
		}
	}
	return len(e.Actions), true, nil
}

// actPoint is where a replayed action acts: image pixels of shot.
type actPoint struct {
	shot  *imaging.Shot
	image geom.ImagePoint
}

// findActTarget takes a screenshot at the cached content size and finds the
// action's fingerprint: at its place, or moved.
func (ru *run) findActTarget(ca CachedAction, a action.Action) (*imaging.Shot, geom.ImagePoint, bool) {
	var w, h int
	if _, err := fmt.Sscanf(ca.ContentSize, "%dx%d", &w, &h); err != nil || a.At == nil {
		return nil, geom.ImagePoint{}, false
	}
	r := image.Rect(ca.FingerprintRect[0], ca.FingerprintRect[1], ca.FingerprintRect[2], ca.FingerprintRect[3])
	if !image.Pt(int(a.At.X), int(a.At.Y)).In(r) { // the action must act where the fingerprint is verified
		ru.r.o.Logger.Warn("flow cache action ignored: its point is not within its fingerprint", "at", fmt.Sprintf("%g,%g", a.At.X, a.At.Y), "fingerprint", r)
		return nil, geom.ImagePoint{}, false
	}
	fp, err := decodeFingerprint(ca.Fingerprint, r)
	if err != nil {
		ru.r.o.Logger.Warn("flow cache action ignored", "error", err)
		return nil, geom.ImagePoint{}, false
	}
	ru.settle()
	o := ru.r.o.Shot
	o.MaxLongEdge, o.Profile = max(w, h), geom.Profile{}
	shot, err := ru.r.o.Shots.Shoot(ru.ctx, ru.r.o.Screen, ru.display, ru.display.Bounds, o, ru.id+"-act")
	if err != nil || shot.Frame.Content != (geom.Size{W: w, H: h}) {
		return nil, geom.ImagePoint{}, false
	}
	if fp.differentShareTol(shot.Pixels, r.Min, actPixelTolerance) <= actDifferentShare {
		return shot, geom.ImagePoint{X: a.At.X, Y: a.At.Y}, true
	}
	if at, ok := fp.searchTol(shot.Pixels, actPixelTolerance, actDifferentShare); ok {
		d := at.Sub(r.Min)
		return shot, geom.ImagePoint{X: a.At.X + float64(d.X), Y: a.At.Y + float64(d.Y)}, true
	}
	return nil, geom.ImagePoint{}, false
}

// execute performs one replayed action through the executor; p is where a
// point action acts.
func (ru *run) execute(a action.Action, p *actPoint, sr *StepResult) error {
	op := operate.Op{Action: a}
	if p != nil {
		r, err := (action.Point{Space: geom.SpaceImage, X: p.image.X, Y: p.image.Y}).Resolve(p.shot.Frame, []geom.Display{ru.display}, 0)
		if err != nil {
			return err
		}
		ip := p.image
		op.At = &operate.Place{Global: r.Global, Image: &ip, LocatedBy: operate.ByCache}
	}
	_, err := ru.do(op, sr)
	return err
}
