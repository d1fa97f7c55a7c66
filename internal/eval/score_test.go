package eval

import (
	"bytes"
	"strings"
	"testing"
)

// rows: model m over tasks a, b, c with three repeats; a passes every time,
// b once, c never; plus one setup error and one cancelled run of c.
func sampleRows(m string) []Row {
	var rows []Row
	add := func(task string, rep int, pass bool, ending string, steps int) {
		rows = append(rows, Row{Task: task, Model: m, Repeat: rep, Pass: pass, Ending: ending, Steps: steps, ModelCalls: steps + 1,
			InputTokens: 100 * steps, OutputTokens: 10, WallMillis: int64(1000 * steps), ModelMillis: int64(500 * steps)})
	}
	for rep := 1; rep <= 3; rep++ {
		add("a", rep, true, Completed, 2)
		add("b", rep, rep == 2, Completed, 4)
	}
	add("c", 1, false, OutOfBudget, 10)
	add("c", 2, false, SetupError, 0)
	add("c", 3, false, Cancelled, 1)
	return rows
}

func TestSummarize(t *testing.T) {
	s := Summarize(sampleRows("m"), []Model{{Name: "m"}, {Name: "unused"}}, 3)
	if len(s) != 2 {
		t.Fatalf("%d summaries", len(s))
	}
	m := s[0]
	// Scored: a x3, b x3, c x1 = 7; passed 4.
	if m.Runs != 9 || m.Scored != 7 || m.Passed != 4 || m.SetupErrors != 1 || m.Cancelled != 1 || !near(m.PassRate, 4.0/7) {
		t.Errorf("counts: %+v", m)
	}
	// pass@3: a and b passed at least once, of a, b, c; pass^3: only a.
	if !near(m.PassAtK, 2.0/3) || !near(m.PassHatK, 1.0/3) || m.K != 3 {
		t.Errorf("pass@k %v pass^k %v", m.PassAtK, m.PassHatK)
	}
	// Steps of scored runs: 2,2,2,4,4,4,10: median 4.
	if m.MedianSteps != 4 || m.MedianModelCalls != 5 || m.MedianTokens != 410 || m.MedianWallMillis != 4000 || m.MedianModelMillis != 2000 {
		t.Errorf("medians: %+v", m)
	}
	if c := m.Tasks["c"]; c.Scored != 1 || c.SetupErrors != 1 || c.Passed != 0 {
		t.Errorf("task c: %+v", c)
	}
	if u := s[1]; u.Runs != 0 || u.PassRate != 0 || u.PassAtK != 0 {
		t.Errorf("a model without runs: %+v", u)
	}
	if median([]float64{3, 1, 2, 10}) != 2.5 {
		t.Error("median of an even count")
	}
}

func TestDiffSaysWhatRegressed(t *testing.T) {
	models := []Model{{Name: "m"}}
	before := &Results{Summary: Summarize(sampleRows("m"), models, 3)}
	worse := sampleRows("m")
	worse[0].Pass = false // task a, repeat 1
	after := &Results{Summary: Summarize(worse, models, 3)}
	changes := Diff(before, after)
	text := FormatDiff(changes)
	if len(changes) != 2 || !changes[0].Regressed || !changes[1].Regressed {
		t.Fatalf("changes %+v", changes)
	}
	for _, want := range []string{"REGRESSED m: pass rate 57% -> 43%", "REGRESSED m · a: 3/3 passed -> 2/3"} {
		if !strings.Contains(text, want) {
			t.Errorf("diff lacks %q:\n%s", want, text)
		}
	}
	if back := Diff(after, before); len(back) != 2 || back[0].Regressed || !strings.Contains(FormatDiff(back), "improved  m · a: 2/3 passed -> 3/3") {
		t.Errorf("the other way is an improvement: %+v", back)
	}
	if FormatDiff(Diff(before, before)) != "no change in pass rates\n" {
		t.Error("no change")
	}
	fewer := &Results{Summary: Summarize(sampleRows("m")[:6], models, 3)} // no task c
	if text := FormatDiff(Diff(before, fewer)); !strings.Contains(text, "m · c: task not in the second results") {
		t.Errorf("a task gone:\n%s", text)
	}
	other := &Results{Summary: Summarize(sampleRows("n"), []Model{{Name: "n"}}, 3)}
	if text := FormatDiff(Diff(before, other)); !strings.Contains(text, "n: new model") || !strings.Contains(text, "m: model not in the second results") {
		t.Errorf("models in one file only:\n%s", text)
	}
}

func TestSummaryHTML(t *testing.T) {
	rows := sampleRows("m")
	rows[0].Report = "runs/m/a/1/record/x/report.html"
	rows[6].Reason = "reached the step limit (10) <script>"
	res := &Results{Suite: "s", Models: []string{"m"}, Tasks: []string{"a", "b", "c"}, Repeat: 3, Parallel: 2, Runs: rows,
		Summary: Summarize(rows, []Model{{Name: "m"}}, 3)}
	var b bytes.Buffer
	if err := WriteHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<a href="runs/m/a/1/record/x/report.html">report</a>`, `<td>a</td><td class="pass">3/3</td>`,
		`<td>b</td><td class="fail">1/3</td>`, `<td>c</td><td class="setup">0/1 · 1 setup errors</td>`, "57% (4/7)", "&lt;script&gt;"} {
		if !strings.Contains(html, want) {
			t.Errorf("summary.html lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>") {
		t.Error("a reason is not escaped")
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
