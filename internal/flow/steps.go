package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/vision"
)

// errNoSeer is returned by a step that needs the model when none is configured.
var errNoSeer = errors.New("this step needs a vision model and its element is not in the cache: set " + config.Vars("Provider", "Model", "APIKey") + " (or " + config.Var("GroundingModel") + ")")

// shoot takes a screenshot of the flow's display for locating, pixels kept.
func (ru *run) shoot() (*imaging.Shot, error) {
	return ru.r.o.Shots.Shoot(ru.ctx, ru.r.o.Screen, ru.display, ru.display.Bounds, ru.r.o.Shot, ru.id+"-"+time.Now().Format("150405.000000"))
}

// shootToAsk takes a screenshot for assert, wait_for and query.
func (ru *run) shootToAsk() (*imaging.Shot, error) {
	o := ru.r.o.Shot
	if ru.r.o.AskProfile != nil {
		o.Profile = *ru.r.o.AskProfile
	}
	return ru.r.o.Shots.Shoot(ru.ctx, ru.r.o.Screen, ru.display, ru.display.Bounds, o, ru.id+"-"+time.Now().Format("150405.000000"))
}

// settle waits until two thumbnails 50 ms apart agree (the screen has
// stopped changing), for at most Options.Settle.
func (ru *run) settle() {
	if ru.r.o.Settle < 0 {
		return
	}
	deadline := time.Now().Add(ru.r.o.Settle)
	prev, err := ru.r.o.Shots.Thumb(ru.ctx, ru.r.o.Screen, ru.display, ru.display.Bounds)
	for err == nil && time.Now().Before(deadline) {
		if sleep(ru.ctx, 50*time.Millisecond) != nil {
			return
		}
		cur, cerr := ru.r.o.Shots.Thumb(ru.ctx, ru.r.o.Screen, ru.display, ru.display.Bounds)
		if cerr != nil || imaging.Diff(prev, cur) < 0.001 {
			return
		}
		prev = cur
	}
}

func imageOf(s *imaging.Shot) llm.Image {
	return llm.Image{MIME: s.MIME, Data: s.Data, Frame: s.Frame}
}

// locate finds desc on a fresh screenshot: from the cache when its
// fingerprint is on the screen (at the cached place, or found elsewhere by
// template matching), else by asking the model, whose answer is then cached.
func (ru *run) locate(st Step, role, desc string, sr *StepResult) (*imaging.Shot, vision.Box, error) {
	if st.ByText && role == "" {
		return ru.locateText(st, desc, sr)
	}
	ru.settle()
	shot, err := ru.shoot()
	if err != nil {
		return nil, vision.Box{}, err
	}
	ru.lastBy = ""
	snap := ru.snapshot() // nil without an element source
	if e := ru.cache.lookup(st.Index, st.Kind, role, desc); e != nil {
		if box, ok := ru.replayIdentity(e, snap, shot, st); ok {
			sr.Cache = CacheHit // the same element, by identity, whatever its pixels show now
			return shot, box, nil
		}
		fp, ferr := e.fingerprint()
		if ferr != nil {
			ru.r.o.Logger.Warn("flow cache entry ignored", "step", st.Index, "error", ferr)
		}
		for try := 0; ferr == nil && try < 2; try++ {
			if box, how, ok := ru.replay(e, fp, shot, st); ok {
				sr.Cache = how
				return shot, box, nil
			}
			if try == 0 { // the screen may have been mid-change: look once more
				_ = sleep(ru.ctx, 150*time.Millisecond)
				if shot, err = ru.shoot(); err != nil {
					return nil, vision.Box{}, err
				}
			}
		}
	}
	if box, found, err := ru.locateInTree(st, role, desc, snap, shot); err != nil || found {
		if found {
			sr.Cache, ru.lastBy = CacheMiss, operate.ByAccessibility
		}
		return shot, box, err
	}
	if ru.r.o.Seer == nil {
		return shot, vision.Box{}, errNoSeer
	}
	sr.Cache = CacheMiss
	loc, u, err := ru.r.o.Seer.Locate(ru.ctx, imageOf(shot), desc)
	sr.ModelCalls++
	ru.addUsage(u)
	if err != nil {
		return shot, vision.Box{}, fmt.Errorf("locating %q: %w", desc, err)
	}
	if !loc.Found {
		return shot, vision.Box{}, fmt.Errorf("%q is not on the screen: %s", desc, loc.Reason)
	}
	ru.remember(st, role, desc, shot, loc.Box, ru.fingerprintFor(st, role, desc, shot.Pixels, loc.Box), identityAt(snap, shot, loc.Box))
	return shot, loc.Box, nil
}

// replay checks a cache entry against shot: the fingerprint at its cached
// place (hit), or anywhere else on the screen (moved, and the entry follows).
func (ru *run) replay(e *CacheEntry, fp fingerprint, shot *imaging.Shot, st Step) (vision.Box, string, bool) {
	sz := shot.Frame.ImageSize()
	if e.DisplaySize == sizeString(sz.W, sz.H) && fp.matchesAt(shot.Pixels, fp.Rect.Min) {
		return e.Box, CacheHit, true
	}
	// Elements usually move together (a moved window): try where the last
	// moved element of this run went before searching the whole screen.
	at, ok := fp.Rect.Min.Add(ru.shift), false
	if ru.shift != (image.Point{}) {
		ok = fp.matchesAt(shot.Pixels, at)
	}
	if !ok {
		if at, ok = fp.search(shot.Pixels); !ok {
			return vision.Box{}, "", false
		}
	}
	d := at.Sub(fp.Rect.Min)
	ru.shift = d
	box := vision.Box{X1: e.Box.X1 + float64(d.X), Y1: e.Box.Y1 + float64(d.Y), X2: e.Box.X2 + float64(d.X), Y2: e.Box.Y2 + float64(d.Y)}
	ru.remember(st, e.Role, e.Description, shot, box, fp.moved(d), e.Element)
	return box, CacheMoved, true
}

// remember stores what a step located in the cache, with the element's
// identity in the accessibility tree when known (nil: none).
func (ru *run) remember(st Step, role, desc string, shot *imaging.Shot, box vision.Box, fp fingerprint, id *Identity) {
	ru.rememberBy(ru.r.o.Model, st, role, desc, shot, box, fp, id)
}

// rememberBy stores what model (or "ocr", "accessibility") located in the cache.
func (ru *run) rememberBy(model string, st Step, role, desc string, shot *imaging.Shot, box vision.Box, fp fingerprint, id *Identity) {
	sz := shot.Frame.ImageSize()
	e := &CacheEntry{
		Step: st.Index, Kind: st.Kind, Role: role, Description: desc, DisplaySize: sizeString(sz.W, sz.H),
		Model: model, Box: box, FingerprintRect: rectArray(fp.Rect), Fingerprint: fp.encode(),
		FingerprintKind: fp.Kind, Element: id, Updated: CacheTime{time.Now().UTC().Truncate(time.Second)},
	}
	if fp.Kind == kindField {
		e.FingerprintHole = rectArray(fp.Hole)
		if !fp.Label.Empty() {
			e.FingerprintLabel = rectArray(fp.Label)
		}
	}
	ru.cache.store(e)
}

func (ru *run) addUsage(u llm.Usage) {
	ru.res.Usage.InputTokens += u.InputTokens
	ru.res.Usage.OutputTokens += u.OutputTokens
}

// resolve places the centre of box (image pixels of shot) on the screen
// through the one resolver; cache says how the box was found (a hit or a
// move of the cache, else the model).
func (ru *run) resolve(shot *imaging.Shot, box vision.Box, cache string) (*operate.Place, error) {
	c := box.Center()
	p := action.Point{Space: geom.SpaceImage, X: c.X, Y: c.Y}
	r, err := p.Resolve(shot.Frame, []geom.Display{ru.display}, 0)
	if err != nil {
		return nil, err
	}
	by := operate.ByVision
	if cache == byOCR || cache == operate.ByAccessibility {
		by = cache
	}
	if cache == CacheHit || cache == CacheMoved {
		by = operate.ByCache
	}
	return &operate.Place{Global: r.Global, Image: &c, FrameID: shot.Frame.ID, Display: ru.display, LocatedBy: by}, nil
}

// pointStep runs click, scroll, drag and locate steps.
func (ru *run) pointStep(st Step, sr *StepResult) (*imaging.Shot, error) {
	if st.Kind == Scroll && st.Target == "" {
		_, err := ru.do(operate.Op{Action: action.Action{Kind: action.Scroll, Direction: st.Direction, Amount: st.Amount}}, sr)
		return nil, err
	}
	if st.Kind == Click {
		return ru.pointStepClick(st, sr)
	}
	shot, at, err := ru.locateTarget(st, sr)
	if err != nil {
		return shot, err
	}
	switch st.Kind {
	case Locate:
		sr.Value = fmt.Sprintf("%d,%d", at.Global.X, at.Global.Y)
		if sr.Box != nil {
			sr.Data = locateData(shot, *sr.Box, at)
		}
		if st.SaveAs != "" {
			ru.vars[st.SaveAs] = sr.Value
		}
		return shot, nil
	case Drag:
		return shot, ru.drag(st, sr, shot, at)
	}
	a := action.Action{Kind: action.Scroll, Target: st.Target, Direction: st.Direction, Amount: st.Amount, At: imagePoint(at)}
	_, err = ru.do(operate.Op{Action: a, At: at}, sr)
	return shot, err
}

// imagePoint is a placed point's image pixels as an action's point.
func imagePoint(p *operate.Place) *action.Point {
	return &action.Point{Space: geom.SpaceImage, X: p.Image.X, Y: p.Image.Y}
}

// drag locates the drag's end on the same screen and drags there.
func (ru *run) drag(st Step, sr *StepResult, shot *imaging.Shot, from *operate.Place) error {
	cache := sr.Cache
	_, toBox, err := ru.locate(st, "to", st.To, sr)
	if cache == CacheMiss || sr.Cache == "" {
		sr.Cache = cache // a miss on either end counts
	}
	if err != nil {
		return err
	}
	how := sr.Cache
	if ru.lastBy != "" && how == CacheMiss {
		how = ru.lastBy
	}
	to, err := ru.resolve(shot, toBox, how)
	if err != nil {
		return err
	}
	a := action.Action{Kind: action.Drag, Target: st.Target, At: imagePoint(from), To: imagePoint(to)}
	_, err = ru.do(operate.Op{Action: a, At: from, To: to}, sr)
	return err
}

// typeText clicks the target (when there is one) and types, after the
// executor has cleared the field or gone to its end per the mode.
func (ru *run) typeText(st Step, sr *StepResult) (*imaging.Shot, error) {
	var shot *imaging.Shot
	if st.Target != "" {
		var err error
		if shot, err = ru.pointStepClick(st, sr); err != nil {
			return shot, err
		}
	}
	mode, err := operate.ParseTypeMode(st.Mode)
	if err != nil {
		return shot, err
	}
	if mode == operate.Replace {
		if done, err := ru.replaceByActor(st.Text, sr); done || err != nil {
			return shot, err
		}
	}
	_, err = ru.do(operate.Op{Action: action.Action{Kind: action.TypeText, Text: st.Text}, Mode: mode}, sr)
	return shot, err
}

// locateTarget locates st.Target, records its box in sr and places the
// box's centre on the screen.
func (ru *run) locateTarget(st Step, sr *StepResult) (*imaging.Shot, *operate.Place, error) {
	shot, box, err := ru.locate(st, "", st.Target, sr)
	if err != nil {
		return shot, nil, err
	}
	sr.Box = &box
	how := sr.Cache
	if st.ByText && how == CacheMiss {
		how = byOCR
	}
	if ru.lastBy != "" && how == CacheMiss {
		how = ru.lastBy
	}
	at, err := ru.resolve(shot, box, how)
	return shot, at, err
}

// pointStepClick locates st.Target and clicks it (a click step, or the
// first half of a type step).
func (ru *run) pointStepClick(st Step, sr *StepResult) (*imaging.Shot, error) {
	shot, at, err := ru.locateTarget(st, sr)
	if err != nil {
		return shot, err
	}
	a := action.Action{Kind: action.Click, Target: st.Target, At: imagePoint(at)}
	_, err = ru.do(operate.Op{Action: a, At: at}, sr)
	return shot, err
}

// ask runs assert, query and wait_for steps: always the model (their answers
// depend on the screen's content, which is what they check).
func (ru *run) ask(st Step, sr *StepResult) (*imaging.Shot, error) {
	if ru.r.o.Seer == nil {
		return nil, errNoSeer
	}
	switch st.Kind {
	case Query:
		ru.settle()
		shot, err := ru.shootToAsk()
		if err != nil {
			return nil, err
		}
		ans, u, err := ru.r.o.Seer.Query(ru.ctx, imageOf(shot), st.Text, st.Schema)
		sr.ModelCalls++
		ru.addUsage(u)
		if err != nil {
			return shot, err
		}
		sr.Value, sr.Data = queryValue(ans.Data), ans.Data
		if st.SaveAs != "" {
			ru.vars[st.SaveAs] = sr.Value
		}
		return shot, nil
	case Assert:
		ru.settle()
		shot, err := ru.shootToAsk()
		if err != nil {
			return nil, err
		}
		v, u, err := ru.r.o.Seer.Assert(ru.ctx, imageOf(shot), st.Text)
		sr.ModelCalls++
		ru.addUsage(u)
		if err != nil {
			return shot, err
		}
		sr.Value = v.Reason
		if !v.Pass {
			if st.Extra != nil && st.Extra.ErrorMessage != "" {
				return shot, fmt.Errorf("assertion failed: %s; reason: %s", st.Extra.ErrorMessage, v.Reason)
			}
			return shot, fmt.Errorf("assertion failed: %s", v.Reason)
		}
		return shot, nil
	}
	return ru.waitFor(st, sr)
}

// queryValue is a query answer as a variable's text: a JSON string unquoted,
// anything else as JSON.
func queryValue(data json.RawMessage) string {
	var s string
	if json.Unmarshal(data, &s) == nil {
		return s
	}
	return string(data)
}

// waitFor asks whether the condition holds every Interval until Timeout; it
// does not ask again while the screen is unchanged since the last check.
func (ru *run) waitFor(st Step, sr *StepResult) (*imaging.Shot, error) {
	deadline := time.Now().Add(st.Timeout)
	var last *imaging.Thumb
	var shot *imaging.Shot
	reason := "the condition was never checked"
	for {
		s, err := ru.shootToAsk()
		if err != nil {
			return shot, err
		}
		shot = s
		if last == nil || imaging.Diff(*last, s.Thumb) >= 0.001 {
			th := s.Thumb
			last = &th
			v, u, err := ru.r.o.Seer.Assert(ru.ctx, imageOf(s), st.Text)
			sr.ModelCalls++
			ru.addUsage(u)
			if err != nil {
				return shot, err
			}
			if v.Pass {
				sr.Value = v.Reason
				return shot, nil
			}
			reason = v.Reason
		}
		if time.Now().Add(st.Interval).After(deadline) {
			return shot, fmt.Errorf("not met within %v: %s", st.Timeout, reason)
		}
		if err := sleep(ru.ctx, st.Interval); err != nil {
			return shot, err
		}
	}
}
