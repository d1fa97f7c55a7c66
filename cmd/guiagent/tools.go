package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/platform"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/trace"
)

// cmdBench runs `guiagent bench capture`: N captures of the current display
// through the screenshot pipeline, printed as one JSON object of medians.
func cmdBench(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "soak" {
		return cmdSoak(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "capture" {
		return errors.New("usage: guiagent bench capture [--size WxH] [--max-long-edge N] [--format jpeg|png] [--quality Q] [-n N] [--display :N]\n       guiagent bench soak [-n N]")
	}
	fs, f := benchFlags(getenv)
	fs.SetOutput(stderr)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if f.n < 1 || f.n > 100000 {
		return fmt.Errorf("-n %d: want 1 to 100000", f.n)
	}
	var size geom.Size
	if f.size != "" {
		s, err := config.ParseSize(f.size)
		if err != nil {
			return fmt.Errorf("--size: %w", err)
		}
		size = s
	}
	screen, closeFn, err := platform.Open(ctx, app.BenchOptions(f.display, config.XAuthority(getenv), size))
	if err != nil {
		return err
	}
	defer closeFn()
	ds, err := screen.Displays(ctx)
	if err != nil {
		return err
	}
	d, err := geom.FindDisplay(ds, "")
	if err != nil {
		return err
	}
	o := imaging.Options{MaxLongEdge: f.edge, Format: f.format, Quality: f.quality}
	if err := o.Validate(); err != nil {
		return err
	}
	rep, err := imaging.Bench(ctx, screen, d, o, f.n)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	return enc.Encode(rep)
}

// benchArgs are the flags of `guiagent bench capture`.
type benchArgs struct {
	size, format, display string
	edge, quality, n      int
}

func benchFlags(getenv func(string) string) (*flag.FlagSet, *benchArgs) {
	f := &benchArgs{}
	fs := flag.NewFlagSet("bench capture", flag.ContinueOnError)
	fs.StringVar(&f.size, "size", "", "start a private Xvfb of this `size` (e.g. 1920x1080) instead of using $DISPLAY")
	fs.IntVar(&f.edge, "max-long-edge", imaging.DefaultMaxLongEdge, "cap on the image's long edge in `pixels`")
	fs.StringVar(&f.format, "format", "jpeg", "`format`: jpeg or png")
	fs.IntVar(&f.quality, "quality", 75, "JPEG `quality` 1-100")
	fs.IntVar(&f.n, "n", 50, "`number` of captures")
	fs.StringVar(&f.display, "display", config.XDisplay(getenv), "X `display` to capture (default $DISPLAY)")
	return fs, f
}

// sampleAppFlags declares the flags of `guiagent sample-app` into o.
func sampleAppFlags(getenv func(string) string) (*flag.FlagSet, *sampleapp.Options) {
	o := &sampleapp.Options{}
	fs := flag.NewFlagSet("sample-app", flag.ContinueOnError)
	fs.StringVar(&o.Scene, "scene", sampleapp.SceneForm, "`scene`: form, dialog, buttons or typing")
	fs.StringVar(&o.Display, "display", config.XDisplay(getenv), "X `display` (default $DISPLAY)")
	fs.IntVar(&o.Width, "width", 0, "window width in `pixels` (0 = screen)")
	fs.IntVar(&o.Height, "height", 0, "window height in `pixels` (0 = screen)")
	return fs, o
}

// cmdSampleApp runs the built-in sample application (used by the demo and tests).
func cmdSampleApp(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, o := sampleAppFlags(getenv)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Out = stdout
	return sampleapp.Run(ctx, *o)
}

func openStore(getenv func(string) string) *trace.Store {
	o := trace.DefaultOptions()
	o.Dir = config.RunsDir(getenv)
	return trace.NewStore(o)
}

// runKinds are the kinds `guiagent runs --kind` accepts.
var runKinds = []string{trace.KindTask, trace.KindSession, trace.KindFlow}

// runsArgs are the flags of `guiagent runs`.
type runsArgs struct {
	kind    string
	asJSON  bool
	kindSet map[string]bool
}

func runsFlags() (*flag.FlagSet, *runsArgs) {
	f := &runsArgs{}
	fs := flag.NewFlagSet("runs", flag.ContinueOnError)
	fs.StringVar(&f.kind, "kind", "", "list only runs of this `kind`: "+strings.Join(runKinds, ", ")+" (comma separated for several)")
	fs.BoolVar(&f.asJSON, "json", false, "print the runs as one JSON array")
	return fs, f
}

// parseRunsArgs parses and checks the flags of `guiagent runs`.
func parseRunsArgs(args []string, stderr io.Writer) (*runsArgs, error) {
	fs, f := runsFlags()
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("runs: unexpected argument %q (see guiagent runs --help)", fs.Arg(0))
	}
	if f.kind != "" {
		f.kindSet = map[string]bool{}
		for _, k := range strings.Split(f.kind, ",") {
			k = strings.TrimSpace(k)
			if !slices.Contains(runKinds, k) {
				return nil, fmt.Errorf("runs --kind %q: want %s", k, strings.Join(runKinds, ", "))
			}
			f.kindSet[k] = true
		}
	}
	return f, nil
}

// cmdRuns lists recorded runs, newest first.
func cmdRuns(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f, err := parseRunsArgs(args, stderr)
	if err != nil {
		return err
	}
	store := openStore(getenv)
	defer store.Close()
	runs, err := store.List()
	if err != nil {
		return err
	}
	if f.kindSet != nil {
		runs = slices.DeleteFunc(runs, func(r trace.RunInfo) bool { return !f.kindSet[r.Kind] })
	}
	if f.asJSON {
		if runs == nil {
			runs = []trace.RunInfo{}
		}
		return json.NewEncoder(stdout).Encode(runs)
	}
	if len(runs) == 0 {
		what := "runs"
		if f.kind != "" {
			what = f.kind + " runs"
		}
		fmt.Fprintf(stdout, "no %s recorded in %s\n", what, store.Dir())
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTARTED\tSTATUS\tSTEPS\tTASK")
	for _, r := range runs {
		task := r.Task
		if task == "" {
			task = sessionLabel(r)
		}
		if r := []rune(task); len(r) > 60 {
			task = string(r[:57]) + "..." // cut on a character, never inside a UTF-8 sequence
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.Kind, r.Started.Local().Format(time.DateTime), r.Status, r.Steps, task)
	}
	return tw.Flush()
}

// sessionLabel describes a session run: its id and the client's name.
func sessionLabel(r trace.RunInfo) string {
	s := "session " + r.SessionID
	if r.Client != "" {
		s += " (" + r.Client + ")"
	}
	return s
}

// cmdReport prints the path of a run's HTML report, generating it if needed.
func cmdReport(args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: guiagent report RUN_ID (see guiagent runs)")
	}
	store := openStore(getenv)
	defer store.Close()
	p, err := store.EnsureReport(args[0])
	if err != nil {
		return fmt.Errorf("run %s: %w (see guiagent runs)", args[0], err)
	}
	fmt.Fprintln(stdout, p)
	return nil
}
