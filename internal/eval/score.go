package eval

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ModelSummary scores one model over its runs.
type ModelSummary struct {
	Model string `json:"model"`
	Runs  int    `json:"runs"`
	// Scored are the runs that count: setup errors and cancelled runs are
	// not the model's doing and are left out of every rate.
	Scored      int     `json:"scored"`
	Passed      int     `json:"passed"`
	SetupErrors int     `json:"setup_errors"`
	Cancelled   int     `json:"cancelled"`
	PassRate    float64 `json:"pass_rate"`
	// K is the repeats per task; PassAtK is the share of tasks passed at
	// least once in them, PassHatK (pass^k) the share passed every time.
	K        int     `json:"k"`
	PassAtK  float64 `json:"pass_at_k"`
	PassHatK float64 `json:"pass_hat_k"`
	// Medians over the scored runs.
	MedianSteps       float64 `json:"median_steps"`
	MedianModelCalls  float64 `json:"median_model_calls"`
	MedianTokens      float64 `json:"median_tokens"`
	MedianWallMillis  float64 `json:"median_wall_ms"`
	MedianModelMillis float64 `json:"median_model_ms"`
	// Tasks holds each task's passes and scored runs.
	Tasks map[string]TaskScore `json:"tasks"`
}

// TaskScore is one task's tally for one model.
type TaskScore struct {
	Passed      int `json:"passed"`
	Scored      int `json:"scored"`
	SetupErrors int `json:"setup_errors,omitempty"`
}

// scored reports whether a run counts toward the model's scores.
func scored(r Row) bool { return r.Ending != SetupError && r.Ending != Cancelled }

// Summarize scores each model over rows; k is the repeats per task.
func Summarize(rows []Row, models []Model, k int) []ModelSummary {
	var out []ModelSummary
	for _, m := range models {
		s := ModelSummary{Model: m.Name, K: k, Tasks: map[string]TaskScore{}}
		var steps, calls, tokens, wall, model []float64
		for _, r := range rows {
			if r.Model != m.Name {
				continue
			}
			s.Runs++
			ts := s.Tasks[r.Task]
			switch {
			case r.Ending == SetupError:
				s.SetupErrors++
				ts.SetupErrors++
			case r.Ending == Cancelled:
				s.Cancelled++
			}
			if scored(r) {
				s.Scored++
				ts.Scored++
				if r.Pass {
					s.Passed++
					ts.Passed++
				}
				steps = append(steps, float64(r.Steps))
				calls = append(calls, float64(r.ModelCalls))
				tokens = append(tokens, float64(r.InputTokens+r.OutputTokens))
				wall = append(wall, float64(r.WallMillis))
				model = append(model, float64(r.ModelMillis))
			}
			s.Tasks[r.Task] = ts
		}
		if s.Scored > 0 {
			s.PassRate = float64(s.Passed) / float64(s.Scored)
		}
		s.PassAtK, s.PassHatK = passK(s.Tasks)
		s.MedianSteps, s.MedianModelCalls, s.MedianTokens = median(steps), median(calls), median(tokens)
		s.MedianWallMillis, s.MedianModelMillis = median(wall), median(model)
		out = append(out, s)
	}
	return out
}

// passK is pass@k and pass^k over the tasks with scored runs.
func passK(tasks map[string]TaskScore) (at, hat float64) {
	n := 0
	for _, t := range tasks {
		if t.Scored == 0 {
			continue
		}
		n++
		if t.Passed > 0 {
			at++
		}
		if t.Passed == t.Scored {
			hat++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return at / float64(n), hat / float64(n)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Summary finds the model's summary.
func (res *Results) summary(model string) (ModelSummary, bool) {
	for _, s := range res.Summary {
		if s.Model == model {
			return s, true
		}
	}
	return ModelSummary{}, false
}

// PassRate is the pass rate over every model's scored runs.
func (res *Results) PassRate() float64 {
	passed, n := 0, 0
	for _, s := range res.Summary {
		passed += s.Passed
		n += s.Scored
	}
	if n == 0 {
		return 0
	}
	return float64(passed) / float64(n)
}

// Change is one difference between two results files.
type Change struct {
	Model string `json:"model"`
	// Task is "" for a change of the model's pass rate.
	Task string `json:"task,omitempty"`
	// Regressed is set when B is worse than A.
	Regressed bool   `json:"regressed"`
	What      string `json:"what"`
}

// Diff compares results a (before) with b (after): per model present in
// both, the pass rate, and per task the share of passed runs; a model or
// task only in one is said so. Regressions come first.
func Diff(a, b *Results) []Change {
	var out []Change
	for _, sb := range b.Summary {
		sa, ok := a.summary(sb.Model)
		if !ok {
			out = append(out, Change{Model: sb.Model, What: fmt.Sprintf("new model: pass rate %s", pct(sb.PassRate))})
			continue
		}
		if sa.PassRate != sb.PassRate {
			out = append(out, Change{Model: sb.Model, Regressed: sb.PassRate < sa.PassRate,
				What: fmt.Sprintf("pass rate %s -> %s", pct(sa.PassRate), pct(sb.PassRate))})
		}
		out = append(out, diffTasks(sb.Model, sa, sb)...)
	}
	for _, sa := range a.Summary {
		if _, ok := b.summary(sa.Model); !ok {
			out = append(out, Change{Model: sa.Model, What: "model not in the second results"})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Regressed && !out[j].Regressed })
	return out
}

func diffTasks(model string, sa, sb ModelSummary) []Change {
	var out []Change
	names := make([]string, 0, len(sb.Tasks))
	for t := range sb.Tasks {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		tb := sb.Tasks[t]
		ta, ok := sa.Tasks[t]
		switch {
		case !ok:
			out = append(out, Change{Model: model, Task: t, What: fmt.Sprintf("new task: %d/%d passed", tb.Passed, tb.Scored)})
		case ta.Scored > 0 && tb.Scored > 0 && share(tb) != share(ta):
			out = append(out, Change{Model: model, Task: t, Regressed: share(tb) < share(ta),
				What: fmt.Sprintf("%d/%d passed -> %d/%d", ta.Passed, ta.Scored, tb.Passed, tb.Scored)})
		case tb.SetupErrors > ta.SetupErrors:
			out = append(out, Change{Model: model, Task: t, Regressed: true,
				What: fmt.Sprintf("setup errors %d -> %d (not the model's doing: check the task's setup)", ta.SetupErrors, tb.SetupErrors)})
		}
	}
	gone := []string{}
	for t := range sa.Tasks {
		if _, ok := sb.Tasks[t]; !ok {
			gone = append(gone, t)
		}
	}
	sort.Strings(gone)
	for _, t := range gone {
		out = append(out, Change{Model: model, Task: t, What: "task not in the second results"})
	}
	return out
}

func share(t TaskScore) float64 { return float64(t.Passed) / float64(t.Scored) }

func pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

// FormatDiff writes changes as lines for the terminal.
func FormatDiff(changes []Change) string {
	if len(changes) == 0 {
		return "no change in pass rates\n"
	}
	var b strings.Builder
	for _, c := range changes {
		tag := "changed  "
		if c.Regressed {
			tag = "REGRESSED"
		} else if strings.Contains(c.What, "->") {
			tag = "improved "
		}
		where := c.Model
		if c.Task != "" {
			where += " · " + c.Task
		}
		fmt.Fprintf(&b, "%s %s: %s\n", tag, where, c.What)
	}
	return b.String()
}
