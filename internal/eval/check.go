package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/ocr/tesseract"
	"github.com/guiagent/guiagent/internal/uitree"
)

// CheckResult is how one check judged a run.
type CheckResult struct {
	Kind string `json:"kind"`
	Pass bool   `json:"pass"`
	// Detail says why (the exit status, the text found, the file's start).
	Detail string `json:"detail,omitempty"`
	// JudgedBy says what judged an assert: "tree", "ocr" or "model".
	JudgedBy string `json:"judged_by,omitempty"`
}

// appOutputWait is how long an app_output check waits for the output it
// wants: an application may print a moment after the screen changed.
const appOutputWait = 2 * time.Second

// checks judges the run by each of t's checks, in order.
func (r *runner) checks(ctx context.Context, a *app.App, t *Task, out *outputBuffer) []CheckResult {
	res := make([]CheckResult, 0, len(t.Checks))
	for _, c := range t.Checks {
		cr := CheckResult{Kind: c.Kind()}
		switch cr.Kind {
		case "command":
			cr.Pass, cr.Detail = r.checkCommand(ctx, a.DisplayName(), c.Command)
		case "app_output":
			cr.Pass = waitMatch(ctx, out, c)
			cr.Detail = "the setup commands' output matched " + c.AppOutput.String()
			if !cr.Pass {
				cr.Detail = fmt.Sprintf("the setup commands' output did not match %s (%s)", c.AppOutput, out.tail())
			}
		case "assert":
			cr.Pass, cr.JudgedBy, cr.Detail = checkAssert(ctx, a, c)
		case "file":
			cr.Pass, cr.Detail = checkFile(c.FilePath, c.FileContent)
		}
		cr.Detail = a.Scrubber().String(cr.Detail)
		res = append(res, cr)
	}
	return res
}

func waitMatch(ctx context.Context, out *outputBuffer, c Check) bool {
	deadline := time.Now().Add(appOutputWait)
	for !out.match(c.AppOutput) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// checkCommand runs cmdline through the shell in the suite's folder with
// DISPLAY set to the run's display; exit status 0 passes.
func (r *runner) checkCommand(ctx context.Context, display, cmdline string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, DefaultCheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", r.command(cmdline))
	cmd.Dir = r.suite.Dir
	cmd.Env = append(cmd.Environ(), "DISPLAY="+display)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	if len(text) > 400 {
		text = text[:400] + "..."
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, "exit status 0"
	case errors.As(err, &exit):
		return false, fmt.Sprintf("exit status %d: %s", exit.ExitCode(), text)
	default:
		return false, fmt.Sprintf("the command did not run: %v", err)
	}
}

// checkFile compares the file's content with want, trailing newlines aside.
func checkFile(path, want string) (bool, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Sprintf("cannot read %s: %v", path, err)
	}
	got := strings.TrimRight(string(b), "\r\n")
	if got == strings.TrimRight(want, "\r\n") {
		return true, path + " holds the expected content"
	}
	if len(got) > 200 {
		got = got[:200] + "..."
	}
	return false, fmt.Sprintf("%s holds %q, not %q", path, got, want)
}

// checkAssert judges a statement about the screen: by the accessibility
// tree when the desktop has one and the statement names an element or text,
// else by OCR, else by the model when the check allows it.
func checkAssert(ctx context.Context, a *app.App, c Check) (pass bool, by, detail string) {
	target, named := ocr.ParseTarget(c.Assert)
	if named {
		if ok, detail, judged := assertByTree(ctx, a.Screen(), target.Text); judged {
			return ok, "tree", detail
		}
		if ok, detail, judged := assertByOCR(ctx, a, target); judged {
			return ok, "ocr", detail
		}
	}
	if !c.AssertModel {
		why := "it names no text to look for (quote the text, as in: the text \"Saved\" is shown)"
		if named {
			why = "neither the accessibility tree nor OCR (tesseract) is available on this desktop"
		}
		return false, "", "the assertion could not be judged: " + why + "; add model: true to let the model judge it"
	}
	return assertByModel(ctx, a, c.Assert)
}

func assertByTree(ctx context.Context, s desktop.Screen, text string) (pass bool, detail string, judged bool) {
	src, ok := desktop.ElementsOf(s)
	if !ok {
		return false, "", false
	}
	snap, err := src.Elements(ctx, desktop.ElementQuery{})
	if err != nil || len(snap.Elements) == 0 {
		return false, "", false
	}
	uitree.Number(snap.Elements)
	el, _, err := uitree.Find(snap.Elements, text)
	if err != nil {
		var me *uitree.MatchError
		if errors.As(err, &me) && me.Ambiguous {
			return true, fmt.Sprintf("the tree has %d elements matching %q", len(me.Candidates), text), true
		}
		return false, fmt.Sprintf("no element of the tree matches %q", text), true
	}
	return true, fmt.Sprintf("the tree has %s %s %q", el.Ref, el.Role, el.Name), true
}

func assertByOCR(ctx context.Context, a *app.App, t ocr.Target) (pass bool, detail string, judged bool) {
	eng, err := tesseract.New(ctx, app.OCROptions(a.Config()))
	if err != nil {
		return false, "", false
	}
	defer eng.Close()
	img, err := capture(ctx, a.Screen())
	if err != nil {
		return false, "", false
	}
	page, err := eng.Read(ctx, img, geom.ImageRect{})
	if err != nil {
		return false, "", false
	}
	// OCR misreads punctuation at the ends of words ("Confirmed." as
	// "Confirmed,"): the words decide.
	q := t.Query()
	if w := strings.TrimFunc(q.Text, unicode.IsPunct); w != "" {
		q.Text = w
	}
	ms, err := ocr.Find(page, q)
	if err != nil {
		return false, "", false
	}
	if len(ms) == 0 {
		return false, fmt.Sprintf("OCR does not read %q on the screen", t.Text), true
	}
	return true, fmt.Sprintf("OCR reads %q on the screen", t.Text), true
}

// capture grabs the primary display.
func capture(ctx context.Context, s desktop.Screen) (*image.RGBA, error) {
	ds, err := s.Displays(ctx)
	if err != nil || len(ds) == 0 {
		return nil, fmt.Errorf("no display: %v", err)
	}
	return s.Capture(ctx, ds[0].Bounds, nil)
}

func assertByModel(ctx context.Context, a *app.App, statement string) (bool, string, string) {
	svc, err := a.Vision()
	if err != nil {
		return false, "model", "the model cannot judge: " + err.Error()
	}
	ds, err := a.Screen().Displays(ctx)
	if err != nil || len(ds) == 0 {
		return false, "model", fmt.Sprintf("no display to capture: %v", err)
	}
	shot, err := a.Shots().Shoot(ctx, a.Screen(), ds[0], ds[0].Bounds, imaging.Options{MaxLongEdge: svc.AskProfile().MaxLongEdge}, "eval-assert")
	if err != nil {
		return false, "model", "cannot capture the screen: " + err.Error()
	}
	v, _, err := svc.Assert(ctx, llm.Image{MIME: shot.MIME, Data: shot.Data, Frame: shot.Frame}, statement)
	if err != nil {
		return false, "model", "the model did not judge: " + err.Error()
	}
	return v.Pass, "model", v.Reason
}
