package eval

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform"
)

// Endings of a run.
const (
	Completed   = "completed"
	Blocked     = "blocked"
	Failed      = "failed"
	OutOfBudget = "out_of_budget"
	SetupError  = "setup_error"
	Cancelled   = "cancelled"
)

// Row is one run: a task, a model, a repeat.
type Row struct {
	Task   string `json:"task"`
	Model  string `json:"model"`
	Repeat int    `json:"repeat"`
	// Pass is set when the run ended completed and every check passed.
	Pass bool `json:"pass"`
	// Ending is completed, blocked, failed, out_of_budget, setup_error or
	// cancelled; Reason says more (the agent's summary, the setup failure).
	Ending       string        `json:"ending"`
	Reason       string        `json:"reason,omitempty"`
	Steps        int           `json:"steps"`
	ModelCalls   int           `json:"model_calls"`
	InputTokens  int           `json:"input_tokens"`
	OutputTokens int           `json:"output_tokens"`
	WallMillis   int64         `json:"wall_ms"`
	ModelMillis  int64         `json:"model_ms"`
	SetupMillis  int64         `json:"setup_ms"`
	Checks       []CheckResult `json:"checks,omitempty"`
	Tags         []string      `json:"tags,omitempty"`
	// Dir is the run's folder under the output folder; Report the run
	// record's report.html and Trajectory the exported JSONL, both relative
	// to the output folder ("" when there is none).
	Dir        string `json:"dir"`
	Report     string `json:"report,omitempty"`
	Trajectory string `json:"trajectory,omitempty"`
}

// job is one run to do.
type job struct {
	task   *Task
	model  Model
	repeat int
}

// runner holds what every run of a suite shares.
type runner struct {
	o     Options
	suite *Suite
}

// run does one job: a private desktop of the task's size, its setup, the
// task, the checks and the trajectory; everything it started is stopped
// before it returns.
func (r *runner) run(ctx context.Context, j job) Row {
	row := Row{Task: j.task.Name, Model: j.model.Name, Repeat: j.repeat, Tags: j.task.Tags,
		Dir: filepath.ToSlash(filepath.Join("runs", safeName(j.model.Name), j.task.Name, strconv.Itoa(j.repeat)))}
	dir := filepath.Join(r.o.Out, filepath.FromSlash(row.Dir))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return setupFailed(row, fmt.Errorf("create the run folder: %w", err))
	}
	c, stopModel, err := r.config(j, dir)
	if err != nil {
		return setupFailed(row, err)
	}
	defer stopModel()
	started := time.Now()
	a, err := app.New(ctx, c, app.Extra{Log: io.Discard, Version: r.o.Version, ForceVirtual: true})
	if err != nil {
		return setupFailed(row, fmt.Errorf("start the private desktop: %w", err))
	}
	defer a.Close()
	out := &outputBuffer{}
	defer out.close() // after the commands, which write to it, have stopped
	cmds, err := r.setup(ctx, a, j.task, out, dir)
	defer stopAll(cmds)
	row.SetupMillis = time.Since(started).Milliseconds()
	if err != nil {
		if ctx.Err() != nil {
			row.Ending, row.Reason = Cancelled, "interrupted during the setup"
			return row
		}
		return setupFailed(row, err)
	}
	rec := &recorder{on: r.o.Trajectories, screen: a.Screen()}
	r.perform(ctx, a, j.task, rec, &row)
	if row.Ending != Cancelled {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*DefaultCheckTimeout)
		row.Checks = r.checks(cctx, a, j.task, out)
		cancel()
	}
	row.Pass = row.Ending == Completed && len(row.Checks) == len(j.task.Checks)
	for _, ch := range row.Checks {
		row.Pass = row.Pass && ch.Pass
	}
	row.Reason = a.Scrubber().String(row.Reason)
	if r.o.Trajectories && rec.runDir != "" {
		if path, err := exportTrajectory(r.o.Out, dir, rec, row, a.Scrubber(), j.task); err != nil {
			row.Reason = strings.TrimSpace(row.Reason + "; the trajectory export failed: " + err.Error())
		} else {
			row.Trajectory = path
		}
	}
	return row
}

// config is the run's configuration: the base one pointed at the model,
// with a private display of the task's size, the task's token budget and
// the run records in the run's folder.
func (r *runner) config(j job, dir string) (config.Config, func(), error) {
	c, stop, err := j.model.configure(r.o.Config)
	if err != nil {
		return c, nil, err
	}
	c.VirtualDisplay, c.XDisplay, c.VNC = j.task.Display, "", "" // always a private display
	c.DisplayIndex = ""
	if j.task.URL != "" { // a private browser of its own
		c.Backend, c.BrowserURL, c.BrowserIsolated, c.BrowserViewport = string(platform.Browser), "", true, j.task.Display
		c.VirtualDisplay = geom.Size{}
	}
	c.RunsDir = filepath.Join(dir, "record")
	c.LogFile = filepath.Join(dir, "guiagent.log")
	c.DebugImages = true
	c.HTTPToken = "" // each run generates its own
	if j.task.Budget.Tokens > 0 {
		c.TokenBudget = j.task.Budget.Tokens
	}
	return c, stop, nil
}

func setupFailed(row Row, err error) Row {
	row.Ending, row.Reason = SetupError, err.Error()
	return row
}

// perform runs the task (the agent loop or a flow) and fills row from its result.
func (r *runner) perform(ctx context.Context, a *app.App, t *Task, rec *recorder, row *Row) {
	if t.Flow != nil {
		res := a.RunFlow(ctx, t.Flow.Flow, nil, nil)
		row.Ending, row.Reason = Completed, res.Summary
		if res.Status != flow.Passed {
			row.Ending = Failed
		}
		if ctx.Err() != nil {
			row.Ending = Cancelled
		}
		row.Steps, row.ModelCalls, row.WallMillis = len(res.Steps), res.Usage.Calls, res.WallMillis
		row.InputTokens, row.OutputTokens = res.Usage.InputTokens, res.Usage.OutputTokens
		row.Report = r.rel(res.Report)
		rec.runDir = res.RunDir
		return
	}
	task := agent.Task{Task: t.Goal, MaxSteps: t.Budget.Steps, Timeout: time.Duration(t.Budget.Seconds) * time.Second}
	res := a.RunTask(ctx, task, rec.progress)
	row.Ending, row.Reason = ending(res), res.Summary
	row.Steps, row.ModelCalls, row.WallMillis = res.Steps, res.Usage.Calls, res.Usage.WallMillis
	row.InputTokens, row.OutputTokens = res.Usage.InputTokens, res.Usage.OutputTokens
	for _, st := range res.Trace {
		row.ModelMillis += st.ModelMillis
	}
	row.Report = r.rel(res.Report)
	rec.runDir, rec.task = res.RunDir, t.Goal
}

// rel is path relative to the output folder ("" stays "").
func (r *runner) rel(path string) string {
	if path == "" {
		return ""
	}
	if rel, err := filepath.Rel(r.o.Out, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}

// budgetSummaries are how the agent's summary begins when a run ran out of
// its steps or tokens (a deadline is the Timeout status).
var budgetSummaries = []string{"reached the step limit", "token budget exhausted"}

// ending is the run's ending from the agent's result.
func ending(res agent.Result) string {
	switch res.Status {
	case agent.Completed:
		return Completed
	case agent.Blocked:
		return Blocked
	case agent.Timeout:
		return OutOfBudget
	case agent.Cancelled, agent.Superseded:
		return Cancelled
	}
	for _, s := range budgetSummaries {
		if strings.HasPrefix(res.Summary, s) {
			return OutOfBudget
		}
	}
	return Failed
}

// setup runs the task's setup steps in order on a's desktop; the commands
// it started (still running: the applications) are returned to be stopped.
func (r *runner) setup(ctx context.Context, a *app.App, t *Task, out *outputBuffer, dir string) ([]*platform.Command, error) {
	log, err := os.OpenFile(filepath.Join(dir, "setup.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	out.file = log
	var cmds []*platform.Command
	display, opened := a.DisplayName(), t.URL == ""
	if t.URL != "" {
		display = "" // a page has no X display for the commands
	}
	// The page opens once the commands before it have started (a local
	// server), before the first setup flow or the task.
	open := func() error {
		if opened {
			return nil
		}
		opened = true
		nav, ok := desktop.CapabilityOf[desktop.Navigator](a.Screen())
		if !ok {
			return fmt.Errorf("url %s: the backend %s cannot open pages", t.URL, a.Screen().Name())
		}
		if _, err := nav.Navigate(ctx, desktop.Navigation{URL: t.URL}); err != nil {
			return fmt.Errorf("open the task's url: %w", err)
		}
		return nil
	}
	for i, st := range t.Setup {
		if st.Flow != nil {
			if err := open(); err != nil {
				return cmds, err
			}
			res := a.RunFlow(ctx, st.Flow.Flow, nil, nil)
			if res.Status != flow.Passed {
				return cmds, fmt.Errorf("setup step %d, the flow %s: %s", i+1, filepath.Base(st.Flow.Path), res.Summary)
			}
			continue
		}
		cmd, err := platform.StartCommandIn(r.suite.Dir, display, r.command(st.Run), out)
		if err != nil {
			return cmds, fmt.Errorf("setup step %d: %w", i+1, err)
		}
		cmds = append(cmds, cmd)
		if err := waitStarted(ctx, cmd, st, out); err != nil {
			return cmds, fmt.Errorf("setup step %d (%s): %w", i+1, st.Run, err)
		}
	}
	return cmds, open()
}

// command puts this guiagent binary in place of a leading "guiagent".
func (r *runner) command(cmdline string) string {
	if r.o.Binary == "" {
		return cmdline
	}
	if cmdline == "guiagent" || strings.HasPrefix(cmdline, "guiagent ") {
		return shellQuote(r.o.Binary) + strings.TrimPrefix(cmdline, "guiagent")
	}
	return cmdline
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// startedAfter is how long a setup command without a ready pattern may run
// before it counts as started (an application); one that exits sooner must
// exit 0.
const startedAfter = time.Second

// waitStarted waits until st's ready pattern shows in the output (or, without
// one, startedAfter), failing when the command exits first with a non-zero
// status, or exits at all before its ready pattern showed, or the wait times out.
func waitStarted(ctx context.Context, cmd *platform.Command, st SetupStep, out *outputBuffer) error {
	limit := startedAfter
	if st.Ready != nil {
		limit = st.Timeout
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if st.Ready != nil && out.match(st.Ready) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-cmd.Exited():
			code := cmd.ExitCode()
			switch {
			case st.Ready != nil && out.match(st.Ready):
				return nil
			case code != 0:
				return fmt.Errorf("the command exited with status %d: %s", code, out.tail())
			case st.Ready != nil:
				return fmt.Errorf("the command exited before its output matched ready (%s): %s", st.Ready, out.tail())
			}
			return nil
		case <-deadline.C:
			if st.Ready == nil {
				return nil
			}
			return fmt.Errorf("its output did not match ready (%s) within %s: %s", st.Ready, st.Timeout, out.tail())
		case <-tick.C:
		}
	}
}

func stopAll(cmds []*platform.Command) {
	for i := len(cmds) - 1; i >= 0; i-- {
		cmds[i].Stop()
	}
}

// outputBuffer keeps what the setup commands print (for app_output checks,
// capped) and copies it to the run's setup.log.
type outputBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	file *os.File
}

// maxOutput caps the output kept for app_output checks.
const maxOutput = 8 << 20

func (o *outputBuffer) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.buf.Len() < maxOutput {
		o.buf.Write(p[:min(len(p), maxOutput-o.buf.Len())])
	}
	if o.file != nil {
		_, _ = o.file.Write(p)
	}
	return len(p), nil
}

func (o *outputBuffer) match(re *regexp.Regexp) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return re.Match(o.buf.Bytes())
}

// tail is the last lines of the output, for an error.
func (o *outputBuffer) tail() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := strings.TrimSpace(o.buf.String())
	if s == "" {
		return "it printed nothing"
	}
	if len(s) > 600 {
		s = "..." + s[len(s)-600:]
	}
	return "it printed: " + s
}

// close closes the setup log.
func (o *outputBuffer) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file != nil {
		_ = o.file.Close()
		o.file = nil
	}
}

// safeName is s with every character but letters, digits, '.', '-' and '_'
// replaced by '_', for a folder name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
