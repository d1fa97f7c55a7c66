// Package cuwire holds the pieces the native computer-use adapters (Anthropic
// Messages, OpenAI Responses) share: capturing request and response bodies from
// the SDKs' middleware, turning error responses into *llm.APIError, eliding
// image data from recorded bodies, the text notes an observation adds to a
// request, the display size the computer tool declares, and reading a model's
// final text.
package cuwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
)

// Capture records the bodies of one HTTP exchange. Use its Middleware as an SDK
// request option for a single call; it is not safe for concurrent calls.
type Capture struct {
	// Request is the request body as sent.
	Request []byte
	// Status, Header and Response describe the response (Status is 0 when no
	// response arrived).
	Status   int
	Header   http.Header
	Response []byte
}

// Do makes one SDK request under cfg.Retry. Each attempt gets a fresh Capture
// (pass its Middleware to the SDK call) and a failed attempt's error goes
// through RequestError, so retries, timeouts and API errors read the same for
// every adapter. It returns the result and the Capture of the last attempt.
func Do[T any](ctx context.Context, cfg llm.Config, provider, what string, call func(ctx context.Context, c *Capture) (T, error)) (T, *Capture, error) {
	var res T
	capt := &Capture{}
	err := llm.Do(ctx, cfg.Retry, func(ctx context.Context) error {
		*capt = Capture{}
		var err error
		if res, err = call(ctx, capt); err != nil {
			return RequestError(ctx, capt, provider, what, cfg, err)
		}
		return nil
	})
	return res, capt, err
}

// Middleware has the shape of both SDKs' option.Middleware: it reads and
// restores the request and response bodies so the SDK still sees them.
func (c *Capture) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading request body: %w", err)
		}
		c.Request = b
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := next(req)
	if err != nil || resp == nil {
		return resp, err
	}
	c.Status = resp.StatusCode
	c.Header = resp.Header.Clone()
	b, rerr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	c.Response = b
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if rerr != nil {
		return nil, fmt.Errorf("reading response body: %w", rerr)
	}
	return resp, nil
}

// Bodies returns the request and response bodies as a record keeps them:
// images in the request replaced by their references (es, see Elide) and
// secret redacted from both.
func (c *Capture) Bodies(es []Elision, secret string) (request, response []byte) {
	return Redact(Elide(c.Request, es), secret), Redact(c.Response, secret)
}

// Redact replaces every occurrence of key in b with secret.Marker (the one
// scrubber: secret.NewScrubber). Keys shorter than secret.MinLen are left
// alone (they would match ordinary text).
func Redact(b []byte, key string) []byte { return secret.NewScrubber(key).Bytes(b) }

// RedactString is Redact for strings.
func RedactString(s, key string) string { return secret.NewScrubber(key).String(s) }

// Elision replaces one image's encoded data in a recorded body.
type Elision struct {
	// Data is the exact text of the image in the body (base64, or a data URL).
	Data string
	// Ref is what the record shows instead (llm.Image.Ref, or a placeholder).
	Ref string
}

// Elide returns body with each Elision's data replaced by its reference. The
// elisions must be listed in the order the images appear in the body: each one
// replaces the next occurrence of its data after the previous replacement, so
// two identical screenshots keep their own references. Base64 and data URLs
// contain no characters JSON escapes, so the encoded text appears verbatim.
func Elide(body []byte, es []Elision) []byte {
	var out bytes.Buffer
	pos := 0
	for _, e := range es {
		if e.Data == "" {
			continue
		}
		i := bytes.Index(body[pos:], []byte(e.Data))
		if i < 0 {
			continue
		}
		out.Write(body[pos : pos+i])
		out.WriteString(e.Ref)
		pos += i + len(e.Data)
	}
	out.Write(body[pos:])
	return out.Bytes()
}

// ImageRef is how records name img: its Ref, or a placeholder with its step.
func ImageRef(img llm.Image) string {
	if img.Ref != "" {
		return img.Ref
	}
	return fmt.Sprintf("<image of step %d elided>", img.Step)
}

// MIME is img's media type: its MIME, else image/png for PNG data and
// image/jpeg otherwise.
func MIME(img llm.Image) string {
	if img.MIME != "" {
		return img.MIME
	}
	if len(img.Data) > 4 && string(img.Data[1:4]) == "PNG" {
		return "image/png"
	}
	return "image/jpeg"
}

// DeclaredDisplay returns the display size the computer tool declares after a
// screenshot of frame f, prev being the size declared so far (zero before the
// first): the size of the image sent, except that a frame showing only part
// of its display (a zoom) leaves it unchanged, since the model keeps
// addressing the full screen.
func DeclaredDisplay(prev geom.Size, f geom.Frame) geom.Size {
	if prev == (geom.Size{}) || f.Region == f.Display.Bounds || f.Display.Bounds.Empty() {
		return f.ImageSize()
	}
	return prev
}

// TaskText is the opening text of a conversation: the task, and the notes
// kept so far when there are any.
func TaskText(task, memory string) string {
	text := "Task: " + task
	if memory != "" {
		text += "\n\nNotes so far:\n" + memory
	}
	return text
}

// Notes are the texts an observation adds to the next request: the user's
// answers to the model's questions (llm.AnswerNote), the loop's feedback
// (marked as a re-ask when the last answer could not be used), its warnings,
// and the notes kept so far when they changed since lastMemory. Before the
// first exchange (started false) the notes go in TaskText instead.
func Notes(obs llm.Observation, lastMemory string, started bool) []string {
	notes := llm.AnswerNotes(obs.Answers)
	if obs.Feedback != "" {
		if obs.ReAsk {
			notes = append(notes, "Your previous answer could not be used: "+obs.Feedback)
		} else {
			notes = append(notes, obs.Feedback)
		}
	}
	for _, w := range obs.Warnings {
		notes = append(notes, "Warning: "+w)
	}
	if obs.Memory != "" && obs.Memory != lastMemory && started {
		notes = append(notes, "Notes so far:\n"+obs.Memory)
	}
	return notes
}

// APIError builds the error for an HTTP error response of provider. The
// message comes from the body ({"error":{"type","code","message"}}, the shape
// both Anthropic and OpenAI use) with secret redacted.
func APIError(provider string, status int, header http.Header, body []byte, secret string) *llm.APIError {
	e := &llm.APIError{Provider: provider, StatusCode: status, RetryAfter: llm.RetryAfterFrom(header, time.Now())}
	var env struct {
		Error struct {
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && (env.Error.Type != "" || env.Error.Message != "") {
		e.Type = env.Error.Type
		var code string
		if json.Unmarshal(env.Error.Code, &code) == nil && code != "" {
			// OpenAI puts the precise reason in code ("insufficient_quota",
			// "invalid_api_key", "rate_limit_exceeded"); type is coarser.
			e.Type = code
		}
		e.Message = RedactString(env.Error.Message, secret)
	} else {
		// Redact before clipping, so a key cut in two is not left half shown.
		msg := RedactString(strings.TrimSpace(string(body)), secret)
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		if msg == "" {
			msg = http.StatusText(status)
		}
		if msg == "" {
			msg = fmt.Sprintf("HTTP %d with an empty body", status)
		}
		e.Message = msg
	}
	if e.Type == "" && status == 529 {
		e.Type = "overloaded_error"
	}
	return e
}

// RequestError is the error of one failed attempt at a request to provider's
// API (named by what, such as "anthropic messages"), c having captured the
// exchange and ctx being the caller's context: *llm.APIError when the server
// answered with an error status; a timeout naming the per-attempt limit when
// the attempt ran out of its own time while ctx is still live; otherwise the
// failed request or unreadable response, each naming the variable of
// cfg.Vars to check. The cause stays wrapped for llm.Retryable; cfg.APIKey
// never appears.
func RequestError(ctx context.Context, c *Capture, provider, what string, cfg llm.Config, err error) error {
	if c.Status >= 400 {
		return APIError(provider, c.Status, c.Header, c.Response, cfg.APIKey)
	}
	var ne net.Error
	if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%s request timed out after %v (raise %s if the model is slow): %w", what, cfg.Timeout, cfg.Vars.TimeoutVar(), err)
	}
	if c.Status != 0 {
		return fmt.Errorf("%s response (HTTP %d) could not be read: %w", what, c.Status, err)
	}
	return fmt.Errorf("%s request failed (check %s and the network): %w", what, cfg.Vars.BaseURLVar(), err)
}

// Final is a model's closing text read as a verdict on the task, or as a
// question for the user (Question set, Status llm.Continue): the adapter then
// returns an ask_user text action and the task goes on with the answer.
type Final struct {
	Status         llm.Status
	Result         string
	BlockReason    string
	NextUserAction string
	Question       string
}

// Markers the system prompts ask a model to start its closing text with.
const (
	MarkQuestion = "QUESTION:"
	MarkBlocked  = "BLOCKED:"
	MarkFailed   = "FAILED:"
	MarkDone     = "DONE:"
)

// helpRequest matches closing texts that ask the user to do something before
// the task can go on (log in, solve a CAPTCHA, give missing information).
var helpRequest = regexp.MustCompile(`(?i)(\b(could|can|would) you (please )?(provide|tell|give|share|enter|type|confirm|approve|log ?in|sign ?in|solve|complete|unlock|check)\b` +
	`|\bplease (provide|enter|type|confirm|approve|log ?in|sign ?in|solve|complete|unlock|tell me|let me know)\b` +
	`|\b(i|i'll|i will|i would) need (you|your|the user|a human|human|someone)\b` +
	`|\b(requires?|needs?) (your|the user's|human|manual) (input|help|intervention|action|confirmation|approval|credentials)\b` +
	`|\bcaptcha\b|\btwo-factor\b|\b2fa\b|\bverification code\b|\bone-time (code|password)\b` +
	`|\b(cannot|can't|unable to) (proceed|continue) without (you|your|the user|human|a human)\b)`)

// offerMore matches the polite closing offers of a finished task ("Would you
// like me to do anything else?"), which are not questions for the task.
var offerMore = regexp.MustCompile(`(?i)\b(anything|something) else\b|\bany(thing)? (further|more)\b|\bother tasks?\b|\bfurther (help|assistance)\b`)

// ClassifyFinal reads a closing text (a model answer without any tool call).
// The adapters' system prompts ask the model to start with QUESTION: when it
// needs information or a decision only the user has, BLOCKED: when the user
// must act themselves, FAILED: when the task cannot be done and DONE: when it
// is; the first line starting with a marker counts (text before it is
// preamble). Without a marker a best-effort heuristic reads a request for help
// (asking the user to provide, confirm or log in; CAPTCHA, 2FA or
// verification codes; "cannot continue without you") or a closing question
// (the last line ends with "?", and is not an offer of more help) as a
// question, and anything else as done.
func ClassifyFinal(text string) Final {
	t := strings.TrimSpace(text)
	mark, r := findMarker(t)
	switch mark {
	case MarkQuestion:
		if r == "" {
			r = llm.HelpQuestion
		}
		return Final{Status: llm.Continue, Question: r}
	case MarkBlocked:
		return Final{Status: llm.Blocked, Result: r, BlockReason: "the model asked for help: " + firstLine(r), NextUserAction: r}
	case MarkFailed:
		return Final{Status: llm.Failed, Result: r}
	case MarkDone:
		return Final{Status: llm.Done, Result: r}
	}
	if helpRequest.MatchString(t) || isQuestion(t) {
		return Final{Status: llm.Continue, Question: t}
	}
	return Final{Status: llm.Done, Result: t}
}

// ReadFinal reads d.Observation, the closing text of an answer without tool
// calls, into d (ClassifyFinal): the verdict, or for a question one ask_user
// text action with status continue.
func ReadFinal(d *llm.Decision) {
	f := ClassifyFinal(d.Observation)
	d.Status, d.Result, d.BlockReason, d.NextUserAction = f.Status, f.Result, f.BlockReason, f.NextUserAction
	if f.Question != "" {
		d.Actions = []action.Action{{Kind: action.AskUser, Question: f.Question, Ask: action.AskText}}
	}
}

// findMarker returns the marker that starts the first line of t to start with
// one (case-insensitive, after spaces and markdown emphasis), and the text
// after it; mark is "" when no line does.
func findMarker(t string) (mark, rest string) {
	off := 0
	for line := range strings.Lines(t) {
		lead := len(line) - len(strings.TrimLeft(line, " \t*_#>"))
		upper := strings.ToUpper(line[lead:])
		for _, m := range []string{MarkQuestion, MarkBlocked, MarkFailed, MarkDone} {
			if strings.HasPrefix(upper, m) {
				return m, strings.TrimSpace(strings.TrimLeft(t[off+lead+len(m):], "*_ "))
			}
		}
		off += len(line)
	}
	return "", ""
}

// isQuestion reports whether a closing text ends by asking something: its last
// line ends with "?" and is not an offer of more help.
func isQuestion(t string) bool {
	last := t
	if i := strings.LastIndexByte(t, '\n'); i >= 0 {
		last = t[i+1:]
	}
	last = strings.TrimRight(strings.TrimSpace(last), "*_ ")
	return strings.HasSuffix(last, "?") && !offerMore.MatchString(last)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// SplitCombo splits an xdotool-style combination ("ctrl+shift+t") into key
// names; "ctrl++" names the plus key.
func SplitCombo(combo string) []string {
	s := strings.TrimSpace(combo)
	if s == "" {
		return nil
	}
	if s == "+" {
		return []string{"+"}
	}
	plus := strings.HasSuffix(s, "++")
	if plus {
		s = strings.TrimSuffix(s, "++")
	}
	var out []string
	for _, p := range strings.Split(s, "+") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	if plus {
		out = append(out, "+")
	}
	return out
}
