package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/hosting"
)

// Asking the calling client's user comes in two forms, by the protocol
// version the client speaks:
//
//   - before 2026-07-28, a server may send elicitation/create while it serves
//     a tool call: the tool waits for the answer (elicitor, in ask.go), and a
//     question answered on the dashboard first cancels the client's request;
//   - from 2026-07-28 on (multi round-trip requests, SEP-2322), it may not:
//     the tool call ends with an input_required result carrying the question
//     (InputRequests) and an opaque RequestState, and the client calls the
//     tool again with the answer (InputResponses) and that state.
//
// For the second, a tool call's work runs as a job that outlives the
// request: the job's questions end the request, and the retry resumes it.
// The state is a random key of the server's job table, bound to the session;
// it carries nothing a client could forge.

// work is a tool call's body when it may ask the client: ch asks the
// client's user (nil: it cannot), and progress reports to whichever request
// of the call is waiting now.
type work func(ctx context.Context, ch ask.Channel, progress func(agent.Event)) (*mcp.CallToolResult, error)

// job is work running across the requests of one multi round-trip call.
type job struct {
	token string
	ss    *mcp.ServerSession
	// tool and args (callDigest) are the call's: a retry carrying the state
	// must be the same call.
	tool   string
	args   [sha256.Size]byte
	call   *call // the request that started it: what the work records goes there
	s      *Server
	modes  modes // the client's elicitation modes
	cancel context.CancelFunc
	asks   chan clientAsk // questions for the client, from the work
	done   chan struct{}
	res    *mcp.CallToolResult
	err    error

	mu      sync.Mutex
	waiting map[string]clientAsk // input request id -> its question

	progress atomic.Pointer[func(agent.Event)]
	reap     sync.Once
}

// clientAsk is a question put to the client, how, and where its answer goes.
type clientAsk struct {
	id     string
	q      ask.Question
	params *mcp.ElicitParams
	answer chan ask.Answer
}

// jobKeep is how long a finished job no request collected is kept for a
// client's late retry.
const jobKeep = 10 * time.Minute

// MaxSessionJobs and MaxJobs cap the calls kept across requests (running,
// waiting for an answer, or finished and not yet collected by a retry): per
// session and in all. Each holds its question, screenshots and goroutine for
// up to the ask timeout and jobKeep after.
const (
	MaxSessionJobs = 16
	MaxJobs        = 256
)

// jobTable holds the jobs waiting for a client's retry.
type jobTable struct {
	mu   sync.Mutex
	jobs map[string]*job
}

// put adds j unless that would exceed a cap; finished jobs no retry
// collected make room first.
func (t *jobTable) put(j *job) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.jobs == nil {
		t.jobs = map[string]*job{}
	}
	mine := 0
	for k, o := range t.jobs {
		select {
		case <-o.done:
			if o.ss == j.ss || len(t.jobs) >= MaxJobs {
				delete(t.jobs, k)
				continue
			}
		default:
		}
		if o.ss == j.ss {
			mine++
		}
	}
	if mine >= MaxSessionJobs {
		return fmt.Errorf("this session already has %d calls waiting for an answer (the limit): answer them (retry each with its requestState and inputResponses) or cancel them before starting another", mine)
	}
	if len(t.jobs) >= MaxJobs {
		return fmt.Errorf("the server already holds %d calls waiting for an answer (the limit, over all sessions): try again once some are answered or cancelled", len(t.jobs))
	}
	t.jobs[j.token] = j
	return nil
}

// callDigest is the digest of a call's arguments in a canonical form (object
// keys sorted, no spacing), so that a retry re-encoding them matches.
func callDigest(raw json.RawMessage) [sha256.Size]byte {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if len(bytes.TrimSpace(raw)) == 0 || d.Decode(&v) != nil || v == nil {
		v = map[string]any{} // no arguments, null and {} are the same call
	}
	b, _ := json.Marshal(v)
	return sha256.Sum256(b)
}

// get returns the job of token if it belongs to ss.
func (t *jobTable) get(token string, ss *mcp.ServerSession) *job {
	t.mu.Lock()
	defer t.mu.Unlock()
	j := t.jobs[token]
	if j == nil || j.ss != ss {
		return nil
	}
	return j
}

func (t *jobTable) remove(j *job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.jobs, j.token)
}

// cancelSession cancels the jobs of an ended session.
func (t *jobTable) cancelSession(ss *mcp.ServerSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, j := range t.jobs {
		if j.ss == ss {
			j.cancel()
			delete(t.jobs, k)
		}
	}
}

// roundTripVersion is the first protocol version with multi round-trip
// requests.
const roundTripVersion = hosting.RoundTripVersion

// speaksRoundTrips reports whether ss's client speaks multi round-trip
// requests (protocol 2026-07-28 or later), as the SDK judges it (by the
// version the client asked for).
func speaksRoundTrips(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= roundTripVersion
}

// resumable runs w for the call c: directly (with the elicitor of an older
// client, or no channel), or as a job when the client answers questions by
// retrying the call; a retry carrying a RequestState resumes its job.
func (s *Server) resumable(ctx context.Context, c *call, w work) (*mcp.CallToolResult, error) {
	if c == nil || c.req == nil || c.req.Params == nil {
		return w(ctx, nil, func(agent.Event) {})
	}
	if state := c.req.Params.RequestState; state != "" {
		j := s.jobs.get(state, c.ss)
		if j == nil {
			return nil, errors.New("requestState is unknown or expired (the call it continued ended, or the server restarted): call the tool again without requestState")
		}
		if j.tool != c.req.Params.Name || j.args != callDigest(c.req.Params.Arguments) {
			return nil, fmt.Errorf("requestState belongs to another call (%s with other arguments): retry that call with the same tool and arguments, or call %s without requestState", j.tool, c.req.Params.Name)
		}
		j.deliver(c.req.Params.InputResponses)
		return s.await(ctx, c, j)
	}
	m, elicits := modesOf(c.ss)
	if !elicits || !speaksRoundTrips(c.ss) {
		return w(ctx, s.elicitorFor(c.ss), s.progressFunc(ctx, c.req))
	}
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	j := &job{token: newToken(), ss: c.ss, tool: c.req.Params.Name, args: callDigest(c.req.Params.Arguments),
		call: c, s: s, modes: m, cancel: cancel, asks: make(chan clientAsk), done: make(chan struct{}), waiting: map[string]clientAsk{}}
	if err := s.jobs.put(j); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(j.done)
		defer cancel()
		defer s.recoverTool(c.req.Params.Name, &j.err)
		progress := func(ev agent.Event) {
			if p := j.progress.Load(); p != nil {
				(*p)(ev)
			}
		}
		j.res, j.err = w(jctx, (*roundTrip)(j), progress)
	}()
	return s.await(ctx, c, j)
}

// await waits, for the request ctx of call c, until j finishes (its result
// is the call's) or asks the client (the call ends as input_required). The
// client cancelling the request cancels the job.
func (s *Server) await(ctx context.Context, c *call, j *job) (*mcp.CallToolResult, error) {
	p := s.progressFunc(ctx, c.req)
	j.progress.Store(&p)
	defer j.progress.Store(nil)
	finish := func() (*mcp.CallToolResult, error) {
		s.jobs.remove(j)
		if c != j.call { // the record of this request gets what the work did
			c.img, c.actions, c.frame, c.private = j.call.img, j.call.actions, j.call.frame, j.call.private
		}
		return j.res, j.err
	}
	select {
	case <-j.done:
		return finish()
	case a := <-j.asks:
		c.private = "input required: " + s.scrub.String(a.q.Text)
		j.reap.Do(func() { // a job no retry collects is dropped a while after it ends
			go func() {
				<-j.done
				time.AfterFunc(jobKeep, func() { s.jobs.remove(j) })
			}()
		})
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{a.id: a.params},
			RequestState:  j.token,
		}, nil
	case <-ctx.Done():
		j.cancel()
		<-j.done
		return finish()
	}
}

// deliver hands the client's answers to the questions waiting for them;
// answers to questions no longer waiting (answered on the dashboard first)
// are dropped.
func (j *job) deliver(responses mcp.InputResponseMap) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for id, r := range responses {
		a, ok := j.waiting[id]
		if !ok {
			continue
		}
		res, isElicit := r.(*mcp.ElicitResult)
		if !isElicit {
			continue
		}
		ans, err := answerOf(a.q, a.params, res)
		if err != nil {
			continue // out of band, or unreadable: the dashboard or the timeout decides
		}
		delete(j.waiting, id)
		a.answer <- ans
	}
}

// roundTrip is a job as the ask.Channel of its work.
type roundTrip job

func (r *roundTrip) Name() string { return ask.ByClient }

// Ask puts q to the client through the waiting (or next) request of the
// call, and waits for the retry that answers it.
func (r *roundTrip) Ask(ctx context.Context, q ask.Question) (ask.Answer, error) {
	j := (*job)(r)
	p, err := j.s.elicitParams(q, j.modes)
	if err != nil {
		return ask.Answer{}, err
	}
	a := clientAsk{id: q.ID, q: q, params: p, answer: make(chan ask.Answer, 1)}
	j.mu.Lock()
	j.waiting[a.id] = a
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		delete(j.waiting, a.id)
		j.mu.Unlock()
	}()
	select {
	case j.asks <- a:
	case <-ctx.Done():
		return ask.Answer{}, ctx.Err()
	}
	select {
	case ans := <-a.answer:
		return ans, nil
	case <-ctx.Done():
		if p.Mode == "url" {
			j.s.completeURL(j.ss, q.ID)
		}
		return ask.Answer{}, ctx.Err()
	}
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "rt-" + hex.EncodeToString(b[:])
}

// errOutOfBand is answerOf's accept of a URL-mode question: the answer
// itself comes from the dashboard.
var errOutOfBand = errors.New("the answer comes out of band")

// answerOf reads a client's elicitation result for q, asked with p.
func answerOf(q ask.Question, p *mcp.ElicitParams, res *mcp.ElicitResult) (ask.Answer, error) {
	switch ask.Outcome(res.Action) {
	case ask.Decline:
		return ask.Answer{Outcome: ask.Decline}, nil
	case ask.Cancel:
		return ask.Answer{Outcome: ask.Cancel}, nil
	case ask.Accept:
	default:
		return ask.Answer{}, fmt.Errorf("the client answered with action %q: want accept, decline or cancel", res.Action)
	}
	if p.Mode == "url" {
		return ask.Answer{}, errOutOfBand
	}
	if q.Kind == action.AskConfirm {
		ok, isBool := res.Content[fieldApprove].(bool)
		if !isBool {
			return ask.Answer{}, fmt.Errorf("the client's answer has no boolean %q", fieldApprove)
		}
		v := ask.No
		if ok {
			v = ask.Yes
		}
		return ask.Answer{Outcome: ask.Accept, Value: v}, nil
	}
	v, isString := res.Content[fieldAnswer].(string)
	if !isString {
		return ask.Answer{}, fmt.Errorf("the client's answer has no text %q", fieldAnswer)
	}
	return ask.Answer{Outcome: ask.Accept, Value: v}, nil
}
