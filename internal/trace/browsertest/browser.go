// Package browsertest runs pages in a real headless Chromium for tests: it
// starts Debian's chromium through chromedp with a fresh profile and collects
// everything the page reports as an error (console errors, uncaught
// exceptions, error entries of the browser log such as failed loads and
// Content-Security-Policy violations).
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/guiagent/guiagent/internal/testenv"
)

// Path returns the Chromium binary: $CHROMIUM, or chromium / chromium-browser on PATH.
func Path() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium not found: install the Debian package chromium (.ci/run does) or set CHROMIUM to the binary")
}

// Browser is one headless Chromium tab with a fresh profile.
type Browser struct {
	ctx context.Context

	mu   sync.Mutex
	errs []string
}

// New starts Chromium for the test and stops it at cleanup. It fails the test
// when Chromium is missing or does not start.
func New(t testing.TB) *Browser {
	t.Helper()
	testenv.NeedChromium(t)
	path, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &Browser{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	b.ctx = ctx
	t.Cleanup(func() { cancel(); acancel() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser; no timeout here, see chromedp.Run
		t.Fatalf("start chromium %s: %v", path, err)
	}
	return b
}

func (b *Browser) listen(ev any) {
	var msg string
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			msg = "console." + string(e.Type) + ": " + strings.Join(parts, " ")
		}
	case *runtime.EventExceptionThrown:
		msg = "exception: " + e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError {
			msg = fmt.Sprintf("log %s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
		}
	case *network.EventLoadingFailed:
		if !e.Canceled {
			msg = "load failed: " + e.ErrorText + " " + string(e.BlockedReason)
		}
	}
	if msg != "" {
		b.mu.Lock()
		b.errs = append(b.errs, msg)
		b.mu.Unlock()
	}
}

// Ctx is the tab's chromedp context.
func (b *Browser) Ctx() context.Context { return b.ctx }

// Do runs actions in the tab, giving up after timeout.
func (b *Browser) Do(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// Eval evaluates a JavaScript expression in b's page and decodes its value.
func Eval[T any](b *Browser, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// WaitFor evaluates a JavaScript expression every 50 ms until it is truthy,
// up to timeout. Evaluation errors (such as a navigation replacing the page
// mid-check) are retried; the last one is reported on timeout.
func WaitFor(b *Browser, expr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := Eval[bool](b, "!!("+expr+")")
		if err == nil && ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last != nil {
				return fmt.Errorf("waiting %v for %s: last error: %w", timeout, expr, last)
			}
			return fmt.Errorf("waiting %v for %s: still false", timeout, expr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Errors returns the errors the pages reported so far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs...)
}

// ResetErrors forgets the errors reported so far.
func (b *Browser) ResetErrors() {
	b.mu.Lock()
	b.errs = nil
	b.mu.Unlock()
}
