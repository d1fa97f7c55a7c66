package tesseract

import (
	"context"
	"errors"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/ocr"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

func TestParseLangs(t *testing.T) {
	out := "List of available languages in \"/usr/share/tesseract-ocr/5/tessdata/\" (4):\njpn\neng\nosd\nchi_sim\n"
	if got := parseLangs([]byte(out)); !slices.Equal(got, []string{"chi_sim", "eng", "jpn"}) {
		t.Errorf("parseLangs = %v, want chi_sim eng jpn (osd is not a language)", got)
	}
}

func TestCheckLangsNamesThePackage(t *testing.T) {
	have := []string{"eng"}
	if err := CheckLangs([]string{"eng"}, have); err != nil {
		t.Errorf("eng installed: %v", err)
	}
	err := CheckLangs([]string{"eng", "chi_sim"}, have)
	if !errors.Is(err, ocr.ErrUnavailable) || !strings.Contains(err.Error(), `"chi_sim"`) || !strings.Contains(err.Error(), "installed: eng") {
		t.Errorf("chi_sim missing: %v, want ErrUnavailable naming it and what is installed", err)
	}
	if LangPackage("chi_sim") != "tesseract-ocr-chi-sim" || LangPackage("jpn") != "tesseract-ocr-jpn" {
		t.Errorf("packages %s %s", LangPackage("chi_sim"), LangPackage("jpn"))
	}
	if err := CheckLangs([]string{"eng;rm"}, have); err == nil || errors.Is(err, ocr.ErrUnavailable) || !strings.Contains(err.Error(), "not a Tesseract language name") {
		t.Errorf("a bad name: %v", err)
	}
	if err := CheckLangs(nil, have); err == nil {
		t.Error("no language: want an error")
	}
}

func TestProbeAndMissingProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tesseract")
	}
	info, err := Probe(context.Background(), "")
	if err != nil {
		t.Fatalf("Probe: %v (CI installs tesseract-ocr and tesseract-ocr-eng)", err)
	}
	if !strings.HasPrefix(info.Version, "tesseract ") || !slices.Contains(info.Langs, "eng") || slices.Contains(info.Langs, "osd") {
		t.Errorf("Probe = %+v, want a version and eng", info)
	}
	_, err = New(context.Background(), Options{Binary: "/nonexistent/tesseract"})
	if !errors.Is(err, ocr.ErrUnavailable) || !strings.Contains(err.Error(), InstallHint()) {
		t.Errorf("missing program: %v, want ErrUnavailable saying %q", err, InstallHint())
	}
	_, err = New(context.Background(), Options{Langs: []string{"eng", "zzz_none"}})
	if !errors.Is(err, ocr.ErrUnavailable) || !strings.Contains(err.Error(), "tesseract-ocr-zzz-none") {
		t.Errorf("missing language: %v, want the package to install", err)
	}
}

func TestParseWords(t *testing.T) {
	rows := [][]string{
		strings.Split("1\t1\t0\t0\t0\t0\t0\t0\t640\t480\t-1\t", "\t"),
		strings.Split("4\t1\t1\t1\t1\t0\t10\t20\t100\t30\t-1\t", "\t"),
		strings.Split("5\t1\t1\t1\t1\t1\t10\t20\t40\t30\t96.5\tHello", "\t"),
		strings.Split("5\t1\t1\t1\t1\t2\t60\t20\t50\t30\t91\tworld", "\t"),
		strings.Split("5\t1\t1\t1\t2\t1\t10\t60\t50\t30\t-1\t ", "\t"),
		strings.Split("5\t1\t2\t1\t1\t1\t10\t90\t0\t30\t90\tflat", "\t"),
	}
	ws := parseWords(rows)
	if len(ws) != 2 || ws[0].text != "Hello" || ws[0].box != image.Rect(10, 20, 50, 50) || ws[0].conf != 96.5 || ws[0].line != ws[1].line {
		t.Errorf("parseWords = %+v, want Hello and world on one line", ws)
	}
}

// label draws s in the 7x13 bitmap font, fg on a bg button, at (x, y).
func label(img *image.RGBA, x, y int, s string, fg, bg color.RGBA) geom.ImageRect {
	btn := geom.ImageRect{X: x - 16, Y: y - 10, W: 7*len(s) + 32, H: 33}
	for yy := btn.Y; yy < btn.Y+btn.H; yy++ {
		for xx := btn.X; xx < btn.X+btn.W; xx++ {
			img.SetRGBA(xx, yy, bg)
		}
	}
	d := font.Drawer{Dst: img, Src: image.NewUniform(fg), Face: basicfont.Face7x13, Dot: fixed.P(x, y+11)}
	d.DrawString(s)
	return btn
}

// TestEngineSurvivesItsProcesses: a tesseract process that died while idle
// is replaced on the next read; a read whose context ends returns at once
// and the next read works; Close ends the processes and later reads fail.
func TestEngineSurvivesItsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tesseract")
	}
	img := image.NewRGBA(image.Rect(0, 0, 400, 120))
	for i := range img.Pix {
		img.Pix[i] = 0xec
	}
	btn := label(img, 40, 40, "Continue", color.RGBA{255, 255, 255, 255}, color.RGBA{0x15, 0x65, 0xc0, 255})
	e, err := New(context.Background(), Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	read := func() (ocr.Page, error) { return e.Read(context.Background(), img, geom.ImageRect{}) }
	p, err := read()
	if err != nil || !strings.Contains(p.Text(), "Continue") || !p.Lines[0].Box.In(btn) {
		t.Fatalf("read %q %v, want Continue inside %v", p.Text(), err, btn)
	}
	s := <-e.slots
	s.cmd.Process.Kill()
	<-s.exited
	e.slots <- s
	if p, err := read(); err != nil || !strings.Contains(p.Text(), "Continue") {
		t.Errorf("after its process died: %q %v", p.Text(), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	if _, err := e.Read(ctx, img, geom.ImageRect{}); !errors.Is(err, context.Canceled) || time.Since(t0) > 5*time.Second {
		t.Errorf("cancelled read: %v after %v", err, time.Since(t0))
	}
	if p, err := read(); err != nil || !strings.Contains(p.Text(), "Continue") {
		t.Errorf("after a cancelled read: %q %v", p.Text(), err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := read(); !errors.Is(err, errClosed) {
		t.Errorf("read after Close: %v", err)
	}
}

// TestNamedProgram: a tesseract outside PATH is run when Options.Binary
// names it; a Binary that is no program, or not Tesseract, is an error
// wrapping ErrUnavailable that names the setting and the fix.
func TestNamedProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tesseract")
	}
	real, err := exec.LookPath("tesseract")
	if err != nil {
		t.Fatalf("tesseract is not installed: %v", err)
	}
	dir := t.TempDir()
	outside := filepath.Join(dir, "tess-outside-path")
	if err := os.Symlink(real, outside); err != nil {
		t.Fatal(err)
	}
	notTess := filepath.Join(dir, "not-tesseract")
	if err := os.WriteFile(notTess, []byte("#!/bin/sh\necho 'hello 1.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no tesseract on PATH
	if _, err := New(context.Background(), Options{}); !errors.Is(err, ocr.ErrUnavailable) || !strings.Contains(err.Error(), "not installed") {
		t.Fatalf("with no tesseract on PATH: %v, want it not installed", err)
	}
	e, err := New(context.Background(), Options{Binary: outside, BinaryVar: "TESS_VAR", Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	img := image.NewRGBA(image.Rect(0, 0, 300, 80))
	for i := range img.Pix {
		img.Pix[i] = 0xec
	}
	btn := label(img, 40, 30, "Continue", color.RGBA{255, 255, 255, 255}, color.RGBA{0x15, 0x65, 0xc0, 255})
	if p, err := e.Read(context.Background(), img, geom.ImageRect{}); err != nil || p.Text() != "Continue" || !p.Lines[0].Box.In(btn) {
		t.Errorf("read with %s: %q %v, want Continue inside %v", outside, p.Text(), err, btn)
	}
	if e.Info().Path != outside {
		t.Errorf("Info().Path = %q, want %q", e.Info().Path, outside)
	}
	for bin, want := range map[string]string{
		filepath.Join(dir, "missing"): "no such program",
		notTess:                       `is not Tesseract (its --version says "hello 1.0")`,
	} {
		_, err := New(context.Background(), Options{Binary: bin, BinaryVar: "TESS_VAR"})
		if !errors.Is(err, ocr.ErrUnavailable) || !strings.Contains(err.Error(), "TESS_VAR="+bin+": ") || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "set TESS_VAR to the path of the tesseract program, or unset it") {
			t.Errorf("Binary %s: %v, want ErrUnavailable naming TESS_VAR, saying %q and the fix", bin, err, want)
		}
	}
}

// TestLineCacheReadsOnlyChangedLines: the next frame of a screen with one
// label changed reads as an engine without the cache reads it, the other
// labels taken from the cache; with LineCache < 0 nothing is remembered.
func TestLineCacheReadsOnlyChangedLines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tesseract")
	}
	frame := func(third string) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, 400, 200))
		for i := range img.Pix {
			img.Pix[i] = 0xec
		}
		label(img, 40, 30, "Continue", color.RGBA{255, 255, 255, 255}, color.RGBA{0x15, 0x65, 0xc0, 255})
		label(img, 40, 90, "Cancel", color.RGBA{0, 0, 0, 255}, color.RGBA{0xd9, 0xd9, 0xd9, 255})
		label(img, 40, 150, third, color.RGBA{255, 255, 255, 255}, color.RGBA{0xc6, 0x28, 0x28, 255})
		return img
	}
	cached, err := New(context.Background(), Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	plain, err := New(context.Background(), Options{Workers: 1, LineCache: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	read := func(e *Engine, img image.Image) ocr.Page {
		p, err := e.Read(context.Background(), img, geom.ImageRect{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := read(cached, frame("Delete"))
	if got := first.Text(); got != "Continue\nCancel\nDelete" || cached.lines.hits != 0 {
		t.Fatalf("first frame: %q, %d lines from the cache; want the three labels read", got, cached.lines.hits)
	}
	next := frame("Remove")
	got, want := read(cached, next), read(plain, next)
	if got.Text() != "Continue\nCancel\nRemove" || !slices.EqualFunc(got.Lines, want.Lines, func(a, b ocr.Line) bool {
		return a.Text == b.Text && a.Box == b.Box && a.Conf == b.Conf
	}) {
		t.Errorf("next frame with the cache %+v, without %+v", got.Lines, want.Lines)
	}
	if cached.lines.hits != 2 || plain.lines.hits != 0 {
		t.Errorf("lines from the cache: %d with it, %d without; want the 2 unchanged ones, and none", cached.lines.hits, plain.lines.hits)
	}
}
