package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorOCRProgram: doctor's OCR row names the tesseract it found and
// where from: PATH, or a program outside PATH that GUI_AGENT_OCR_TESSERACT
// names; a path that is no program is a warning naming the variable and
// the fix.
func TestDoctorOCRProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tesseract")
	}
	real, err := exec.LookPath("tesseract")
	if err != nil {
		t.Fatalf("tesseract is not installed: %v (CI installs tesseract-ocr and tesseract-ocr-eng)", err)
	}
	env := baseEnv(t)
	_, out, _ := runCmd(t, env, "doctor")
	if level, detail := doctorRow(out, "OCR"); level != "ok" || !strings.Contains(detail, "from PATH") {
		t.Errorf("tesseract on PATH: %s %q\n%s", level, detail, out)
	}
	outside := filepath.Join(t.TempDir(), "tess-outside-path")
	if err := os.Symlink(real, outside); err != nil {
		t.Fatal(err)
	}
	env["GUI_AGENT_OCR_TESSERACT"] = outside
	_, out, _ = runCmd(t, env, "doctor")
	if level, detail := doctorRow(out, "OCR"); level != "ok" || !strings.Contains(detail, "at "+outside+" (from GUI_AGENT_OCR_TESSERACT)") {
		t.Errorf("GUI_AGENT_OCR_TESSERACT=%s: %s %q", outside, level, detail)
	}
	env["GUI_AGENT_OCR_TESSERACT"] = "/nonexistent/bin/tesseract"
	_, out, _ = runCmd(t, env, "doctor")
	level, detail := doctorRow(out, "OCR")
	if level != "warn" || !strings.Contains(detail, "GUI_AGENT_OCR_TESSERACT=/nonexistent/bin/tesseract") || !strings.Contains(out, "set GUI_AGENT_OCR_TESSERACT to the path of the tesseract program") {
		t.Errorf("a bad GUI_AGENT_OCR_TESSERACT: %s %q, want a warning naming the variable and the fix\n%s", level, detail, out)
	}
	if n := strings.Count(out, "set GUI_AGENT_OCR_TESSERACT to the path of the tesseract program"); n != 1 {
		t.Errorf("doctor says the fix %d times, want once (on the row's fix line)\n%s", n, out)
	}
}

// TestDoctorOCRMissingOrBroken: with no tesseract on PATH, doctor's OCR row
// says it is not installed (once) and how to install it; with a tesseract
// on PATH that fails, it says that the program failed, not that it is
// missing.
func TestDoctorOCRMissingOrBroken(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	env := baseEnv(t)
	_, out, _ := runCmd(t, env, "doctor")
	level, detail := doctorRow(out, "OCR")
	if level != "warn" || strings.Count(detail, "not installed") != 1 || !strings.Contains(out, "apt-get install tesseract-ocr") {
		t.Errorf("no tesseract on PATH: %s %q, want a warning saying once that it is not installed, and the install command\n%s", level, detail, out)
	}
	broken := filepath.Join(dir, "tesseract")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'error while loading shared libraries' >&2\nexit 127\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, out, _ = runCmd(t, env, "doctor")
	level, detail = doctorRow(out, "OCR")
	if level != "warn" || !strings.Contains(detail, broken+" --version failed") || !strings.Contains(detail, "error while loading shared libraries") || strings.Contains(detail, "not installed") {
		t.Errorf("a tesseract on PATH that fails: %s %q, want a warning that it failed and why, not that it is missing\n%s", level, detail, out)
	}
}
