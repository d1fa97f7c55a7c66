package action

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Raw is an action as a wire writes it, before parsing: names as strings,
// points as number arrays in some space's axis order (2 numbers a point, 4 a
// box whose centre is meant). Model adapters and MCP tools fill a Raw from
// their own format and call Parse; nothing past Parse sees a Raw.
type Raw struct {
	Kind       Kind        `json:"kind"`
	At         []float64   `json:"at,omitempty"`
	To         []float64   `json:"to,omitempty"`
	Path       [][]float64 `json:"path,omitempty"`
	Target     string      `json:"target,omitempty"`
	Ref        string      `json:"ref,omitempty"`
	ToRef      string      `json:"to_ref,omitempty"`
	Button     string      `json:"button,omitempty"`
	Clicks     int         `json:"clicks,omitempty"`
	Text       string      `json:"text,omitempty"`
	Keys       []string    `json:"keys,omitempty"`
	Direction  string      `json:"direction,omitempty"`
	Amount     int         `json:"amount,omitempty"`
	DurationMS int         `json:"duration_ms,omitempty"`
	CallID     string      `json:"call_id,omitempty"`
	// An ask_user's question, kind (confirm, text, choice), options and secret flag.
	Question string   `json:"question,omitempty"`
	Ask      string   `json:"ask,omitempty"`
	Options  []string `json:"options,omitempty"`
	Secret   bool     `json:"secret,omitempty"`
}

// Parse reads r, whose arrays are in space sp (and its axis order), into an
// Action, or returns an error naming every problem and how to fix it. Points
// get sp.Named() as their space: named x and y, never swapped again.
func Parse(r Raw, sp geom.Space) (Action, error) { return parse(r, sp, false) }

// ParseModel is Parse for numbers a model wrote: it also rejects numbers
// outside the space's range (a normalized grid 0-divisor with 5% slack; pixels
// below -1), which show that the model misread the convention.
func ParseModel(r Raw, sp geom.Space) (Action, error) { return parse(r, sp, true) }

// ParseModelAll parses a model's actions; the error names each bad one as
// "actions[i] (kind): problem" and joins them with "; ".
func ParseModelAll(rs []Raw, sp geom.Space) ([]Action, error) {
	out := make([]Action, 0, len(rs))
	var probs []string
	for i, r := range rs {
		a, err := ParseModel(r, sp)
		if err != nil {
			probs = append(probs, fmt.Sprintf("actions[%d] (%s): %v", i, r.Kind, err))
			continue
		}
		out = append(out, a)
	}
	if len(probs) > 0 {
		return nil, errors.New(strings.Join(probs, "; "))
	}
	return out, nil
}

// parser collects the problems of one Raw.
type parser struct {
	sp      geom.Space
	bounded bool
	errs    []error
}

func (p *parser) add(err error) {
	if err != nil {
		p.errs = append(p.errs, err)
	}
}

func parse(r Raw, sp geom.Space, bounded bool) (Action, error) {
	if !slices.Contains(Kinds, r.Kind) {
		return Action{}, fmt.Errorf("unknown action %q: use one of %s", r.Kind, kindList())
	}
	if !sp.Valid() {
		return Action{}, fmt.Errorf("unknown coordinate space %q", sp)
	}
	p := &parser{sp: sp, bounded: bounded}
	a := Action{Kind: r.Kind, Target: strings.TrimSpace(r.Target), Ref: strings.TrimSpace(r.Ref), ToRef: strings.TrimSpace(r.ToRef), Count: r.Clicks, Text: r.Text,
		Amount: r.Amount, Duration: time.Duration(r.DurationMS) * time.Millisecond, CallID: r.CallID,
		Question: strings.TrimSpace(r.Question), Ask: AskKind(strings.ToLower(strings.TrimSpace(r.Ask))), Secret: r.Secret}
	for _, o := range r.Options {
		if o = strings.TrimSpace(o); o != "" {
			a.Options = append(a.Options, o)
		}
	}
	a.At = p.point("position", r.At, true)
	a.To = p.point("end position (to)", r.To, true)
	for i, q := range r.Path {
		if pt := p.point(fmt.Sprintf("path[%d]", i), q, false); pt != nil {
			a.Path = append(a.Path, *pt)
		}
	}
	if r.Button != "" {
		b, err := desktop.ParseButton(r.Button)
		p.add(err)
		a.Button = b
	}
	if r.Direction != "" {
		d, err := desktop.ParseDirection(r.Direction)
		p.add(err)
		a.Direction = d
	}
	if len(r.Keys) > 0 {
		k, err := desktop.ParseKeys(r.Keys)
		p.add(err)
		a.Keys = k
	}
	if len(p.errs) == 0 {
		p.add(a.Validate())
	}
	if err := errors.Join(p.errs...); err != nil {
		return Action{}, err
	}
	return a, nil
}

// point reads one array: 2 numbers, or 4 (a box) when boxOK.
func (p *parser) point(what string, nums []float64, boxOK bool) *Point {
	if nums == nil {
		return nil
	}
	switch {
	case len(nums) == 2, len(nums) == 4 && boxOK:
	case boxOK:
		p.add(fmt.Errorf("%s needs 2 numbers (a point) or 4 (a box), got %d", what, len(nums)))
		return nil
	default:
		p.add(fmt.Errorf("%s needs 2 numbers, got %d", what, len(nums)))
		return nil
	}
	for _, v := range nums {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			p.add(fmt.Errorf("%s has a coordinate that is not a finite number", what))
			return nil
		}
	}
	if p.bounded {
		if err := checkRange(what, nums, p.sp); err != nil {
			p.add(err)
			return nil
		}
	}
	x, y, err := geom.ArrayPoint(nums, p.sp.Order())
	if err != nil {
		p.add(fmt.Errorf("%s: %w", what, err))
		return nil
	}
	return &Point{Space: p.sp.Named(), X: x, Y: y}
}

// checkRange rejects model numbers outside the range of their space.
func checkRange(what string, nums []float64, sp geom.Space) error {
	if div := sp.Divisor(); div > 0 {
		lo, hi := -0.05*div, 1.05*div
		for _, v := range nums {
			if v < lo || v > hi {
				return fmt.Errorf("%s coordinate %g is outside 0-%g: coordinates are normalized to 0-%g", what, v, div, div)
			}
		}
		return nil
	}
	for _, v := range nums {
		if v < -1 && sp != geom.SpaceScreen {
			return fmt.Errorf("%s coordinate %g is negative: coordinates are pixels of the screenshot, from 0", what, v)
		}
		if math.Abs(v) > MaxModelPixel {
			return fmt.Errorf("%s coordinate %g is beyond %d: coordinates are pixels of the screenshot, no larger than its size", what, v, MaxModelPixel)
		}
	}
	return nil
}

// MaxModelPixel bounds every pixel coordinate a model writes, whatever the
// image: no screenshot is that large, so a larger number is garbage (a drag to
// x = 1e15 once sent the run record's drawing into a 1e15-step loop).
// Action.CheckNear then holds each point to its image.
const MaxModelPixel = 100_000

// MaxOffImage is how far outside the image a model's point may lie, in
// multiples of the image's width and height. A point farther off shows a
// misread convention; CheckNear refuses it so the model is asked again.
const MaxOffImage = 1.0

// CheckNear returns an error naming the first point of a (image or normalized
// space; screen points are checked against the displays when resolved) that
// lies more than MaxOffImage image sides outside the image of frame f, the
// frame the model's numbers are read over.
func (a Action) CheckNear(f geom.Frame) error {
	img := f.ImageSize()
	if img.W <= 0 || img.H <= 0 {
		return nil
	}
	loX, hiX := -MaxOffImage*float64(img.W), (1+MaxOffImage)*float64(img.W)
	loY, hiY := -MaxOffImage*float64(img.H), (1+MaxOffImage)*float64(img.H)
	check := func(what string, p *Point) error {
		if p == nil || p.Space == geom.SpaceScreen || !p.Space.Valid() {
			return nil
		}
		ip := geom.SpaceToImage(p.Space, p.X, p.Y, f)
		if !(ip.X >= loX && ip.X <= hiX && ip.Y >= loY && ip.Y <= hiY) {
			return fmt.Errorf("%s %v is far outside the %dx%d screenshot: give a point on the screenshot", what, p, img.W, img.H)
		}
		return nil
	}
	if err := check("position", a.At); err != nil {
		return err
	}
	if err := check("end position (to)", a.To); err != nil {
		return err
	}
	for i := range a.Path {
		if err := check(fmt.Sprintf("path[%d]", i), &a.Path[i]); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks that a is complete and consistent for its kind, naming
// every problem and its fix. Parse calls it; code that builds an Action
// directly calls it too.
func (a Action) Validate() error {
	if !slices.Contains(Kinds, a.Kind) {
		return fmt.Errorf("unknown action %q: use one of %s", a.Kind, kindList())
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(a.checkPoints())
	add(a.checkRefs())
	if a.Count < 0 || a.Count > MaxClicks {
		add(fmt.Errorf("clicks %d is out of range 1-%d", a.Count, MaxClicks))
	}
	if a.Amount < 0 {
		add(fmt.Errorf("amount %d is negative", a.Amount))
	}
	if a.Duration < 0 {
		add(fmt.Errorf("duration_ms %d is negative", a.Duration.Milliseconds()))
	}
	if a.Button < 0 || a.Button > desktop.Right {
		add(fmt.Errorf("unknown mouse button %d: use left, right or middle", a.Button))
	}
	if rule, ok := kindRules[a.Kind]; ok {
		for _, check := range rule {
			add(check(a))
		}
	}
	return errors.Join(errs...)
}

// checkPoints requires every point to carry a known space, all the same one.
func (a Action) checkPoints() error {
	pts := a.Path
	if a.At != nil {
		pts = append([]Point{*a.At}, pts...)
	}
	if a.To != nil {
		pts = append(pts, *a.To)
	}
	for _, p := range pts {
		if !p.Space.Valid() {
			return fmt.Errorf("point %v has unknown coordinate space %q", p, p.Space)
		}
		if p.Space != pts[0].Space {
			return fmt.Errorf("points in spaces %s and %s: give every point of one action in the same space", pts[0].Space, p.Space)
		}
		if math.IsNaN(p.X+p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return fmt.Errorf("point %v has a coordinate that is not a finite number", p)
		}
	}
	return nil
}

// rule is one requirement of a kind.
type rule func(Action) error

// kindRules holds what each kind needs beyond the common checks.
var kindRules = map[Kind][]rule{
	Click:       {needAt},
	DoubleClick: {needAt},
	TripleClick: {needAt},
	Move:        {needAt},
	Drag:        {needAt, needTo},
	Zoom:        {needRegion},
	Scroll:      {needDirection},
	TypeText:    {needText},
	KeyPress:    {needKeys},
	HoldKey:     {needKeys, needDuration},
	AskUser:     {needQuestion},
}

// MaxOptions bounds the options of a choice question.
const MaxOptions = 20

func needQuestion(a Action) error {
	var errs []error
	if a.Question == "" {
		errs = append(errs, errors.New("needs a question: give the question for the user"))
	}
	switch k := a.AskKind(); k {
	case AskChoice:
		if len(a.Options) < 2 || len(a.Options) > MaxOptions {
			errs = append(errs, fmt.Errorf("a choice needs 2-%d options, got %d", MaxOptions, len(a.Options)))
		}
		seen := map[string]bool{}
		for _, o := range a.Options {
			if seen[o] {
				errs = append(errs, fmt.Errorf("option %q is given twice: give each option once", o))
				break
			}
			seen[o] = true
		}
	case AskConfirm, AskText:
		if len(a.Options) > 0 {
			errs = append(errs, fmt.Errorf("a %s question takes no options: use ask %q for a choice", k, AskChoice))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown question kind %q: use confirm, text or choice", k))
	}
	if a.Secret && a.AskKind() != AskText {
		errs = append(errs, errors.New("only a text question can be secret"))
	}
	return errors.Join(errs...)
}

// CheckAsks requires every ask_user of a batch to come after all its other
// actions: an action planned after a question cannot know its answer.
func CheckAsks(acts []Action) error {
	asked := -1
	for i, a := range acts {
		if a.Kind == AskUser {
			if asked < 0 {
				asked = i
			}
			continue
		}
		if asked >= 0 {
			return fmt.Errorf("actions[%d] (%s) comes after the ask_user at actions[%d]: ask last, and plan the next actions once the answer is known", i, a.Kind, asked)
		}
	}
	return nil
}

func needAt(a Action) error {
	if a.At == nil && a.Target == "" && a.Ref == "" {
		return errors.New("needs a position: give x and y (or a box, or an element's ref)")
	}
	return nil
}

func needTo(a Action) error {
	if a.To == nil && a.ToRef == "" {
		return errors.New("needs an end position: give to [x, y] (or to_ref)")
	}
	return nil
}

// MaxRefLen bounds an element ref ("e12"): refs are short names, not text.
const MaxRefLen = 32

// checkRefs holds a's element refs to the actions that take them and
// refuses a ref given together with coordinates or a target for the same
// point: the two could disagree, and nothing may pick one silently.
func (a Action) checkRefs() error {
	var errs []error
	for _, r := range []struct{ name, ref string }{{"ref", a.Ref}, {"to_ref", a.ToRef}} {
		if r.ref != "" && (len(r.ref) > MaxRefLen || strings.ContainsAny(r.ref, " \t\n\"[]")) {
			errs = append(errs, fmt.Errorf("%s %q is not an element ref: give one ref as listed, such as \"e12\"", r.name, shorten(r.ref, MaxRefLen)))
		}
	}
	if a.Ref != "" {
		switch {
		case !a.Kind.UsesPoint():
			errs = append(errs, fmt.Errorf("%s takes no ref: a ref names where a pointer action acts (click the element by its ref first)", a.Kind))
		case a.At != nil:
			errs = append(errs, fmt.Errorf("ref %q and coordinates %v name the same position: give the ref or the coordinates, not both", a.Ref, a.At))
		case a.Target != "":
			errs = append(errs, fmt.Errorf("ref %q and target %q name the same position: give the ref or the target, not both", a.Ref, a.Target))
		}
	}
	if a.ToRef != "" {
		switch {
		case a.Kind != Drag:
			errs = append(errs, fmt.Errorf("%s takes no to_ref: only a drag has an end position", a.Kind))
		case a.To != nil:
			errs = append(errs, fmt.Errorf("to_ref %q and the end position %v name the same position: give to_ref or to, not both", a.ToRef, a.To))
		}
	}
	return errors.Join(errs...)
}

func needRegion(a Action) error {
	if a.At == nil || a.To == nil {
		return errors.New("needs a region: give box [x1, y1, x2, y2]")
	}
	return nil
}

func needDirection(a Action) error {
	if a.Direction == "" {
		return errors.New("needs a direction: up, down, left or right")
	}
	_, err := desktop.ParseDirection(string(a.Direction))
	return err
}

func needText(a Action) error {
	if a.Text == "" {
		return errors.New("needs text to type")
	}
	return nil
}

func needKeys(a Action) error {
	if len(a.Keys) == 0 {
		return errors.New("needs keys, such as [\"ctrl\", \"s\"] or [\"Return\"]")
	}
	return nil
}

func needDuration(a Action) error {
	if a.Duration <= 0 {
		return errors.New("needs duration_ms greater than 0")
	}
	return nil
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// ParsePoint reads one array a model wrote in space sp (2 numbers a point, 4
// a box whose centre is meant) with ParseModel's range checks; grounding
// models' answers come this way.
func ParsePoint(nums []float64, sp geom.Space) (Point, error) {
	if !sp.Valid() {
		return Point{}, fmt.Errorf("unknown coordinate space %q", sp)
	}
	p := &parser{sp: sp, bounded: true}
	pt := p.point("position", nums, true)
	if err := errors.Join(p.errs...); err != nil {
		return Point{}, err
	}
	return *pt, nil
}
