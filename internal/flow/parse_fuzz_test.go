package flow

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"testing"
)

// FuzzParse: whatever the text and the --var values, Parse never panics; it
// refuses with ErrInvalid and line numbers inside the text, or returns a
// flow whose steps start inside the text, number 1..n, and whose every
// ${name} is defined by a --var or by the save_as of an earlier step, so the
// runner's Expand never meets an undefined variable.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"name: f\nsteps:\n  - type: {target: the Name field, text: \"${who}\"}\n  - click: OK\n",
		"name: f\nsteps:\n  - query: {question: the total?, save_as: total}\n  - type: \"${total} ${who}\"\n",
		"name: f\nsteps:\n  - type: \"${later}\"\n  - locate: {target: Submit, save_as: later}\n",
		"name: f\nsteps:\n  - click: {text: \"${who}\"}\n  - drag: {from: a, to: \"${who}\"}\n",
		"name: f\nsteps:\n  - key: ctrl+s\n  - sleep: 1s\n  - wait_for: {condition: saved, timeout: 5s}\n",
		"name: f\nsteps:\n  - type: \"${}\"\n  - type: \"${a b}\"\n  - type: \"$${who}\"\n",
		"name: f\nsteps: [{act: \"do ${who}\"}, {assert: \"${who} shown\"}]\n",
		"name: &a f\nsteps: *a\n", "- a\n- b\n", "name: f\nsteps:\n  -\n", "{", "",
	} {
		f.Add([]byte(seed), "who", "Ada ${x}")
	}
	lineRef := regexp.MustCompile(`line (\d+)`)
	f.Fuzz(func(t *testing.T, text []byte, name, value string) {
		vars := map[string]string{name: value}
		fl, err := Parse(text, vars)
		lines := bytes.Count(text, []byte("\n")) + 1
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %q does not wrap ErrInvalid", err)
			}
			for _, m := range lineRef.FindAllStringSubmatch(err.Error(), -1) {
				if n, _ := strconv.Atoi(m[1]); n < 1 || n > lines {
					t.Errorf("error names line %d of a %d-line text: %q", n, lines, err)
				}
			}
			return
		}
		if len(fl.Steps) == 0 || len(fl.Steps) > MaxSteps {
			t.Fatalf("a valid flow with %d steps", len(fl.Steps))
		}
		defined := map[string]string{name: value}
		for i, st := range fl.Steps {
			if st.Index != i+1 || st.Line < 1 || st.Line > lines {
				t.Errorf("step %d: index %d at line %d of %d", i+1, st.Index, st.Line, lines)
			}
			for _, s := range st.texts() {
				if _, err := Expand(*s, defined); err != nil {
					t.Errorf("step %d (%s) passed Parse but %q does not expand: %v", st.Index, st.Kind, *s, err)
				}
			}
			if st.SaveAs != "" {
				defined[st.SaveAs] = "saved"
			}
		}
	})
}
