package flow

import (
	"fmt"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
)

// begin opens the run record (Options.NewRecorder), as a task run's.
func (ru *run) begin() {
	if ru.r.o.NewRecorder == nil {
		return
	}
	rec, err := ru.r.o.NewRecorder(ru.id, agent.Task{Task: "flow: " + ru.f.Name, Display: ru.f.Display})
	if err != nil {
		ru.r.o.Logger.Warn("flow run not recorded", "error", err)
		return
	}
	ru.rec = rec
	ru.res.RunDir, ru.res.Report = rec.Dir(), rec.ReportPath()
	ru.emit(agent.Event{Kind: agent.EvStart, Message: "flow: " + ru.f.Name})
}

func (ru *run) emit(ev agent.Event) {
	if ru.rec == nil {
		return
	}
	ev.Time, ev.RunID = time.Now(), ru.id
	ru.rec.OnEvent(ev)
}

// record writes one step: its screenshot, its actions, and a step trace whose
// observation says what was located where and whether the cache was used.
func (ru *run) record(st Step, sr StepResult, shot *imaging.Shot) {
	if ru.rec == nil {
		return
	}
	frameID := ""
	if shot != nil {
		img := imageOf(shot)
		img.Step = st.Index
		frameID = shot.Frame.ID
		ru.emit(agent.Event{Kind: agent.EvScreenshot, Step: st.Index, Image: &img})
	}
	for i := range sr.Actions {
		ru.emit(agent.Event{Kind: agent.EvAction, Step: st.Index, Action: &sr.Actions[i]})
	}
	var obs []string
	obs = append(obs, sr.Description)
	if sr.Box != nil {
		obs = append(obs, fmt.Sprintf("located at box (%g,%g)-(%g,%g) image px", sr.Box.X1, sr.Box.Y1, sr.Box.X2, sr.Box.Y2))
	}
	switch sr.Cache {
	case CacheHit:
		obs = append(obs, "cache: hit (verified at the cached place: the element's identity, else its fingerprint)")
	case CacheMoved:
		obs = append(obs, "cache: moved (fingerprint found elsewhere on the screen)")
	case CacheMiss:
		if sr.ModelCalls == 0 {
			obs = append(obs, "cache: not used (located afresh with no model)")
		} else {
			obs = append(obs, "cache: not used (the model located it)")
		}
	}
	if sr.TaskRunID != "" {
		obs = append(obs, "agent run "+sr.TaskRunID)
	}
	if sr.Value != "" {
		obs = append(obs, "value: "+sr.Value)
	}
	outcome := sr.Status
	if sr.Error != "" {
		outcome += ": " + sr.Error
	}
	trace := agent.StepTrace{Step: st.Index, Observation: strings.Join(obs, "; "), Actions: sr.Actions,
		Outcome: outcome, StepMillis: sr.Millis, FrameID: frameID}
	ru.emit(agent.Event{Kind: agent.EvStep, Step: st.Index, StepDone: &trace})
}

// finish writes the run's result and closes the record.
func (ru *run) finish() {
	if ru.rec == nil {
		return
	}
	st := agent.Completed
	if ru.res.Status != Passed {
		st = agent.Failed
	}
	res := agent.Result{Status: st, Summary: ru.res.Summary, Steps: len(ru.res.Steps), RunID: ru.id,
		RunDir: ru.res.RunDir, Report: ru.res.Report, Trace: []agent.StepTrace{},
		Usage: agent.RunUsage{Usage: llm.Usage{InputTokens: ru.res.Usage.InputTokens, OutputTokens: ru.res.Usage.OutputTokens}, WallMillis: ru.res.WallMillis}}
	ru.emit(agent.Event{Kind: agent.EvFinish, Result: &res})
	if err := ru.rec.Close(); err != nil {
		ru.r.o.Logger.Warn("closing the flow run record", "error", err)
	}
}
