package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/config"
)

// Options say how to run a suite.
type Options struct {
	// Config is the base configuration (flags and environment); each run
	// changes its model, display and run folder.
	Config config.Config
	Models []Model
	// Repeat is how many times each model runs each task; Parallel how many
	// runs go at once.
	Repeat, Parallel int
	// Out is the output folder: results.json, summary.html, runs/.
	Out string
	// Trajectories exports each run's trajectory (JSONL).
	Trajectories bool
	// Binary replaces a leading "guiagent" in setup and check commands
	// (this guiagent); "" leaves commands as they are.
	Binary  string
	Version string
	// Progress receives a line per run started and ended (the terminal).
	Progress io.Writer
}

// Files of the output folder.
const (
	ResultsFile = "results.json"
	SummaryFile = "summary.html"
)

// Results is results.json.
type Results struct {
	Suite    string    `json:"suite"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Repeat   int       `json:"repeat"`
	Parallel int       `json:"parallel"`
	Models   []string  `json:"models"`
	Tasks    []string  `json:"tasks"`
	// Interrupted is set when the run was stopped (Ctrl-C) before every run
	// was done: Runs holds the runs that were.
	Interrupted bool           `json:"interrupted,omitempty"`
	WallMillis  int64          `json:"wall_ms"`
	Runs        []Row          `json:"runs"`
	Summary     []ModelSummary `json:"models_summary"`
}

// Run runs every task of s against every model, o.Repeat times, o.Parallel
// at a time, each on a private desktop, then writes results.json and
// summary.html to o.Out. When ctx ends (Ctrl-C) the runs under way stop,
// their desktops are destroyed and the partial results are written; the
// Results then say Interrupted.
func Run(ctx context.Context, s *Suite, o Options) (*Results, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	o.Out = out
	if err := os.MkdirAll(o.Out, 0o700); err != nil {
		return nil, fmt.Errorf("create the output folder: %w", err)
	}
	res := &Results{Suite: s.Name, Started: time.Now().UTC(), Repeat: o.Repeat, Parallel: o.Parallel}
	for _, m := range o.Models {
		res.Models = append(res.Models, m.Name)
	}
	for _, t := range s.Tasks {
		res.Tasks = append(res.Tasks, t.Name)
	}
	var jobs []job
	for rep := 1; rep <= o.Repeat; rep++ {
		for _, m := range o.Models {
			for i := range s.Tasks {
				jobs = append(jobs, job{task: &s.Tasks[i], model: m, repeat: rep})
			}
		}
	}
	r := &runner{o: o, suite: s}
	res.Runs = r.schedule(ctx, jobs)
	res.Finished = time.Now().UTC()
	res.WallMillis = res.Finished.Sub(res.Started).Milliseconds()
	res.Interrupted = ctx.Err() != nil
	res.Summary = Summarize(res.Runs, o.Models, o.Repeat)
	if err := res.write(o.Out); err != nil {
		return res, err
	}
	return res, nil
}

// schedule runs jobs o.Parallel at a time, in order, and returns the rows of
// those that ran (all of them unless ctx ended), in job order.
func (r *runner) schedule(ctx context.Context, jobs []job) []Row {
	rows := make([]Row, len(jobs))
	ran := make([]bool, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range r.o.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				r.say("start %s · %s · #%d", j.model.Name, j.task.Name, j.repeat)
				row := r.run(ctx, j)
				if row.Ending == SetupError && ctx.Err() != nil {
					row.Ending = Cancelled // the setup was cut short, it did not fail
				}
				mu.Lock()
				rows[i], ran[i] = row, true
				done++
				n := done
				mu.Unlock()
				r.say("[%d/%d] %s", n, len(jobs), describe(row))
			}
		}()
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	var out []Row
	for i, ok := range ran {
		if ok {
			out = append(out, rows[i])
		}
	}
	return out
}

func (r *runner) say(format string, args ...any) {
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, "eval: "+format+"\n", args...)
	}
}

// describe is a run in one line for the terminal.
func describe(row Row) string {
	verdict := "FAIL"
	if row.Pass {
		verdict = "pass"
	}
	s := fmt.Sprintf("%s · %s · #%d: %s (%s, %d steps, %d model calls, %.1fs)", row.Model, row.Task, row.Repeat, verdict,
		row.Ending, row.Steps, row.ModelCalls, float64(row.WallMillis)/1000)
	if !row.Pass {
		if why := failure(row); why != "" {
			s += ": " + why
		}
	}
	return s
}

// failure says why a run did not pass: the first failed check, else the reason.
func failure(row Row) string {
	if row.Ending == Completed {
		for _, c := range row.Checks {
			if !c.Pass {
				return c.Kind + " check: " + c.Detail
			}
		}
	}
	return row.Reason
}

// PerRunMiB is the memory one run is taken to need: a private Xvfb, the
// application, guiagent's screenshots and recording.
const PerRunMiB = 250

// check refuses options the machine or the suite cannot hold.
func (o Options) check() error {
	switch {
	case len(o.Models) == 0:
		return errors.New("no model: give --model provider:model (for example --model anthropic:claude-sonnet-5-5, or --model fake:sample offline)")
	case o.Repeat < 1 || o.Repeat > 100:
		return fmt.Errorf("--repeat %d: want 1 to 100", o.Repeat)
	case o.Parallel < 1:
		return fmt.Errorf("--parallel %d: want 1 or more", o.Parallel)
	case o.Out == "":
		return errors.New("no output folder: give --out DIR")
	}
	for _, m := range o.Models {
		if m.Fake != nil {
			continue
		}
		if cr := o.Config.CredentialFor(m.Provider); cr.APIKey == "" && cr.BaseURL == "" {
			return NoKeyError(o.Config, m)
		}
	}
	return CheckCapacity(o.Parallel, runtime.NumCPU(), availableMiB())
}

// CheckCapacity refuses n parallel runs when the machine's cores (at most 4
// runs a core: a run mostly waits for its model) or available memory (MiB,
// 0 when unknown) cannot hold them, naming the most it can.
func CheckCapacity(n, cores, memMiB int) error {
	most := 4 * cores
	why := fmt.Sprintf("%d cores (at most 4 runs a core)", cores)
	if memMiB > 0 && memMiB/PerRunMiB < most {
		most = max(1, memMiB/PerRunMiB)
		why = fmt.Sprintf("%d MiB of available memory (a run needs about %d MiB: its Xvfb, the application and guiagent)", memMiB, PerRunMiB)
	}
	if n > most {
		return fmt.Errorf("--parallel %d: this machine cannot hold %d runs at once: it has %s; use --parallel %d or less", n, n, why, most)
	}
	return nil
}

// availableMiB is MemAvailable from /proc/meminfo, 0 when unknown.
func availableMiB() int {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

// write writes results.json and summary.html.
func (res *Results) write(out string) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, ResultsFile), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write the results: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(out, SummaryFile), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write the summary: %w", err)
	}
	err = WriteHTML(f, res)
	return errors.Join(err, f.Close())
}

// ReadResults reads a results.json.
func ReadResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s is not an eval results file: %w", path, err)
	}
	return &res, nil
}
