package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

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
	if len(args) == 0 || args[0] != "capture" {
		return errors.New("usage: guiagent bench capture [--size WxH] [--max-long-edge N] [--format jpeg|png] [--quality Q] [-n N] [--display :N]")
	}
	fs := flag.NewFlagSet("bench capture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.String("size", "", "start a private Xvfb of this size (e.g. 1920x1080) instead of using $DISPLAY")
	edge := fs.Int("max-long-edge", imaging.DefaultMaxLongEdge, "cap on the image's long edge in pixels")
	format := fs.String("format", "jpeg", "jpeg or png")
	quality := fs.Int("quality", 75, "JPEG quality 1-100")
	n := fs.Int("n", 50, "number of captures")
	display := fs.String("display", config.XDisplay(getenv), "X display to capture")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *n < 1 || *n > 100000 {
		return fmt.Errorf("-n %d: want 1 to 100000", *n)
	}
	po := platform.Options{Display: *display, XAuthority: config.XAuthority(getenv)}
	if *size != "" {
		s, err := config.ParseSize(*size)
		if err != nil {
			return fmt.Errorf("--size: %w", err)
		}
		po.VirtualDisplay, po.ForceVirtual = s, true
	}
	screen, closeFn, err := platform.Open(ctx, po)
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
	o := imaging.Options{MaxLongEdge: *edge, Format: *format, Quality: *quality}
	if err := o.Validate(); err != nil {
		return err
	}
	rep, err := imaging.Bench(ctx, screen, d, o, *n)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	return enc.Encode(rep)
}

// cmdSampleApp runs the built-in sample application (used by the demo and tests).
func cmdSampleApp(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sample-app", flag.ContinueOnError)
	scene := fs.String("scene", sampleapp.SceneForm, "form, dialog, buttons or typing")
	display := fs.String("display", config.XDisplay(getenv), "X display")
	w := fs.Int("width", 0, "window width (0 = screen)")
	h := fs.Int("height", 0, "window height (0 = screen)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return sampleapp.Run(ctx, sampleapp.Options{Display: *display, Scene: *scene, Out: stdout, Width: *w, Height: *h})
}

func openStore(getenv func(string) string) *trace.Store {
	o := trace.DefaultOptions()
	o.Dir = config.RunsDir(getenv)
	return trace.NewStore(o)
}

// cmdRuns lists recorded runs, newest first.
func cmdRuns(args []string, getenv func(string) string, stdout io.Writer) error {
	store := openStore(getenv)
	defer store.Close()
	runs, err := store.List()
	if err != nil {
		return err
	}
	if len(args) > 0 && args[0] == "--json" {
		return json.NewEncoder(stdout).Encode(runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(stdout, "no runs recorded in %s\n", store.Dir())
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tSTATUS\tSTEPS\tTASK")
	for _, r := range runs {
		task := r.Task
		if task == "" {
			task = "session " + r.SessionID
		}
		if r := []rune(task); len(r) > 60 {
			task = string(r[:57]) + "..." // cut on a character, never inside a UTF-8 sequence
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.ID, r.Started.Local().Format(time.DateTime), r.Status, r.Steps, task)
	}
	return tw.Flush()
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
