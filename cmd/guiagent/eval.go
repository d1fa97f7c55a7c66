package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/eval"
)

// evalArgs are the arguments of `guiagent eval` that are not configuration flags.
type evalArgs struct {
	suite        string
	models       []string
	repeat       int
	parallel     int
	out          string
	trajectories bool
	minPass      float64
	rest         []string // configuration flags, for config.Load
}

const evalUsage = "usage: guiagent eval SUITE.yaml [--model provider:model ...] [--repeat N] [--parallel N] [--out DIR] [--export trajectories] [--min-pass R] [serve flags], or guiagent eval diff A.json B.json"

// evalFlags documents eval's own flags for its help (parseEvalArgs reads
// them, leaving the configuration flags to config.Load).
func evalFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.String("model", "", "`provider:model` to evaluate, repeatable (default: the configured provider and model); offline: "+eval.FakeModelNames())
	fs.Int("repeat", 1, "runs of each task per model (pass@k and pass^k take k from it)")
	fs.Int("parallel", 1, "runs at once, each on its own private desktop (refused beyond what the cores and memory hold)")
	fs.String("out", "", "output `folder` for results.json, summary.html and runs/ (default eval-results/TIMESTAMP; refused when it already holds results)")
	fs.String("export", "", "`trajectories`: write each run's trajectory as JSONL (docs/eval.md: Trajectory format)")
	fs.Float64("min-pass", 0, "exit 1 when the pass rate over all models is under this `rate` (0 to 1)")
	return fs
}

// parseEvalArgs takes the suite and eval's own flags out of args.
func parseEvalArgs(args []string) (evalArgs, error) {
	ea := evalArgs{repeat: 1, parallel: 1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isFlag := strings.HasPrefix(a, "-")
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("eval: --%s needs a value (%s)", name, evalUsage)
			}
			i++
			return args[i], nil
		}
		var err error
		var v string
		switch {
		case isFlag && (name == "model" || name == "repeat" || name == "parallel" || name == "out" || name == "export" || name == "min-pass"):
			if v, err = value(); err == nil {
				err = ea.set(name, v)
			}
		case !isFlag && ea.suite == "":
			ea.suite = a
		default:
			ea.rest = append(ea.rest, a)
		}
		if err != nil {
			return ea, err
		}
	}
	if ea.suite == "" {
		return ea, errors.New("eval: no suite file given (" + evalUsage + ")")
	}
	return ea, nil
}

func (ea *evalArgs) set(name, v string) error {
	var err error
	switch name {
	case "model":
		ea.models = append(ea.models, v)
	case "repeat":
		ea.repeat, err = strconv.Atoi(v)
	case "parallel":
		ea.parallel, err = strconv.Atoi(v)
	case "out":
		ea.out = v
	case "export":
		if v != "trajectories" {
			return fmt.Errorf("eval: --export %q: the one export is trajectories", v)
		}
		ea.trajectories = true
	case "min-pass":
		ea.minPass, err = strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err == nil && strings.HasSuffix(v, "%") {
			ea.minPass /= 100
		}
		if err == nil && (ea.minPass < 0 || ea.minPass > 1) {
			err = errors.New("want a rate from 0 to 1")
		}
	}
	if err != nil {
		return fmt.Errorf("eval: --%s %q: %v", name, v, err)
	}
	return nil
}

// cmdEval runs a suite (or compares two results files: eval diff).
func cmdEval(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "diff" {
		return cmdEvalDiff(args[1:], stdout)
	}
	ea, err := parseEvalArgs(args)
	if err != nil {
		return err
	}
	c, rest, err := config.LoadWithModels("eval", ea.rest, getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("eval: unexpected argument %q (%s)", rest[0], evalUsage)
	}
	suite, err := eval.ParseFile(ea.suite)
	if err != nil {
		return err
	}
	o, err := evalOptions(ea, c, stderr)
	if err != nil {
		return err
	}
	res, err := eval.Run(ctx, suite, o)
	if err != nil {
		return err
	}
	printEvalSummary(stdout, res, o.Out)
	switch rate := res.PassRate(); {
	case res.Interrupted:
		return fmt.Errorf("eval: interrupted after %d of %d runs; the partial results are in %s", len(res.Runs), len(suite.Tasks)*len(o.Models)*o.Repeat, o.Out)
	case rate < ea.minPass:
		return fmt.Errorf("eval: the pass rate %.0f%% is under --min-pass %.0f%%", 100*rate, 100*ea.minPass)
	}
	return nil
}

// evalOptions builds the run options from the arguments and the configuration.
func evalOptions(ea evalArgs, c config.Config, stderr io.Writer) (eval.Options, error) {
	o := eval.Options{Config: c, Repeat: ea.repeat, Parallel: ea.parallel, Out: ea.out, Trajectories: ea.trajectories,
		Version: guiagent.Version, Progress: stderr}
	if len(ea.models) == 0 && c.Provider != "" && c.Model != "" {
		ea.models = []string{c.Provider + ":" + c.Model}
	}
	for _, s := range ea.models {
		m, err := eval.ParseModel(s)
		if err != nil {
			return o, err
		}
		o.Models = append(o.Models, m)
	}
	if o.Out == "" {
		o.Out = filepath.Join("eval-results", time.Now().UTC().Format("20060102-150405"))
	}
	if _, err := os.Stat(filepath.Join(o.Out, eval.ResultsFile)); err == nil {
		return o, fmt.Errorf("eval: --out %s already holds results: give another folder, or delete it", o.Out)
	}
	var err error
	if o.Out, err = filepath.Abs(o.Out); err != nil {
		return o, err
	}
	if o.Binary, err = os.Executable(); err != nil {
		o.Binary = ""
	}
	return o, nil
}

// printEvalSummary writes each model's scores and where the results are.
func printEvalSummary(w io.Writer, res *eval.Results, out string) {
	for _, s := range res.Summary {
		fmt.Fprintf(w, "%s: pass rate %.0f%% (%d/%d), pass@%d %.0f%%, pass^%d %.0f%%, setup errors %d, median %.0f steps, %.0f model calls, %.1f s\n",
			s.Model, 100*s.PassRate, s.Passed, s.Scored, s.K, 100*s.PassAtK, s.K, 100*s.PassHatK, s.SetupErrors, s.MedianSteps, s.MedianModelCalls, s.MedianWallMillis/1000)
	}
	fmt.Fprintf(w, "results: %s\nsummary: %s\n", filepath.Join(out, eval.ResultsFile), filepath.Join(out, eval.SummaryFile))
}

// cmdEvalDiff compares two results files; it fails when something regressed.
func cmdEvalDiff(args []string, stdout io.Writer) error {
	if len(args) != 2 {
		return errors.New("eval diff: give two results files (guiagent eval diff A.json B.json)")
	}
	a, err := eval.ReadResults(args[0])
	if err != nil {
		return err
	}
	b, err := eval.ReadResults(args[1])
	if err != nil {
		return err
	}
	changes := eval.Diff(a, b)
	fmt.Fprint(stdout, eval.FormatDiff(changes))
	for _, c := range changes {
		if c.Regressed {
			return fmt.Errorf("eval diff: %s regressed against %s", args[1], args[0])
		}
	}
	return nil
}
