package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

type fakeText struct {
	calls   int
	prompts []string
	fail    bool
}

func (f *fakeText) Complete(_ context.Context, system, prompt string) (string, llm.Usage, error) {
	f.calls++
	f.prompts = append(f.prompts, prompt)
	if f.fail {
		return "", llm.Usage{Calls: 1}, errors.New("HTTP 500 from memory model")
	}
	n := strings.Count(prompt, "Step ")
	return fmt.Sprintf("```json\n{\"summary\": \"condensed %d steps\"}\n```", n), llm.Usage{Calls: 1, InputTokens: len(prompt) / 4, OutputTokens: 10}, nil
}

func longLine(i int) string {
	return fmt.Sprintf("Step %d: click at (%d,200); type \"some text for field %d\" -> 2/2 actions executed. Expected: the field shows the text", i, i*7, i)
}

func TestMemoryFactsAccumulate(t *testing.T) {
	m := newMemory(nil, 0, 0)
	m.addFacts([]string{"price is 42 EUR", " ", "price is 42 EUR"})
	m.addFacts([]string{"order id A-17"})
	if len(m.facts) != 2 || !strings.Contains(m.text(), "- price is 42 EUR\n- order id A-17") {
		t.Fatalf("facts %v text %q", m.facts, m.text())
	}
	// A fact longer than maxFactChars, reported on every step, is kept once.
	long := "the confirmation page lists " + strings.Repeat("item, ", 60)
	m.addFacts([]string{long})
	m.addFacts([]string{long, "order id A-17"})
	if len(m.facts) != 3 || len(m.facts[2]) > maxFactChars {
		t.Fatalf("a long fact reported twice is kept %d times: %q", len(m.facts)-2, m.facts[2:])
	}
	for i := range 100 {
		m.addFacts([]string{fmt.Sprintf("fact %d", i)})
	}
	if len(m.facts) != maxFacts || m.facts[len(m.facts)-1] != "fact 99" {
		t.Fatalf("facts not bounded to the newest %d: %d", maxFacts, len(m.facts))
	}
}

// With a memory model, old steps are summarized (layered: summary, recent,
// current) and the text stays within its budgets however long the run.
func TestMemorySummarizedByModel(t *testing.T) {
	tm := &fakeText{}
	m := newMemory(tm, 600, 800)
	for i := 1; i <= 200; i++ {
		m.finishStep(context.Background(), longLine(i))
	}
	if tm.calls == 0 {
		t.Fatal("the memory model was never asked to summarize")
	}
	if !strings.Contains(m.text(), "Summary of earlier steps:") || !strings.Contains(m.text(), "condensed") {
		t.Fatalf("summary layer missing: %q", m.text())
	}
	h := m.history()
	if !strings.Contains(h, "Step 200") || !strings.Contains(h, "Last step:\nStep 200") || strings.Contains(h, "Step 1:") {
		t.Fatalf("history should end with the newest step and drop old ones: %q", h)
	}
	if n := len(m.summary) + m.recentChars(); n > 600+800+200 {
		t.Fatalf("memory grew to %d chars", n)
	}
	if m.usage.Calls != tm.calls || m.usage.InputTokens == 0 {
		t.Fatalf("memory model usage not counted: %+v", m.usage)
	}
	if !strings.Contains(tm.prompts[0], "Step 1:") {
		t.Fatalf("the first summary should cover the oldest steps: %q", tm.prompts[0])
	}
}

func TestMemoryTruncatesWithoutModel(t *testing.T) {
	for _, tm := range []*fakeText{nil, {fail: true}} {
		var model llm.TextModel
		if tm != nil {
			model = tm
		}
		m := newMemory(model, 600, 800)
		for i := 1; i <= 200; i++ {
			m.finishStep(context.Background(), longLine(i))
		}
		if n := len(m.summary) + m.recentChars(); n > 600+800+200 {
			t.Fatalf("memory grew to %d chars", n)
		}
		if !strings.Contains(m.summary, "Step 1") && !strings.Contains(m.summary, "…") {
			t.Fatalf("summary not truncated text: %q", m.summary)
		}
		if tm != nil && (len(m.warnings) == 0 || !strings.Contains(m.warnings[0], "HTTP 500")) {
			t.Fatalf("failing memory model not reported: %v", m.warnings)
		}
	}
}

func TestParseSummary(t *testing.T) {
	for in, want := range map[string]string{
		`{"summary":"a"}`:             "a",
		"Here:\n{\"summary\": \"b\"}": "b",
		"plain words":                 "plain words",
		`{"other": 1}`:                "",
	} {
		if got := parseSummary(in); got != want {
			t.Errorf("parseSummary(%q) = %q, want %q", in, got, want)
		}
	}
}

// tokenEstimate counts an observation the way the fake providers do: text
// characters / 4 plus about 800 tokens per image.
func tokenEstimate(obs llm.Observation) int {
	text := obs.Task + obs.Memory + obs.History + obs.Feedback + strings.Join(obs.Warnings, "")
	return len(text)/4 + 800*(1+len(obs.Recent))
}

// runLong runs a scripted task of n steps and returns the estimated input
// tokens of every model call.
func runLong(t testing.TB, n int) []int {
	d := newDesk(&testing.T{})
	d.changeOnInput()
	var tokens []int
	i := 0
	script := newScript(geom.ProfileFor("gpt-4o"), func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
		tokens = append(tokens, tokenEstimate(obs))
		i++
		if i >= n {
			return &llm.Decision{Status: llm.Done, Result: "done"}, nil
		}
		return &llm.Decision{Status: llm.Continue, Observation: "a form with many fields",
			MemoryUpdate:    []string{fmt.Sprintf("field %d holds value-%d", i, i)},
			ExpectedOutcome: fmt.Sprintf("field %d shows the text", i),
			Actions:         raws(click(float64(20+(i*37)%1200), float64(20+(i*53)%700)), action.Raw{Kind: action.TypeText, Text: fmt.Sprintf("value-%d", i)})}, nil
	})
	o := d.opts(script)
	o.MaxSteps = n
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), Task{Task: "fill every field of the long form"}, nil)
	if res.Status != Completed {
		t.Fatalf("long run: %s %s", res.Status, res.Summary)
	}
	return tokens
}

// Input tokens per step stay flat as the run grows: screenshots are pruned to
// K and the text layers are bounded by the memory budgets.
func TestInputTokensStayFlat(t *testing.T) {
	tokens := runLong(t, 80)
	if len(tokens) != 80 {
		t.Fatalf("%d calls", len(tokens))
	}
	t.Logf("estimated input tokens: step 1 %d, step 3 %d, step 30 %d, step 60 %d, step 80 %d",
		tokens[0], tokens[2], tokens[29], tokens[59], tokens[79])
	// From step 3 on all K=3 images are present; what may still grow is text,
	// bounded by the recent, summary and facts budgets.
	textBound := (defaultRecentBudgetChars + defaultSummaryBudgetChars + maxFactsTotalChars) / 4
	for i := 2; i < len(tokens); i++ {
		if tokens[i] > tokens[2]+textBound {
			t.Fatalf("step %d: %d input tokens, more than step 3 (%d) plus the text budgets (%d)", i+1, tokens[i], tokens[2], textBound)
		}
	}
	if late := tokens[79] - tokens[49]; late > 200 || late < -200 {
		t.Fatalf("input tokens still drift late in the run: step 50 %d, step 80 %d", tokens[49], tokens[79])
	}
}
