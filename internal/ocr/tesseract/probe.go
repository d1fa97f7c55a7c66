// Package tesseract is an ocr.Engine on Tesseract's command-line program,
// which is optional at run time (like Xvfb): Probe says whether it is
// installed and which languages it has, for doctor; New checks the
// languages asked for (GUI_AGENT_OCR_LANGS) and names the package that
// installs a missing one.
//
// The engine keeps up to Options.Workers tesseract processes running,
// started on first use, each reading image paths from its standard input
// (stream_filelist) and writing TSV to its standard output, so a read pays
// for recognition and not for loading the model. A read finds the lines of
// text first (ocr/regions), binarizes each in its own polarity and scales
// it up, sends each line as an image of its own (one text line, psm 7: no
// page layout analysis) in batches, the costliest lines first, to whichever
// process is free, reads a crop that repeats another's once, and maps the
// words read back to the image's pixels. Options.Raw sends the region as it
// is instead (what Tesseract alone does with a screenshot; for comparison).
package tesseract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/ocr"
)

// DefaultBinary is the program run when Options.Binary is empty.
const DefaultBinary = "tesseract"

// Info is what Probe found.
type Info struct {
	// Path is the program's absolute path.
	Path string `json:"path"`
	// Version is the first line of `tesseract --version` ("tesseract 5.3.0").
	Version string `json:"version"`
	// Langs are the installed languages (`tesseract --list-langs`), sorted;
	// "osd" (orientation detection) is not a language and is left out.
	Langs []string `json:"langs"`
}

// Probe runs binary ("" = DefaultBinary) to find its version and languages.
// A missing program is an error wrapping ocr.ErrUnavailable that says how
// to install it.
func Probe(ctx context.Context, binary string) (Info, error) {
	return ProbeNamed(ctx, binary, "")
}

// ProbeNamed is Probe of a binary that setting (an environment variable;
// "" for none) named: when binary is not found or is not Tesseract, the
// error names the setting and how to fix it rather than how to install
// Tesseract.
func ProbeNamed(ctx context.Context, binary, setting string) (Info, error) {
	named := binary != "" && setting != ""
	if binary == "" {
		binary = DefaultBinary
	}
	fail := func(problem string, args ...any) *ProbeError {
		pe := &ProbeError{Problem: fmt.Sprintf(problem, args...)}
		if named {
			pe.Problem = setting + "=" + binary + ": " + pe.Problem
			pe.Fix = "set " + setting + " to the path of the tesseract program, or unset it to use tesseract from PATH"
		}
		return pe
	}
	path, err := exec.LookPath(binary)
	if err != nil {
		if named {
			return Info{}, fail("no such program (%v)", err)
		}
		pe := fail("%s is not installed (%v)", binary, err)
		pe.Fix = InstallHint()
		return Info{}, pe
	}
	info := Info{Path: path}
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return info, fail("%s --version failed: %v: %s", path, err, strings.TrimSpace(string(out)))
	}
	info.Version, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	if !strings.HasPrefix(strings.ToLower(info.Version), "tesseract") {
		return info, fail("%s is not Tesseract (its --version says %q)", path, info.Version)
	}
	out, err = exec.CommandContext(ctx, path, "--list-langs").CombinedOutput()
	if err != nil {
		return info, fail("%s --list-langs failed: %v: %s", path, err, strings.TrimSpace(string(out)))
	}
	info.Langs = parseLangs(out)
	return info, nil
}

// ProbeError is why a probe found no Tesseract it can use: the problem and,
// when there is one to give, its fix. It wraps ocr.ErrUnavailable; doctor
// shows the two apart.
type ProbeError struct {
	Problem, Fix string
}

func (e *ProbeError) Error() string {
	if e.Fix == "" {
		return ocr.ErrUnavailable.Error() + ": " + e.Problem
	}
	return ocr.ErrUnavailable.Error() + ": " + e.Problem + ": " + e.Fix
}

func (e *ProbeError) Unwrap() error { return ocr.ErrUnavailable }

// parseLangs reads the output of `tesseract --list-langs`: a header line
// ("List of available languages in ...") and one language per line.
func parseLangs(out []byte) []string {
	var langs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "List of") || strings.Contains(l, " ") || l == "osd" {
			continue
		}
		langs = append(langs, l)
	}
	slices.Sort(langs)
	return langs
}

// langName is what a Tesseract language name looks like: eng, chi_sim,
// script/Latin.
var langName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(/[A-Za-z0-9_]+)?$`)

// CheckLangs reports the first of want that is not a language name or not
// in have (Info.Langs); the error wraps ocr.ErrUnavailable for a missing
// one and names the package that installs it.
func CheckLangs(want, have []string) error {
	if len(want) == 0 {
		return errors.New("no OCR language given: use eng, or eng+jpn and the like")
	}
	for _, l := range want {
		if !langName.MatchString(l) {
			return fmt.Errorf("OCR language %q is not a Tesseract language name: use names such as eng, chi_sim, jpn, kor", l)
		}
		if !slices.Contains(have, l) {
			return fmt.Errorf("%w: OCR language %q is not installed (installed: %s): %s",
				ocr.ErrUnavailable, l, strings.Join(have, ", "), LangInstallHint(l))
		}
	}
	return nil
}

// LangPackage is the Debian and Ubuntu package of Tesseract language l:
// tesseract-ocr-chi-sim for chi_sim.
func LangPackage(l string) string {
	return "tesseract-ocr-" + strings.ToLower(strings.ReplaceAll(l, "_", "-"))
}

// LangInstallHint says how to install language l on this system.
func LangInstallHint(l string) string {
	switch runtime.GOOS {
	case "darwin":
		return "brew install tesseract-lang (all languages)"
	case "windows":
		return fmt.Sprintf("download %s.traineddata from https://github.com/tesseract-ocr/tessdata into Tesseract's tessdata folder", l)
	}
	return "apt-get install " + LangPackage(l)
}

// InstallHint says how to install Tesseract with English on this system.
func InstallHint() string {
	switch runtime.GOOS {
	case "darwin":
		return "brew install tesseract"
	case "windows":
		return "winget install UB-Mannheim.TesseractOCR, and put tesseract.exe on PATH"
	}
	return "apt-get install tesseract-ocr tesseract-ocr-eng"
}
