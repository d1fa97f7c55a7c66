package tesseract

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// benchScreen is a 1920x1080 screen of the sample app's form, two Tk forms
// and a window of 40 lines of text, captured once.
func benchScreen(b *testing.B) (*image.RGBA, []widget) {
	b.Helper()
	s := startScreen(b, 1920, 1080)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	app, err := sampleapp.Start(ctx, sampleapp.Options{Display: s.display, Scene: sampleapp.SceneForm, Width: 1100, Height: 700})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { app.Close() })
	if _, err := app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "ready" }); err != nil {
		b.Fatal(err)
	}
	ws := s.startForm(b, 1120, 20)
	ws = append(ws, s.startForm(b, 1500, 20)...)
	s.startText(b, textWindow{x: 1120, y: 460, w: 790, h: 600, words: 14})
	return s.shoot(b), ws
}

// textWindow is a window of testdata/text.tcl: where, and its lines' words.
type textWindow struct{ x, y, w, h, words, seed int }

// startText runs testdata/text.tcl on the screen and returns the lines it
// shows wholly, as it wrote them.
func (s *screen) startText(b *testing.B, w textWindow) []string {
	b.Helper()
	script, _ := filepath.Abs("testdata/text.tcl")
	cmd := exec.Command("wish", script, fmt.Sprint(w.x), fmt.Sprint(w.y), fmt.Sprint(w.w), fmt.Sprint(w.h), fmt.Sprint(w.words), fmt.Sprint(w.seed))
	cmd.Env = append(cmd.Environ(), "DISPLAY="+s.display)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	var visible int
	if !sc.Scan() {
		b.Fatal("the text window did not get ready")
	}
	if _, err := fmt.Sscanf(sc.Text(), "ready %d", &visible); err != nil {
		b.Fatalf("the text window printed %q, want ready and its visible lines", sc.Text())
	}
	time.Sleep(300 * time.Millisecond)
	words := strings.Fields(`the screen shows a form with fields and buttons and a list of items that a person reads
	    quickly while an agent finds each label by its words alone without asking a model where it is`)
	var lines []string
	for i := 1; i <= visible; i++ {
		line := fmt.Sprintf("Line %d:", i)
		for k := range w.words {
			line += " " + words[(i*7+k*3+w.seed)%len(words)]
		}
		lines = append(lines, line)
	}
	return lines
}

// denseScreen is a 1920x1080 screen full of text: four text windows of
// lines of 22 words (32 of them in view in each), each with other words. It
// returns the lines each shows wholly.
func denseScreen(b *testing.B) (*image.RGBA, [][]string) {
	b.Helper()
	s := startScreen(b, 1920, 1080)
	var texts [][]string
	for i, at := range []image.Point{{0, 0}, {960, 0}, {0, 540}, {960, 540}} {
		texts = append(texts, s.startText(b, textWindow{x: at.X, y: at.Y, w: 960, h: 540, words: 22, seed: 5 * i}))
	}
	return s.shoot(b), texts
}

// linesRight counts the lines of texts that p reads exactly, each a line
// of its own.
func linesRight(p ocr.Page, texts [][]string) (right, all int) {
	read := map[string]int{}
	for _, l := range p.Lines {
		read[l.Text]++
	}
	for _, t := range texts {
		for _, l := range t {
			all++
			if read[l] > 0 {
				read[l]--
				right++
			}
		}
	}
	return right, all
}

// timeReads reads region of img n times with e and returns the durations.
func timeReads(b *testing.B, e ocr.Engine, img image.Image, region geom.ImageRect, n int) ([]time.Duration, ocr.Page) {
	b.Helper()
	var ds []time.Duration
	var p ocr.Page
	for range n {
		c0 := processCPU(e)
		t0 := time.Now()
		var err error
		if p, err = e.Read(context.Background(), img, region); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
		if c := processCPU(e); c0 > 0 { // not the read that started the processes
			cpu[e] = append(cpu[e], c-c0)
		}
	}
	return ds, p
}

// cpu holds the CPU time tesseract's processes spent on each read timed, by
// engine (Linux only): less swayed by other work on the machine than the
// wall time, it says what a read costs on an idle one (about half of it
// with two processes).
var cpu = map[ocr.Engine][]time.Duration{}

// processCPU is the CPU time e's tesseract processes have used (user and
// system), read from /proc; 0 where there is none.
func processCPU(e ocr.Engine) time.Duration {
	te, ok := e.(*Engine)
	if !ok || runtime.GOOS != "linux" {
		return 0
	}
	var ss []*server
	for range te.o.Workers {
		ss = append(ss, <-te.slots)
	}
	var d time.Duration
	for _, s := range ss {
		if s == nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
		if i := bytes.LastIndexByte(b, ')'); err == nil && i > 0 {
			f := strings.Fields(string(b[i+1:]))
			u, _ := strconv.Atoi(f[11]) // utime and stime, fields 14 and 15 (f[0] is field 3), in 1/100 s
			k, _ := strconv.Atoi(f[12])
			d += time.Duration(u+k) * 10 * time.Millisecond
		}
	}
	for _, s := range ss {
		te.slots <- s
	}
	return d
}

// reportCPU reports the median CPU time of e's reads as name.
func reportCPU(b *testing.B, e ocr.Engine, name string) {
	if ds := cpu[e]; len(ds) > 0 {
		b.ReportMetric(ms(median(ds)), name)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkReadScreen1080 reads a whole 1920x1080 screen with the engine
// (lines found, prepared and read by two tesseract processes) and, in the
// same run, with Tesseract alone on the raw screen (Options.Raw), warm
// processes both, the engine with no line cache: every read reads every
// line. It reports the medians, their ratio, the processes' CPU time per
// read, and how many of the Tk forms' labels each read inside their
// widgets; and the median of the engine reading the next frame of the
// screen, one line of it changed, with its line cache.
func BenchmarkReadScreen1080(b *testing.B) {
	img, ws := benchScreen(b)
	prepared, raw, pp, rp, pd, rd := readBoth(b, img)
	reportCPU(b, prepared, "engine-cpu-ms")
	reportCPU(b, raw, "raw-cpu-ms")
	b.ReportMetric(ms(median(pd)), "engine-median-ms")
	b.ReportMetric(ms(median(rd)), "raw-median-ms")
	b.ReportMetric(float64(median(pd))/float64(median(rd)), "engine/raw")
	b.ReportMetric(float64(labelsFound(pp, ws)), "engine-labels")
	b.ReportMetric(float64(labelsFound(rp, ws)), "raw-labels")
	b.ReportMetric(float64(len(ws)), "labels")
	b.ReportMetric(float64(len(pp.Lines)), "engine-lines")
	b.ReportMetric(float64(len(rp.Lines)), "raw-lines")
	b.ReportMetric(ms(median(nextFrames(b, img, len(pd)))), "engine-next-frame-median-ms")
}

// nextFrames reads n frames of img with an engine with its line cache, each
// frame with one line that no frame before had ("frame K" drawn in an empty
// part of the screen), and returns the durations.
func nextFrames(b *testing.B, img *image.RGBA, n int) []time.Duration {
	e := newEngine(b, Options{})
	timeReads(b, e, img, geom.ImageRect{}, 1)
	var ds []time.Duration
	for k := range max(n, 3) {
		next := image.NewRGBA(img.Rect)
		copy(next.Pix, img.Pix)
		d := font.Drawer{Dst: next, Src: image.NewUniform(color.Black), Face: basicfont.Face7x13, Dot: fixed.P(60, 620)}
		d.DrawString(fmt.Sprintf("frame %d", k+1))
		t, p := timeReads(b, e, next, geom.ImageRect{}, 1)
		if !strings.Contains(p.Text(), fmt.Sprintf("frame %d", k+1)) {
			b.Fatalf("frame %d: the changed line is not read: %s", k+1, p.Text())
		}
		ds = append(ds, t...)
	}
	return ds
}

// BenchmarkReadRegion400x200 reads a 400x200 region of the same screen (a
// Tk form's buttons, colour buttons and list) with warm processes.
func BenchmarkReadRegion400x200(b *testing.B) {
	img, ws := benchScreen(b)
	var region geom.ImageRect
	for _, w := range ws {
		if w.name == "button_open" {
			region = geom.ImageRect{X: w.rect.X - 10, Y: w.rect.Y - 10, W: 400, H: 200}
			break
		}
	}
	prepared, raw := newEngine(b, Options{LineCache: -1}), newEngine(b, Options{Raw: true})
	timeReads(b, prepared, img, region, 1)
	timeReads(b, raw, img, region, 1)
	var pd, rd []time.Duration
	var pp ocr.Page
	for b.Loop() {
		var d []time.Duration
		d, pp = timeReads(b, prepared, img, region, 1)
		pd = append(pd, d...)
		d, _ = timeReads(b, raw, img, region, 1)
		rd = append(rd, d...)
	}
	reportCPU(b, prepared, "engine-cpu-ms")
	reportCPU(b, raw, "raw-cpu-ms")
	b.ReportMetric(ms(median(pd)), "engine-median-ms")
	b.ReportMetric(ms(median(rd)), "raw-median-ms")
	b.ReportMetric(float64(len(pp.Lines)), "engine-lines")
}

// BenchmarkReadDenseScreen1080 reads a 1920x1080 screen full of text (four
// text windows, 128 lines of 22 words in view) with the engine and, in
// the same run, with Tesseract alone, and reports the medians and how many
// of the lines each read exactly.
func BenchmarkReadDenseScreen1080(b *testing.B) {
	img, texts := denseScreen(b)
	prepared, raw, pp, rp, pd, rd := readBoth(b, img)
	right, all := linesRight(pp, texts)
	rawRight, _ := linesRight(rp, texts)
	reportCPU(b, prepared, "engine-cpu-ms")
	reportCPU(b, raw, "raw-cpu-ms")
	b.ReportMetric(ms(median(pd)), "engine-median-ms")
	b.ReportMetric(ms(median(rd)), "raw-median-ms")
	b.ReportMetric(float64(median(pd))/float64(median(rd)), "engine/raw")
	b.ReportMetric(float64(right), "engine-lines-right")
	b.ReportMetric(float64(rawRight), "raw-lines-right")
	b.ReportMetric(float64(all), "lines")
}

// BenchmarkFindCached is a find on a frame already read: the Reader's cache.
func BenchmarkFindCached(b *testing.B) {
	img, _ := benchScreen(b)
	r := ocr.NewReader(newEngine(b, Options{}), 0)
	q := ocr.Query{Text: "Submit"}
	if _, _, err := r.Find(context.Background(), "f", img, q); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ms, _, err := r.Find(context.Background(), "f", img, q); err != nil || len(ms) == 0 {
			b.Fatal(fmt.Sprint(ms, err))
		}
	}
}

// labelsFound counts the widgets whose text p has inside their rect.
func labelsFound(p ocr.Page, ws []widget) int {
	n := 0
	for _, w := range ws {
		ms, _ := ocr.Find(p, ocr.Query{Text: w.text, CaseSensitive: true})
		for _, m := range ms {
			if m.Box.In(w.rect) {
				n++
				break
			}
		}
	}
	return n
}

// readBoth reads the whole of img as b.Loop says with the engine (no line
// cache) and, in the same run, with Tesseract alone on the raw screen (warm
// processes both), and returns the two engines, the last pages each read
// and their durations.
func readBoth(b *testing.B, img image.Image) (prepared, raw *Engine, pp, rp ocr.Page, pd, rd []time.Duration) {
	prepared, raw = newEngine(b, Options{LineCache: -1}), newEngine(b, Options{Raw: true})
	timeReads(b, prepared, img, geom.ImageRect{}, 1) // start the processes
	timeReads(b, raw, img, geom.ImageRect{}, 1)
	for b.Loop() {
		var d []time.Duration
		d, pp = timeReads(b, prepared, img, geom.ImageRect{}, 1)
		pd = append(pd, d...)
		d, rp = timeReads(b, raw, img, geom.ImageRect{}, 1)
		rd = append(rd, d...)
	}
	return prepared, raw, pp, rp, pd, rd
}
