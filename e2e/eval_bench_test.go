package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/eval"
	"github.com/guiagent/guiagent/internal/testenv"
)

// benchSuite is n copies of the sample form task.
func benchSuite(n int) string {
	var b strings.Builder
	b.WriteString("name: bench\ntasks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: form-%d\n    setup: {run: guiagent sample-app --scene form, ready: '\"event\":\"ready\"'}\n"+
			"    task: In the sample form, enter the name Ada Lovelace, the email ada@example.org and the city London, then press Submit.\n"+
			"    check: {app_output: '\"event\":\"submit\"'}\n", i+1)
	}
	return b.String()
}

// evalWall runs a suite of tasks form tasks at --parallel parallel with a
// fake model that holds each answer back 1 s, and returns the suite's wall
// time in seconds (results.json), failing unless every run passed.
func evalWall(b *testing.B, tasks, parallel int) float64 {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte(benchSuite(tasks)), 0o600); err != nil {
		b.Fatal(err)
	}
	code, _, stderr := runEval(b, dir, "suite.yaml", "--model", "fake:sample?delay=1s", "--parallel", fmt.Sprint(parallel), "--out", "out")
	if code != 0 {
		b.Fatalf("guiagent eval exit %d:\n%s", code, stderr)
	}
	res, err := eval.ReadResults(filepath.Join(dir, "out", eval.ResultsFile))
	if err != nil {
		b.Fatal(err)
	}
	if s := res.Summary[0]; s.Passed != tasks {
		b.Fatalf("%d of %d runs passed:\n%s", s.Passed, tasks, stderr)
	}
	return float64(res.WallMillis) / 1000
}

// BenchmarkEvalParallel measures a four-task suite (two model calls of 1 s
// each per task) at --parallel 1, 2 and 4, and one run alone against two at
// --parallel 2 (target: within 1.3x). Run with -benchtime=1x.
func BenchmarkEvalParallel(b *testing.B) {
	testenv.NeedX(b)
	for _, p := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("suite4/parallel=%d", p), func(b *testing.B) {
			total := 0.0
			for range b.N {
				total += evalWall(b, 4, p)
			}
			b.ReportMetric(total/float64(b.N), "s/suite")
			b.ReportMetric(0, "ns/op")
		})
	}
	b.Run("two-at-once-vs-one", func(b *testing.B) {
		ratio := 0.0
		for range b.N {
			one := evalWall(b, 1, 1)
			two := evalWall(b, 2, 2)
			b.Logf("one run alone %.2f s, two at --parallel 2 %.2f s: %.2fx", one, two, two/one)
			ratio += two / one
		}
		b.ReportMetric(ratio/float64(b.N), "x")
		b.ReportMetric(0, "ns/op")
	})
}
