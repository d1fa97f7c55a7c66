package guiagent_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/testenv"
	"github.com/guiagent/guiagent/internal/trace/browsertest"
)

// TestDashboardSettingsPanel drives the dashboard's Settings panel in
// Chromium, logged in by the one-time link as a person would be: it shows the
// displays and which settings the environment holds, saves a model with its
// key (the next task has a model), shows a refused value's message, and
// never shows the key.
func TestDashboardSettingsPanel(t *testing.T) {
	testenv.NeedX(t)
	dir := t.TempDir()
	const key = "sk-browser-canary-0123456789"
	env := map[string]string{"HOME": dir, "GUI_AGENT_RUNS_DIR": filepath.Join(dir, "runs"), "GUI_AGENT_ADAPTER": "generic"}
	o, _, err := guiagent.LoadOptions([]string{"--addr", "127.0.0.1:0"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o.VirtualDisplay, o.AlwaysVirtualDisplay, o.Log = guiagent.Size{Width: 800, Height: 600}, true, io.Discard
	a, err := guiagent.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan guiagent.Endpoint, 1)
	served := make(chan error, 1)
	go func() {
		served <- a.ListenAndServe(ctx, func(e guiagent.Endpoint) error { listening <- e; return nil })
	}()
	defer func() { cancel(); <-served }()
	var ep guiagent.Endpoint
	select {
	case ep = <-listening:
	case err := <-served:
		t.Fatal(err)
	}

	b := browsertest.New(t)
	if err := b.Do(20*time.Second, chromedp.Navigate(ep.LoginURL)); err != nil {
		t.Fatal(err)
	}
	const form = `document.getElementById("settings-form")`
	if err := browsertest.WaitFor(b, form+`.elements.display.options.length > 1`, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	type state struct {
		Displays   []string `json:"displays"`
		AdapterOff bool     `json:"adapterOff"`
		AdapterMsg string   `json:"adapterMsg"`
		KeyHint    string   `json:"keyHint"`
		Status     string   `json:"status"`
		StatusCls  string   `json:"statusCls"`
		Page       string   `json:"page"`
	}
	read := `(() => { const f = ` + form + `; return {
		displays: [...f.elements.display.options].map(o => o.textContent),
		adapterOff: f.elements.adapter.disabled,
		adapterMsg: f.elements.adapter.closest("label").textContent,
		keyHint: f.elements.api_key.placeholder,
		status: document.getElementById("settings-status").textContent,
		statusCls: document.getElementById("settings-status").className,
		page: document.documentElement.outerHTML }; })()`
	st, err := browsertest.Eval[state](b, read)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Displays) != 2 || !strings.Contains(st.Displays[1], "800x600") || !st.AdapterOff || !strings.Contains(st.AdapterMsg, "set by the environment") || st.KeyHint != "not set" {
		t.Fatalf("the panel before any change: %+v", st)
	}

	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}

	// A refused value: the server's message, naming the field, is shown.
	set := func(fields map[string]string) error {
		js := `(() => { const f = ` + form + `;`
		for k, v := range fields {
			js += `f.elements["` + k + `"].value = ` + quote(v) + `;`
		}
		js += `document.getElementById("settings-save").click(); return true; })()`
		_, err := browsertest.Eval[bool](b, js)
		return err
	}
	if err := set(map[string]string{"base_url": "ftp://models.example"}); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `document.getElementById("settings-status").className === "error"`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if st, _ = browsertest.Eval[state](b, read); !strings.Contains(st.Status, "base_url") || !strings.Contains(st.Status, "http://") {
		t.Errorf("refused value: status %q", st.Status)
	}
	if a.HasModel() {
		t.Fatal("a refused change gave the server a model")
	}
	b.ResetErrors() // Chromium logs the 400 it was meant to get

	// A model with its key: saved, and the next task has a model.
	if err := set(map[string]string{"base_url": "http://127.0.0.1:9/v1", "provider": "openai", "model": "gpt-4o", "api_key": key}); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `document.getElementById("settings-status").className === "ok"`, 10*time.Second); err != nil {
		st, _ = browsertest.Eval[state](b, read)
		t.Fatalf("%v; status %q", err, st.Status)
	}
	st, err = browsertest.Eval[state](b, read)
	if err != nil {
		t.Fatal(err)
	}
	if !a.HasModel() || st.KeyHint != "set (type to replace)" || !strings.Contains(st.Status, "next task") {
		t.Errorf("after saving: has model %v, panel %+v", a.HasModel(), st)
	}
	if strings.Contains(st.Page, key) {
		t.Error("the page shows the API key")
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
