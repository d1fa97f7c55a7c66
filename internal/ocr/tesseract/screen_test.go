package tesseract

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/testenv"
)

// screen is a private Xvfb with an x11 backend on it.
type screen struct {
	display string
	be      *x11.Backend
	d       geom.Display
}

func startScreen(tb testing.TB, w, h int) *screen {
	tb.Helper()
	vd := xvfbtest.Start(tb, w, h)
	be := x11.New(x11.Options{Display: vd.Display})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := be.Start(ctx); err != nil {
		tb.Fatalf("x11 backend on %s: %v", vd.Display, err)
	}
	tb.Cleanup(func() { _ = be.Close() })
	ds, err := be.Displays(ctx)
	if err != nil || len(ds) == 0 {
		tb.Fatalf("displays of %s: %v %v", vd.Display, ds, err)
	}
	return &screen{display: vd.Display, be: be, d: ds[0]}
}

// shoot captures the whole display through the screenshot pipeline at its
// own size and returns the prepared pixels (Options.KeepPixels): what a
// frame's image holds, pixel for pixel.
func (s *screen) shoot(tb testing.TB) *image.RGBA {
	tb.Helper()
	o := imaging.Options{Format: "png", MaxLongEdge: s.d.Bounds.Size().LongEdge(), KeepPixels: true}
	shot, err := imaging.NewPipeline().Shoot(context.Background(), s.be, s.d, geom.Rect{}, o, "test")
	if err != nil {
		tb.Fatal(err)
	}
	if shot.Frame.Region != s.d.Bounds || shot.Frame.Content != s.d.Bounds.Size() {
		tb.Fatalf("frame %+v is not the display at its own size %v", shot.Frame, s.d.Bounds)
	}
	return shot.Pixels
}

// widget is one text-showing widget of the Tk form, as Tk reports it.
type widget struct {
	name, text string
	rect       geom.ImageRect // root-window pixels, which are the frame's image pixels here
}

// startForm runs testdata/form.tcl on the screen with its window at (x, y)
// and returns its widgets once it has drawn them.
func (s *screen) startForm(tb testing.TB, x, y int) []widget {
	tb.Helper()
	wish, err := exec.LookPath("wish")
	if err != nil {
		tb.Fatalf("wish (Tk) is not installed: apt-get install tk (%v)", err)
	}
	script, err := filepath.Abs("testdata/form.tcl")
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(wish, script, fmt.Sprint(x), fmt.Sprint(y))
	cmd.Env = append(cmd.Environ(), "DISPLAY="+s.display)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	testenv.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var ws []widget
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				tb.Fatalf("the Tk form ended before it was ready: %s", stderr.String())
			}
			if l == "ready" {
				time.Sleep(200 * time.Millisecond) // the last expose reaches the screen
				return ws
			}
			w, err := parseWidget(l)
			if err != nil {
				tb.Fatal(err)
			}
			ws = append(ws, w)
		case <-timeout:
			tb.Fatalf("the Tk form did not get ready in 20 s: %s", stderr.String())
		}
	}
}

// parseWidget reads "NAME<TAB>TEXT<TAB>X Y W H".
func parseWidget(l string) (widget, error) {
	f := strings.Split(l, "\t")
	if len(f) != 3 {
		return widget{}, fmt.Errorf("the Tk form printed %q, want NAME<TAB>TEXT<TAB>X Y W H", l)
	}
	w := widget{name: f[0], text: f[1]}
	if _, err := fmt.Sscanf(f[2], "%d %d %d %d", &w.rect.X, &w.rect.Y, &w.rect.W, &w.rect.H); err != nil {
		return widget{}, fmt.Errorf("the Tk form printed %q: %v", l, err)
	}
	return w, nil
}
