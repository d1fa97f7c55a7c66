package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/ocr/tesseract"
)

// checkOCR says whether Tesseract, which finds text on the screen without a
// model, is installed (on PATH, or where GUI_AGENT_OCR_TESSERACT says), and
// whether it has the languages of GUI_AGENT_OCR_LANGS. Both are optional:
// without them only text finding is missing.
func checkOCR(ctx context.Context, c config.Config, add func(level, name, detail, fix string)) {
	knob := config.Var("OCRTesseract")
	info, err := tesseract.ProbeNamed(ctx, c.OCRTesseract, knob)
	if err != nil {
		why := err.Error() // the fix goes on the row's own line, not twice
		if pe, ok := errors.AsType[*tesseract.ProbeError](err); ok {
			why = pe.Problem
		}
		if c.OCRTesseract != "" {
			add("warn", "OCR", "text is found on the screen without a model by Tesseract, which does not run: "+why,
				"set "+knob+" to the path of the tesseract program, or unset it to use tesseract from PATH ("+tesseract.InstallHint()+")")
			return
		}
		// why says what is wrong: not installed, or installed and failing.
		add("warn", "OCR", "text is found on the screen without a model by Tesseract: "+why, tesseract.InstallHint())
		return
	}
	from := "from PATH"
	if c.OCRTesseract != "" {
		from = "from " + knob
	}
	detail := fmt.Sprintf("%s at %s (%s), languages %s (installed: %s)", info.Version, info.Path, from, strings.Join(c.OCRLangs, "+"), strings.Join(info.Langs, ", "))
	if err := tesseract.CheckLangs(c.OCRLangs, info.Langs); err != nil {
		var fixes []string
		for _, l := range c.OCRLangs {
			if tesseract.CheckLangs([]string{l}, info.Langs) != nil {
				fixes = append(fixes, tesseract.LangInstallHint(l))
			}
		}
		add("warn", "OCR", detail+": "+err.Error(), strings.Join(fixes, "; ")+", or change "+config.Var("OCRLangs"))
		return
	}
	add("ok", "OCR", detail, "")
}
