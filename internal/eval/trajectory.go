package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
	"github.com/guiagent/guiagent/internal/trace"
	"github.com/guiagent/guiagent/internal/uitree"
)

// TrajectorySchema names the format of trajectory.jsonl (README,
// "Trajectory format").
const TrajectorySchema = "guiagent.trajectory/v1"

// TrajectoryFile is the name of a run's trajectory under its folder.
const TrajectoryFile = "trajectory/trajectory.jsonl"

// TrajectoryRun is the first line of a trajectory.
type TrajectoryRun struct {
	Type    string   `json:"type"` // "run"
	Schema  string   `json:"schema"`
	Task    string   `json:"task"`
	Model   string   `json:"model"`
	Repeat  int      `json:"repeat"`
	Goal    string   `json:"goal,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Display Size     `json:"display"`
}

// Size is a desktop's size in pixels.
type Size struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// TrajectoryStep is one step of a trajectory. File names are relative to the
// folder of trajectory.jsonl.
type TrajectoryStep struct {
	Type string    `json:"type"` // "step"
	Step int       `json:"step"`
	Time time.Time `json:"time"`
	// Screenshot is the image the model was sent at this step.
	Screenshot *TrajectoryImage `json:"screenshot,omitempty"`
	// Elements is the accessibility tree's outline when the step began
	// (uitree.Outline: ref, role, name, states, box in screen pixels);
	// absent when the desktop has no tree.
	Elements string `json:"elements,omitempty"`
	// Request and Response are the model call's bodies as sent and
	// received, images referred to by file ("images/step-001.jpg").
	Request  string `json:"request,omitempty"`
	Response string `json:"response,omitempty"`
	// Decision is what the model decided, parsed.
	Decision *TrajectoryDecision `json:"decision,omitempty"`
	// Actions are the executed actions with their image and screen points.
	Actions     []action.Trace `json:"actions"`
	Usage       llm.Usage      `json:"usage"`
	ModelMillis int64          `json:"model_ms"`
	StepMillis  int64          `json:"step_ms"`
}

// TrajectoryImage is a screenshot file and how its pixels map to the screen.
type TrajectoryImage struct {
	File   string     `json:"file"`
	MIME   string     `json:"mime"`
	Width  int        `json:"width,omitempty"`
	Height int        `json:"height,omitempty"`
	Frame  geom.Frame `json:"frame"`
}

// TrajectoryDecision is the model's answer at one step.
type TrajectoryDecision struct {
	Observation     string     `json:"observation,omitempty"`
	Reasoning       string     `json:"reasoning,omitempty"`
	ExpectedOutcome string     `json:"expected_outcome,omitempty"`
	Status          llm.Status `json:"status,omitempty"`
}

// TrajectoryEnd is the last line of a trajectory.
type TrajectoryEnd struct {
	Type       string `json:"type"` // "end"
	Ending     string `json:"ending"`
	Pass       bool   `json:"pass"`
	Reason     string `json:"reason,omitempty"`
	Steps      int    `json:"steps"`
	WallMillis int64  `json:"wall_ms"`
}

// recorder keeps, while a run goes, what the run record does not hold: the
// element outline at each step.
type recorder struct {
	on     bool
	screen desktop.Screen

	mu       sync.Mutex
	outlines map[int]string
	noTree   bool

	runDir, task string // set once the run ended
}

// progress takes the outline when the agent asks the model for a step (the
// screen the model is shown).
func (r *recorder) progress(ev agent.Event) {
	if !r.on || ev.Step <= 0 || !strings.HasPrefix(ev.Message, "Asking the model for step") {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, done := r.outlines[ev.Step]; done || r.noTree {
		return
	}
	src, ok := desktop.ElementsOf(r.screen)
	if !ok {
		r.noTree = true
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	snap, err := src.Elements(ctx, desktop.ElementQuery{})
	if err != nil || len(snap.Elements) == 0 {
		return
	}
	uitree.Number(snap.Elements)
	if r.outlines == nil {
		r.outlines = map[int]string{}
	}
	r.outlines[ev.Step] = uitree.Outline(snap.Elements, nil)
}

func (r *recorder) outline(step int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.outlines[step]
}

// exportTrajectory writes the run's trajectory under runFolder/trajectory
// from its run record (whose files are already scrubbed) and what rec kept;
// every line is scrubbed again. It returns the file relative to out.
func exportTrajectory(out, runFolder string, rec *recorder, row Row, scrub *secret.Scrubber, t *Task) (string, error) {
	dir := filepath.Join(runFolder, filepath.Dir(filepath.FromSlash(TrajectoryFile)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	steps, err := readSteps(rec.runDir)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(filepath.Join(runFolder, filepath.FromSlash(TrajectoryFile)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriter(f)
	put := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = w.Write(append(scrub.Bytes(b), '\n'))
	}
	put(TrajectoryRun{Type: "run", Schema: TrajectorySchema, Task: row.Task, Model: row.Model, Repeat: row.Repeat,
		Goal: t.Goal, Tags: t.Tags, Display: Size{t.Display.W, t.Display.H}})
	for _, st := range steps {
		st.Elements = rec.outline(st.Step)
		for _, file := range []*string{&st.Request, &st.Response} {
			*file = copyRecordFile(rec.runDir, dir, *file, &err)
		}
		if st.Screenshot != nil {
			st.Screenshot.File = copyRecordFile(rec.runDir, dir, st.Screenshot.File, &err)
		}
		put(st)
	}
	put(TrajectoryEnd{Type: "end", Ending: row.Ending, Pass: row.Pass, Reason: row.Reason, Steps: row.Steps, WallMillis: row.WallMillis})
	err = errors.Join(err, w.Flush(), f.Close())
	rel, _ := filepath.Rel(out, filepath.Join(runFolder, filepath.FromSlash(TrajectoryFile)))
	return filepath.ToSlash(rel), err
}

// copyRecordFile copies rel (relative to the run record) to the same place
// under dir, so the references inside request bodies stay true; "" stays "".
func copyRecordFile(record, dir, rel string, errp *error) string {
	if rel == "" {
		return ""
	}
	src, err := os.Open(filepath.Join(record, filepath.FromSlash(rel)))
	if err != nil {
		*errp = errors.Join(*errp, err)
		return ""
	}
	defer src.Close()
	dst := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		*errp = errors.Join(*errp, err)
		return ""
	}
	d, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err == nil {
		_, err = io.Copy(d, src)
		err = errors.Join(err, d.Close())
	}
	*errp = errors.Join(*errp, err)
	return rel
}

// readSteps reads a run record's events.jsonl into steps, in step order.
func readSteps(record string) ([]TrajectoryStep, error) {
	f, err := os.Open(filepath.Join(record, trace.EventsFile))
	if err != nil {
		return nil, fmt.Errorf("the run record: %w", err)
	}
	defer f.Close()
	by := map[int]*TrajectoryStep{}
	get := func(n int, t time.Time) *TrajectoryStep {
		if by[n] == nil {
			by[n] = &TrajectoryStep{Type: "step", Step: n, Time: t, Actions: []action.Trace{}}
		}
		return by[n]
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ln trace.Line
		if json.Unmarshal(sc.Bytes(), &ln) != nil || ln.Step <= 0 {
			continue
		}
		addLine(get(ln.Step, ln.Time), ln)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]TrajectoryStep, 0, len(by))
	for _, st := range by {
		out = append(out, *st)
	}
	slices.SortFunc(out, func(a, b TrajectoryStep) int { return a.Step - b.Step })
	return out, nil
}

// addLine adds one event of the record to its step.
func addLine(st *TrajectoryStep, ln trace.Line) {
	switch agent.EventKind(ln.Kind) {
	case agent.EvScreenshot:
		if ln.Image != nil && ln.Image.Ref != "" {
			st.Screenshot = &TrajectoryImage{File: ln.Image.Ref, MIME: ln.Image.MIME, Width: ln.Image.Width, Height: ln.Image.Height, Frame: ln.Image.Frame}
		}
	case agent.EvModel:
		for _, f := range ln.Files {
			switch strings.TrimSuffix(path.Base(f), ".json") {
			case "request":
				st.Request = f
			case "response":
				st.Response = f
			}
		}
		var d llm.Decision
		if json.Unmarshal(ln.Decision, &d) == nil {
			st.Decision = &TrajectoryDecision{Observation: d.Observation, Reasoning: d.Reasoning, ExpectedOutcome: d.ExpectedOutcome, Status: d.Status}
		}
	case agent.EvStep:
		var tr agent.StepTrace
		if json.Unmarshal(ln.StepTrace, &tr) == nil {
			st.Actions = tr.Actions
			if st.Actions == nil {
				st.Actions = []action.Trace{}
			}
			st.Usage, st.ModelMillis, st.StepMillis = tr.Usage, tr.ModelMillis, tr.StepMillis
		}
	}
}
