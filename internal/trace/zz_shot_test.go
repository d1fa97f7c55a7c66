package trace

import (
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guiagent/guiagent/internal/trace/browsertest"
)

func TestZZShot(t *testing.T) {
	st := newTestStore(t, nil)
	run, _ := st.Begin("shot", "open the invoice and read its total", testConfig{APIKey: canary})
	play(t, run, run.ID(), script{steps: 3, w: 1280, h: 800, finish: true})
	run.Close()
	b := browsertest.New(t)
	b.Do(30*time.Second, chromedp.Navigate("file://"+run.ReportPath()))
	buf, err := chromedp.Run(b.Ctx(), chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("/tmp/rep.png", buf, 0o644)
	b.Do(30*time.Second, chromedp.Navigate("file://"+run.ReportPath()+"#step-2"))
	buf, _ = chromedp.Run(b.Ctx(), chromedp.CaptureScreenshot())
	os.WriteFile("/tmp/rep2.png", buf, 0o644)
}
