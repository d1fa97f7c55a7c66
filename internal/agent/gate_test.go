package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// gated returns a step that blocks until release is closed (or ctx ends).
func gated(release <-chan struct{}) stepFunc {
	return func(ctx context.Context, _ llm.Observation) (*llm.Decision, error) {
		select {
		case <-release:
			return &llm.Decision{Status: llm.Done, Result: "first done"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func startFirst(t *testing.T, r *Runner, script *scriptAdapter) <-chan Result {
	t.Helper()
	out := make(chan Result, 1)
	go func() { out <- r.Run(context.Background(), Task{Task: "first task"}, nil) }()
	waitFor(t, "first task in its model call", func() bool { return script.callCount() == 1 })
	return out
}

func TestGateQueue(t *testing.T) {
	d := newDesk(t)
	release := make(chan struct{})
	script := newScript(geom.ProfileFor("gpt-4o"), gated(release), done("second done"))
	r := d.runner(d.opts(script))
	first := startFirst(t, r, script)

	second := make(chan Result, 1)
	go func() { second <- r.Run(context.Background(), Task{Task: "second task"}, nil) }()
	waitFor(t, "second task queued", func() bool { info, _ := r.Current(); return info.Queued == 1 })
	info, ok := r.Current()
	if !ok || info.Task != "first task" || info.Step != 1 || info.Phase != "waiting for the model" {
		t.Fatalf("Current = %+v, %v", info, ok)
	}
	select {
	case res := <-second:
		t.Fatalf("queued task ran while the first was running: %+v", res)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	statusOf(t, <-first, Completed)
	res := <-second
	statusOf(t, res, Completed)
	if res.Result != "second done" {
		t.Fatalf("second result %q", res.Result)
	}
	if _, ok := r.Current(); ok {
		t.Fatal("Current reports a task after both finished")
	}
}

func TestGateQueueWaitIsCancellable(t *testing.T) {
	d := newDesk(t)
	release := make(chan struct{})
	defer close(release)
	script := newScript(geom.ProfileFor("gpt-4o"), gated(release))
	r := d.runner(d.opts(script))
	startFirst(t, r, script)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res := r.Run(ctx, Task{Task: "second"}, nil)
	statusOf(t, res, Cancelled)
	if !strings.Contains(res.Summary, "waiting") {
		t.Fatalf("summary %q", res.Summary)
	}
}

func TestGatePreempt(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"), block, done("second done"))
	o := d.opts(script)
	o.OnBusy = BusyPreempt
	r := d.runner(o)
	first := startFirst(t, r, script)
	res := r.Run(context.Background(), Task{Task: "second"}, nil)
	statusOf(t, res, Completed)
	old := <-first
	statusOf(t, old, Superseded)
	if !strings.Contains(old.Summary, "newer task") {
		t.Fatalf("summary %q", old.Summary)
	}
}

func TestGateReject(t *testing.T) {
	d := newDesk(t)
	release := make(chan struct{})
	script := newScript(geom.ProfileFor("gpt-4o"), gated(release))
	o := d.opts(script)
	o.OnBusy = BusyReject
	r := d.runner(o)
	first := startFirst(t, r, script)
	// The first task holds until release: a second that waited for it would never return here.
	second := make(chan Result, 1)
	go func() { second <- r.Run(context.Background(), Task{Task: "second"}, nil) }()
	var res Result
	select {
	case res = <-second:
	case <-time.After(time.Minute):
		t.Fatal("reject waited for the running task")
	}
	statusOf(t, res, Failed)
	if !strings.Contains(res.Summary, ErrBusy.Error()) || !strings.Contains(res.Summary, "first task") || !strings.Contains(res.Summary, "GUI_AGENT_ON_BUSY") {
		t.Fatalf("summary %q", res.Summary)
	}
	close(release)
	statusOf(t, <-first, Completed)
}

func TestCancelWithoutTask(t *testing.T) {
	d := newDesk(t)
	r := d.runner(d.opts(newScript(geom.ProfileFor("gpt-4o"), done("x"))))
	if r.Cancel("nothing") {
		t.Fatal("Cancel reported a task when none runs")
	}
}
