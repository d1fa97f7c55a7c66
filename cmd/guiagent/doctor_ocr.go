package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/ocr/tesseract"
)

// checkOCR says whether Tesseract, which finds text on the screen without a
// model, is installed, and whether it has the languages of
// GUI_AGENT_OCR_LANGS. Both are optional: without them only text finding is
// missing.
func checkOCR(ctx context.Context, c config.Config, add func(level, name, detail, fix string)) {
	info, err := tesseract.Probe(ctx, "")
	if err != nil {
		add("warn", "OCR", "text is found on the screen without a model by Tesseract, which is not installed: "+err.Error(), tesseract.InstallHint())
		return
	}
	detail := fmt.Sprintf("%s at %s, languages %s (installed: %s)", info.Version, info.Path, strings.Join(c.OCRLangs, "+"), strings.Join(info.Langs, ", "))
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
