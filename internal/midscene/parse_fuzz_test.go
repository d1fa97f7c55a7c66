package midscene

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no script makes Parse panic, and a script it accepts has a
// flow whose steps are numbered from 1 (go test runs the seeds: every
// testdata script and a few broken shapes).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.y*ml"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"tasks:\n  - flow:\n", "web: [1]\ntasks: {}\n", "tasks:\n  - name: a\n    flow:\n      - [aiTap]\n      - aiTap: {locate: {prompt: [x]}}\n      - aiInput:\n        locate: {}\n      - aiKeyboardPress:\n      - aiScroll: {prompt: x}\n        distance: null\n",
		"android: 1\ntasks:\n  - name: a\n    flow:\n      - sleep: x\n      - launch: [a]\n", "computer:\n  displayId: {}\ntasks: []\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		pl, err := Parse(text, Options{Backends: []string{"browser"}, DirExists: func(string) bool { return true }, ReadFile: func(string) ([]byte, error) { return []byte("[]"), nil }})
		if err != nil {
			return
		}
		for i, s := range pl.Flow.Steps {
			if s.Index != i+1 {
				t.Fatalf("step %d has index %d", i+1, s.Index)
			}
		}
	})
}
