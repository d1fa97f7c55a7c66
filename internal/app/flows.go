package app

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/trace"
	"github.com/guiagent/guiagent/internal/vision"
)

// flows runs flows (gui_run_flow, guiagent run) with the settings in force:
// act steps go to the task switch, the others to the plain-vision Seer.
type flows struct {
	a    *App
	seer vision.Seer // nil: steps that need the model fail unless cached
}

// newSeer builds the plain-vision service flows locate, query and assert
// with (the one of the vision tools: newVision), and names the model that
// locates for the cache. Without a model it returns nil: flows then replay
// cached elements only, and a step that needs the model fails saying why.
func newSeer(c config.Config) (vision.Seer, string, error) {
	if !modelConfigured(c) {
		return nil, "", nil
	}
	vm, err := newVision(c)
	if err != nil {
		return nil, "", err
	}
	return vm.seer, vm.locateBy, nil
}

// runner builds a flow runner from the App's parts and c.
func (f *flows) runner(c config.Config) (*flow.Runner, error) {
	a := f.a
	seer, model := f.seer, ""
	if seer == nil {
		var err error
		if seer, model, err = newSeer(c); err != nil {
			return nil, err
		}
	}
	o := flow.Options{
		Input: a.input, Executor: a.exec, Screen: a.screen, Shots: a.shots, Shot: shotOptions(c), Seer: seer, Model: model,
		OCR: a.ocr, Keys: a.keys, Logger: a.log,
		Confirm: func(ctx context.Context, keys []desktop.Key) error {
			return ask.ConfirmKeys(ctx, a.questions, a.keys, keys, "A flow step", c.AskTimeout, mcpserver.AskChannel(ctx))
		},
		NewRecorder: func(runID string, t agent.Task) (agent.Recorder, error) {
			if a.recordID != "" { // a fleet session's: shown to that session only
				return a.store.BeginOwned(trace.KindFlow, a.recordID, runID, t.Task, c)
			}
			return a.store.BeginFlow(runID, t.Task, c)
		},
	}
	if svc, ok := seer.(*vision.Service); ok {
		// Screenshots are prepared for the model that looks at them.
		ask := svc.AskProfile()
		o.Shot.Profile, o.AskProfile = svc.LocateProfile(), &ask
	}
	if a.tasks.configured() {
		o.Tasks = askingTasks{a.tasks}
	}
	return flow.NewRunner(o)
}

// askingTasks runs a flow's act steps so that their questions also go to the
// MCP client of the gui_run_flow call, when it can be asked.
type askingTasks struct{ t *taskSwitch }

func (a askingTasks) Run(ctx context.Context, t agent.Task, progress func(agent.Event)) agent.Result {
	if t.Ask == nil {
		t.Ask = mcpserver.AskChannel(ctx)
	}
	return a.t.Run(ctx, t, progress)
}

// Run runs fl with the configuration in force (mcpserver.FlowRunner).
func (f *flows) Run(ctx context.Context, fl *flow.Flow, vars map[string]string, cache *flow.Cache) flow.Result {
	r, err := f.runner(f.a.Config())
	if err != nil {
		return flow.Result{Flow: fl.Name, Status: flow.Failed, Summary: fmt.Sprintf("cannot run flows: %v", err), Steps: []flow.StepResult{}}
	}
	return r.Run(ctx, fl, vars, cache)
}

// RunFlow runs a parsed flow on this App (guiagent run).
func (a *App) RunFlow(ctx context.Context, f *flow.Flow, vars map[string]string, cache *flow.Cache) flow.Result {
	return a.flows.Run(ctx, f, vars, cache)
}

// Vision is the plain-vision service of the configuration in force (the one
// gui_locate, gui_query, gui_assert and gui_wait_for use), or ErrNoModel.
func (a *App) Vision() (*vision.Service, error) {
	c := a.Config()
	if !modelConfigured(c) {
		return nil, ErrNoModel
	}
	vm, err := newVision(c)
	if err != nil {
		return nil, err
	}
	return vm.seer, nil
}
