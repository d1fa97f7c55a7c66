package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/config"
)

// Runner runs gui_execute_task tasks, one desktop task at a time. It satisfies
// mcpserver.TaskRunner. It is safe for concurrent use: concurrent Run calls
// queue, preempt or are rejected according to Options.OnBusy.
type Runner struct {
	o Options

	mu        sync.Mutex
	cur       *run
	waiting   int
	observers map[int]Observer
	nextObs   int
}

// RunInfo describes the running task, for the dashboard.
type RunInfo struct {
	RunID    string    `json:"run_id"`
	Task     string    `json:"task"`
	Step     int       `json:"step"`
	MaxSteps int       `json:"max_steps"`
	Phase    string    `json:"phase"`
	Started  time.Time `json:"started"`
	// Queued counts tasks waiting for this one to finish.
	Queued int `json:"queued"`
}

// stopError is the cancellation cause of Runner.Cancel.
type stopError struct{ reason string }

func (e *stopError) Error() string { return "stopped: " + e.reason }

var (
	// errSuperseded is the cancellation cause of a preempted run.
	errSuperseded = errors.New("superseded by a newer task")
	// errRunDeadline is the cause when the task's own timeout passes.
	errRunDeadline = errors.New("task deadline passed")
)

// ErrBusy is reported (in a failed Result's summary) when OnBusy is reject and
// a task is already running.
var ErrBusy = errors.New("another desktop task is running")

// New checks o and returns a Runner. It has no side effects.
func New(o Options) (*Runner, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Runner{o: o, observers: map[int]Observer{}}, nil
}

// AddObserver subscribes obs to the events of every run from now on (the live
// dashboard). The returned function unsubscribes it. Observers are called
// synchronously from the run and must return quickly.
func (r *Runner) AddObserver(obs Observer) (remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.nextObs
	r.nextObs++
	r.observers[id] = obs
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.observers, id)
	}
}

func (r *Runner) observerList() []Observer {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Observer, 0, len(r.observers))
	for i := range r.nextObs {
		if o, ok := r.observers[i]; ok {
			out = append(out, o)
		}
	}
	return out
}

// Current describes the running task; ok is false when none is running.
func (r *Runner) Current() (info RunInfo, ok bool) {
	r.mu.Lock()
	cur, queued := r.cur, r.waiting
	r.mu.Unlock()
	if cur == nil {
		return RunInfo{}, false
	}
	info = cur.info()
	info.Queued = queued
	return info, true
}

// Cancel stops the running task, which ends as cancelled with reason in its
// summary (the dashboard's Stop). It reports whether a task was running.
func (r *Runner) Cancel(reason string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return false
	}
	if strings.TrimSpace(reason) == "" {
		reason = "cancelled by the user"
	}
	r.cur.cancel(&stopError{reason})
	return true
}

// Run executes t and returns its result; it never panics on bad input and
// always returns a Result with a status. progress, when not nil, receives the
// EvProgress events (for MCP progress notifications); observers get every event.
func (r *Runner) Run(ctx context.Context, t Task, progress func(Event)) Result {
	start := time.Now()
	id := newRunID(start)
	if strings.TrimSpace(t.Task) == "" {
		return quickResult(id, start, Failed, "the task is empty: describe the goal in plain language, e.g. \"open the settings and enable dark mode\"")
	}
	if t.MaxSteps < 0 || t.Timeout < 0 {
		return quickResult(id, start, Failed, "max_steps and timeout_s must not be negative")
	}
	ru := newRun(ctx, r, id, t, progress)
	if res, ok := r.acquire(ctx, ru); !ok {
		return res
	}
	defer r.release(ru)
	return ru.execute()
}

// acquire makes ru the current run, waiting, preempting or refusing per OnBusy.
func (r *Runner) acquire(ctx context.Context, ru *run) (Result, bool) {
	counted := false
	defer func() {
		if counted {
			r.mu.Lock()
			r.waiting--
			r.mu.Unlock()
		}
	}()
	for {
		r.mu.Lock()
		if r.cur == nil {
			r.cur = ru
			r.mu.Unlock()
			return Result{}, true
		}
		cur := r.cur
		switch r.o.OnBusy {
		case BusyReject:
			r.mu.Unlock()
			info := cur.info()
			return quickResult(ru.id, ru.started, Failed, fmt.Sprintf(
				"%v (run %s, step %d: %q); try again when it finishes, or set %s=queue to wait or preempt to replace it",
				ErrBusy, info.RunID, info.Step, shorten(info.Task, 80), config.Var("OnBusy"))), false
		case BusyPreempt:
			cur.cancel(errSuperseded)
		}
		if !counted {
			r.waiting++
			counted = true
		}
		r.mu.Unlock()
		select {
		case <-cur.done:
		case <-ctx.Done():
			return quickResult(ru.id, ru.started, Cancelled,
				fmt.Sprintf("cancelled while waiting for the running task (run %s) to finish", cur.id)), false
		}
	}
}

func (r *Runner) release(ru *run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == ru {
		r.cur = nil
	}
	close(ru.done)
}

func quickResult(id string, start time.Time, st Status, summary string) Result {
	return Result{Status: st, Summary: summary, RunID: id, Trace: []StepTrace{},
		Usage: RunUsage{WallMillis: time.Since(start).Milliseconds()}}
}

// newRunID returns a sortable, unique run id such as "20260102-150405-a1b2c3".
func newRunID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
