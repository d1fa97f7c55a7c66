package app

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/secret"
)

// ErrNoModel explains what to set for gui_execute_task.
var ErrNoModel = errors.New("no model configured for gui_execute_task: set " + config.Var("Provider") + " (openai, anthropic or gemini), " +
	config.Vars("Model", "APIKey") + " (and " + config.Var("BaseURL") + " for a local or compatible server), or PUT them to /api/settings; `guiagent doctor` checks them")

// generation is one task runner built from one set of settings, with the
// tasks running on it.
type generation struct {
	runner  *agent.Runner // nil: no model configured
	display string        // the default display of its tasks ("" = primary)
	running sync.WaitGroup
	tasks   atomic.Int64 // Run calls on this generation not yet returned
}

// taskSwitch runs gui_execute_task on the runner of the settings in force. A
// settings change builds a new runner; tasks already running finish on the
// old one, and the new one starts its first task only when they have ended
// (queue), after stopping them (preempt), or refuses it (reject), so there is
// still one desktop task at a time. It is safe for concurrent use.
type taskSwitch struct {
	onBusy string
	scrub  *secret.Scrubber // scrubs results and progress (shared: it learns keys set later)

	mu   sync.Mutex
	cur  *generation
	prev []*generation // older generations that may still run a task

	obsMu  sync.Mutex
	obs    map[int]agent.Observer
	nextID int
	fanout agent.ObserverFunc
}

func newTaskSwitch(onBusy string, scrub *secret.Scrubber) *taskSwitch {
	t := &taskSwitch{onBusy: onBusy, scrub: scrub, cur: &generation{}, obs: map[int]agent.Observer{}}
	t.fanout = func(ev agent.Event) {
		t.obsMu.Lock()
		list := make([]agent.Observer, 0, len(t.obs))
		for _, o := range t.obs {
			list = append(list, o)
		}
		t.obsMu.Unlock()
		for _, o := range list {
			o.OnEvent(ev)
		}
	}
	return t
}

// set makes r (nil: no model) the runner of later tasks; display is their
// default display.
func (t *taskSwitch) set(r *agent.Runner, display string) {
	if r != nil {
		r.AddObserver(t.fanout)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prev = append(t.prev, t.cur)
	t.cur = &generation{runner: r, display: display}
}

func (t *taskSwitch) configured() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur.runner != nil
}

// AddObserver subscribes obs to the events of every task from now on, on
// whichever runner it runs.
func (t *taskSwitch) AddObserver(obs agent.Observer) (remove func()) {
	t.obsMu.Lock()
	defer t.obsMu.Unlock()
	id := t.nextID
	t.nextID++
	t.obs[id] = obs
	return func() {
		t.obsMu.Lock()
		defer t.obsMu.Unlock()
		delete(t.obs, id)
	}
}

// current describes the running task of any generation.
func (t *taskSwitch) current() (agent.RunInfo, bool) {
	for _, g := range t.generations() {
		if g.runner != nil {
			if info, ok := g.runner.Current(); ok {
				return info, true
			}
		}
	}
	return agent.RunInfo{}, false
}

// cancel stops the running task of every generation; it reports whether one ran.
func (t *taskSwitch) cancel(reason string) bool {
	stopped := false
	for _, g := range t.generations() {
		if g.runner != nil && g.runner.Cancel(reason) {
			stopped = true
		}
	}
	return stopped
}

func (t *taskSwitch) generations() []*generation {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*generation{t.cur}, t.prev...)
}

// Run runs task on the current runner and scrubs its secrets from the result.
func (t *taskSwitch) Run(ctx context.Context, task agent.Task, progress func(agent.Event)) agent.Result {
	t.mu.Lock()
	g, old := t.cur, t.prev
	g.running.Add(1)
	g.tasks.Add(1)
	t.mu.Unlock()
	defer func() { g.tasks.Add(-1); g.running.Done() }()
	if g.runner == nil {
		return agent.Result{Status: agent.Failed, Summary: ErrNoModel.Error(), Trace: []agent.StepTrace{}}
	}
	if task.Display == "" {
		task.Display = g.display
	}
	if res, ok := t.waitForOlder(ctx, old); !ok {
		return res
	}
	if progress != nil {
		inner := progress
		progress = func(ev agent.Event) {
			ev.Message = t.scrub.String(ev.Message)
			inner(ev)
		}
	}
	return scrubResult(t.scrub, g.runner.Run(ctx, task, progress))
}

// waitForOlder lets the tasks of older generations end as OnBusy says.
func (t *taskSwitch) waitForOlder(ctx context.Context, old []*generation) (agent.Result, bool) {
	for _, g := range old {
		if g.runner == nil {
			continue
		}
		if _, busy := g.runner.Current(); busy {
			switch t.onBusy {
			case agent.BusyReject:
				return agent.Result{Status: agent.Failed, Summary: agent.ErrBusy.Error() + "; try again when it finishes", Trace: []agent.StepTrace{}}, false
			case agent.BusyPreempt:
				g.runner.Cancel("superseded by a newer task")
			}
		}
		ch := make(chan struct{})
		go func() { g.running.Wait(); close(ch) }()
		select {
		case <-ch:
		case <-ctx.Done():
			return agent.Result{Status: agent.Cancelled, Summary: "cancelled while waiting for the running task to finish", Trace: []agent.StepTrace{}}, false
		}
	}
	t.mu.Lock()
	// Generations with no task left are forgotten; none gets new tasks.
	keep := t.prev[:0]
	for _, g := range t.prev {
		if g.tasks.Load() > 0 {
			keep = append(keep, g)
		}
	}
	t.prev = keep
	t.mu.Unlock()
	return agent.Result{}, true
}

// scrubResult replaces the secrets s knows in every string of r.
func scrubResult(s *secret.Scrubber, r agent.Result) agent.Result {
	if s.Empty() {
		return r
	}
	b, err := json.Marshal(r)
	if err != nil {
		return r
	}
	clean := s.Bytes(b)
	if string(clean) == string(b) {
		return r
	}
	var out agent.Result
	if err := json.Unmarshal(clean, &out); err != nil {
		return r
	}
	return out
}
