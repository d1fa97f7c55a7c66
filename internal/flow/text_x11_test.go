package flow

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/ocr/tesseract"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

const textFlow = `name: submit by text
steps:
  - click: {text: 'the second "Submit"'}
`

// TestFlowClickByTextNoModel: a click step with a text target (the form's
// title says Submit too, so the second one) with no model is located by
// OCR and lands on the Submit button; the second run verifies
// the cached place by reading the text there (a cache hit), and lands again.
func TestFlowClickByTextNoModel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb, the sample app and tesseract")
	}
	e := startX11(t)
	eng, err := tesseract.New(context.Background(), tesseract.Options{})
	if err != nil {
		t.Fatalf("tesseract: %v (CI installs tesseract-ocr and tesseract-ocr-eng)", err)
	}
	defer eng.Close()
	r, err := NewRunner(Options{Input: e.in, OCR: ocr.NewReader(eng, 0), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse([]byte(textFlow), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Steps[0].ByText || f.Steps[0].Target != `the second "Submit"` {
		t.Fatalf("parsed %+v, want a text target Submit", f.Steps[0])
	}
	path := filepath.Join(t.TempDir(), "text.cache.yaml")
	for i, want := range []string{CacheMiss, CacheHit} {
		app := e.app(t, 0, 0, nil)
		cache, err := OpenCache(path, ReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		res := r.Run(context.Background(), f, nil, cache)
		if res.Status != Passed || res.ModelCalls != 0 {
			t.Fatalf("run %d: %s (%s), %d model calls; steps %+v", i+1, res.Status, res.Summary, res.ModelCalls, res.Steps)
		}
		st := res.Steps[0]
		if st.Cache != want {
			t.Errorf("run %d: cache %q, want %q", i+1, st.Cache, want)
		}
		if i == 0 && (len(st.Actions) == 0 || st.Actions[0].LocatedBy != operate.ByOCR) {
			t.Errorf("run 1: actions %+v, want located_by ocr", st.Actions)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ev, err := app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "click" })
		cancel()
		if err != nil || ev.Target != "submit" {
			t.Errorf("run %d: click %+v %v, want it on the Submit button", i+1, ev, err)
		}
		app.Close()
	}
}
