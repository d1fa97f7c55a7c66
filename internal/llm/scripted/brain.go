// Package scripted holds scripted models' brains: a Brain decides each answer
// of a model from what it was sent (Turn) and answers in a wire-neutral Reply.
// Brains may really look at the screenshot (FindColor), so a run can be
// driven end to end without a real model: the offline demo
// (DemoFormBrain) and the tests. internal/llm/fakellm serves brains over
// each provider's wire format.
package scripted

import (
	"encoding/json"
	"image"
	"image/color"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// Turn is what a brain sees of one request.
type Turn struct {
	// Step is the 1-based number of this answer: it counts requests whose
	// scripted reply was not an HTTP error, so a retried request sees the same Step.
	Step int
	// Image is the decoded latest screenshot of the request (nil when it had none).
	Image image.Image
	// ImageSize is Image's size in pixels (zero when there is no image).
	ImageSize geom.Size
	// Prompt is all text the model was sent (system, instructions, history), joined by newlines.
	Prompt string
	// Calls is the 1-based number of requests the server received, this one included.
	Calls int
	// Schema is the answer schema of a plain-vision request (Chat Completions'
	// response_format json_schema, or the input_schema of the tool Anthropic
	// is forced to call); nil for other requests.
	Schema json.RawMessage
}

// Reply is a brain's answer. Servers translate it into their wire format.
type Reply struct {
	// Actions are the actions to take, in pixels of the image the model received.
	Actions []BrainAction
	// Status is the model's verdict; empty means llm.Continue when there are
	// actions and llm.Done otherwise.
	Status llm.Status
	// Result is the deliverable (done), the reason (blocked/failed), or the whole
	// text of a plain text completion.
	Result string
	// Observation describes the screen.
	Observation string
	// Memory holds facts to remember (memory_update).
	Memory []string
	// Raw, when set, is sent verbatim as the model's text instead of a rendered
	// answer (to script malformed output).
	Raw string
	// HTTPStatus, when non-zero, makes the server answer with that HTTP error
	// (429, 500, 529, 401...) in its wire's error format.
	HTTPStatus int
	// RetryAfter is sent as the Retry-After header of an error ("2", or an HTTP date).
	RetryAfter string
	// ErrorType is the provider error type of an error ("rate_limit_error", "insufficient_quota"...).
	ErrorType string
	// Delay holds the answer back (a hung server); it ends early when the client goes away.
	Delay time.Duration
	// Answer, when set, is the answer object of a plain-vision request
	// ({"pass", "reason"}, {"data", "reason"}, {"found", "reason"}); servers
	// send it as JSON text, or as the forced tool call's input.
	Answer map[string]any
	// Box is a located element in pixels of the image received; servers add
	// it to Answer as "box" in their coordinate convention (or write it in the
	// model's native grounding format).
	Box *image.Rectangle
	// Ask, when set, asks the user after Actions, in the wire's own form: an
	// ask_user action (generic JSON), call_user() with the question as the
	// Thought (UI-TARS), or a closing text "QUESTION: ..." (Anthropic,
	// Responses; these take no Actions with it). The status is continue. The
	// answer comes in the next Turn's Prompt (see Turn.Answered).
	Ask *BrainAsk
}

// BrainAsk is a question for the user. Kind is "confirm", "text" or "choice"
// (empty: text, or choice with Options); only the generic JSON wire carries
// Kind, Options and Secret, the native ones ask in free text.
type BrainAsk struct {
	Question string
	Kind     action.AskKind
	Options  []string
	Secret   bool
}

// Answered returns the user's answer to question as the adapter gave it in
// this request (llm.AnswerNote): the text or option, unquoted; "yes" or "no"
// for a confirm; a secret's description. ok is false when the request holds
// no answer to question.
func (t Turn) Answered(question string) (answer string, ok bool) {
	prefix := llm.AnswerPrefix(question)
	i := strings.LastIndex(t.Prompt, prefix)
	if i < 0 {
		return "", false
	}
	rest := t.Prompt[i+len(prefix):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	if u, err := strconv.Unquote(rest); err == nil {
		return u, true
	}
	return rest, true
}

// BrainAction is one action in pixels of the image the model received.
type BrainAction struct {
	Kind action.Kind
	// At is the target point; To the end of a drag (or far corner of a zoom).
	At, To *image.Point
	// Ref and ToRef name the elements of the prompt's outline to act at
	// instead ("e12"; only the generic JSON wire carries them).
	Ref, ToRef string
	// Text is the text to type.
	Text string
	// Keys is one key combination (["ctrl","s"]) or the modifiers of a click/scroll.
	Keys []string
	// Direction is a scroll direction (up, down, left, right).
	Direction string
	// Amount is scroll notches or key repeats.
	Amount int
	// Button is the mouse button (left, right, middle); empty means left.
	Button string
}

// Brain decides the answer to one request. Servers call it from one goroutine at a time.
type Brain func(t Turn) Reply

// Script returns a brain that answers the n-th call with replies[n-1] and
// repeats the last one once the script is exhausted.
func Script(replies ...func(Turn) Reply) Brain {
	var mu sync.Mutex
	n := 0
	return func(t Turn) Reply {
		if len(replies) == 0 {
			return Reply{Status: llm.Failed, Result: "scripted.Script was given no replies"}
		}
		mu.Lock()
		i := min(n, len(replies)-1)
		n++
		mu.Unlock()
		return replies[i](t)
	}
}

// Fixed returns a script entry that always answers r.
func Fixed(r Reply) func(Turn) Reply { return func(Turn) Reply { return r } }

// ClickAt returns a left click at p (image pixels).
func ClickAt(p image.Point) BrainAction { return BrainAction{Kind: action.Click, At: &p} }

// ClickRef returns a left click on the element with ref (the generic JSON
// wire's "ref").
func ClickRef(ref string) BrainAction { return BrainAction{Kind: action.Click, Ref: ref} }

// TypeText returns an action typing s.
func TypeText(s string) BrainAction { return BrainAction{Kind: action.TypeText, Text: s} }

// PressKeys returns an action pressing one key combination such as "ctrl", "s".
func PressKeys(keys ...string) BrainAction { return BrainAction{Kind: action.KeyPress, Keys: keys} }

// Finish returns a reply ending the task as done with result.
func Finish(result string) Reply { return Reply{Status: llm.Done, Result: result} }

// FindColor returns the centre (mean position, rounded) of the largest
// 4-connected blob of pixels whose every channel is within tol of c. ok is
// false when img has no such pixel.
func FindColor(img image.Image, c color.RGBA, tol int) (center image.Point, ok bool) {
	if img == nil {
		return image.Point{}, false
	}
	best := largest(colorBlobs(img, c, tol))
	if best.n == 0 {
		return image.Point{}, false
	}
	b := img.Bounds()
	return image.Point{
		X: b.Min.X + (2*best.sx+best.n)/(2*best.n),
		Y: b.Min.Y + (2*best.sy+best.n)/(2*best.n),
	}, true
}

// colorBlob is one 4-connected blob of pixels near a colour, in pixels
// relative to the image's bounds origin.
type colorBlob struct {
	n      int // pixel count
	sx, sy int // sums of the pixels' x and y
	box    image.Rectangle
}

// colorBlobs returns the 4-connected blobs of img's pixels whose every
// channel is within tol of c, in the scan order of their first pixel.
func colorBlobs(img image.Image, c color.RGBA, tol int) []colorBlob {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return nil
	}
	match := make([]bool, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			match[y*w+x] = near(int(r>>8), int(c.R), tol) && near(int(g>>8), int(c.G), tol) && near(int(bl>>8), int(c.B), tol)
		}
	}
	seen := make([]bool, w*h)
	var blobs []colorBlob
	var stack []int
	for i := range match {
		if !match[i] || seen[i] {
			continue
		}
		bl := colorBlob{box: image.Rect(i%w, i/w, i%w+1, i/w+1)}
		seen[i] = true
		stack = append(stack[:0], i)
		for len(stack) > 0 {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			x, y := j%w, j/w
			bl.n, bl.sx, bl.sy = bl.n+1, bl.sx+x, bl.sy+y
			bl.box = bl.box.Union(image.Rect(x, y, x+1, y+1))
			for _, k := range [4]int{j - 1, j + 1, j - w, j + w} {
				if k < 0 || k >= len(match) || seen[k] || !match[k] {
					continue
				}
				if (k == j-1 && x == 0) || (k == j+1 && x == w-1) {
					continue
				}
				seen[k] = true
				stack = append(stack, k)
			}
		}
		blobs = append(blobs, bl)
	}
	return blobs
}

// largest returns the first of the blobs with the most pixels (the zero blob
// when there are none).
func largest(blobs []colorBlob) colorBlob {
	var best colorBlob
	for _, bl := range blobs {
		if bl.n > best.n {
			best = bl
		}
	}
	return best
}

func near(a, b, tol int) bool { return a-b <= tol && b-a <= tol }

// StatusOf returns rep.Status, or its default: continue with actions or a
// question, done without.
func StatusOf(rep Reply) llm.Status {
	if rep.Status != "" {
		return rep.Status
	}
	if len(rep.Actions) > 0 || rep.Ask != nil {
		return llm.Continue
	}
	return llm.Done
}
