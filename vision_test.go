package guiagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent"

	"github.com/guiagent/guiagent/internal/testenv"
)

// Without a model the vision methods say what to set; bad input is refused
// naming the problem, before any model call.
func TestVisionMethodsRefuseWhatTheyCannotDo(t *testing.T) {
	testenv.NeedX(t)
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		VirtualDisplay: guiagent.Size{Width: 640, Height: 480}, AlwaysVirtualDisplay: true,
		RunsDir: t.TempDir() + "/runs", Log: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	none := guiagent.ScreenshotOptions{}
	_, lerr := a.Locate(ctx, "the OK button", none)
	_, qerr := a.Query(ctx, "what is the total?", nil, none)
	_, aerr := a.Assert(ctx, "the dialog is open", none)
	_, werr := a.WaitFor(ctx, "the dialog is open", guiagent.WaitOptions{})
	for name, err := range map[string]error{"Locate": lerr, "Query": qerr, "Assert": aerr, "WaitFor": werr} {
		if !errors.Is(err, guiagent.ErrNoModel) || !strings.Contains(err.Error(), "GUI_AGENT_MODEL") {
			t.Errorf("%s without a model: %v, want ErrNoModel naming GUI_AGENT_MODEL", name, err)
		}
	}
	// A flow that must locate fails at that step, saying why.
	res, err := a.RunFlow(ctx, []byte("name: no model\nsteps:\n  - click: the OK button\n"), guiagent.FlowOptions{Cache: guiagent.CacheOff})
	if err != nil || res.Passed || len(res.Steps) != 1 || res.Steps[0].Passed || !strings.Contains(res.Summary+res.Steps[0].Error, "GUI_AGENT_") {
		t.Errorf("RunFlow without a model: %+v, %v; want a failed step naming the variables", res, err)
	}

	bad := []struct {
		name string
		err  error
		want string
	}{
		{"empty target", func() error { _, err := a.Locate(ctx, " ", none); return err }(), "describe the element"},
		{"bad schema", func() error { _, err := a.Query(ctx, "q", json.RawMessage(`{"type":`), none); return err }(), "schema"},
		{"long timeout", func() error {
			_, err := a.WaitFor(ctx, "x", guiagent.WaitOptions{Timeout: time.Hour})
			return err
		}(), "WaitOptions.Timeout"},
		{"short interval", func() error {
			_, err := a.WaitFor(ctx, "x", guiagent.WaitOptions{Interval: time.Millisecond})
			return err
		}(), "WaitOptions.Interval"},
		{"bad display", func() error { _, err := a.Assert(ctx, "x", guiagent.ScreenshotOptions{Display: "7"}); return err }(), "display"},
		{"bad cache", func() error {
			_, err := a.RunFlow(ctx, []byte("name: x\nsteps:\n  - sleep: 1\n"), guiagent.FlowOptions{Cache: "sometimes"})
			return err
		}(), "read-write"},
		{"bad flow", func() error {
			_, err := a.RunFlow(ctx, []byte("name: x\nsteps:\n  - jump: high\n"), guiagent.FlowOptions{})
			return err
		}(), "jump"},
	}
	for _, b := range bad {
		if b.err == nil || !strings.Contains(b.err.Error(), b.want) {
			t.Errorf("%s: %v, want an error mentioning %q", b.name, b.err, b.want)
		}
	}
}
