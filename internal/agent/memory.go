package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/llm"
)

// Memory budgets in characters of text, when Options leave them zero.
const (
	defaultRecentBudgetChars  = 1500
	defaultSummaryBudgetChars = 2000
	maxFacts                  = 40
	maxFactChars              = 300
	maxFactsTotalChars        = 2000
)

// memorySystemPrompt asks the memory model for a condensed record of steps.
const memorySystemPrompt = `You condense the step log of a GUI automation agent into a short memory.
Answer with JSON only: {"summary": "..."}.
Keep what was done, what worked, what failed and the current state of the task; drop repetition.
The agent reads the summary to plan its next steps, so keep it actionable and under %d characters.`

// memory is the layered run memory: facts the model reported, a summary of old
// steps, the recent steps in full, and the current step's outcome. The recent
// layer is summarized into the summary layer when it outgrows its budget, by
// the memory model when there is one and by truncation otherwise.
type memory struct {
	model         llm.TextModel
	recentBudget  int
	summaryBudget int

	facts   []string
	summary string
	recent  []string // one line per finished step, oldest first
	current string   // the last step's line, not yet in recent

	usage    llm.Usage
	warnings []string
}

func newMemory(model llm.TextModel, recentBudget, summaryBudget int) *memory {
	if recentBudget <= 0 {
		recentBudget = defaultRecentBudgetChars
	}
	if summaryBudget <= 0 {
		summaryBudget = defaultSummaryBudgetChars
	}
	return &memory{model: model, recentBudget: recentBudget, summaryBudget: summaryBudget}
}

// addFacts appends new facts, skipping blanks and duplicates; the oldest facts
// are dropped past maxFacts or maxFactsTotalChars so the prompt stays bounded.
func (m *memory) addFacts(facts []string) {
	for _, f := range facts {
		// Shorten first: facts are stored shortened, so a long fact reported
		// again must be compared in that form to be seen as a duplicate.
		f = shorten(strings.TrimSpace(f), maxFactChars)
		if f == "" || slices.Contains(m.facts, f) {
			continue
		}
		m.facts = append(m.facts, f)
	}
	total, keep := 0, 0
	for i := len(m.facts) - 1; i >= 0 && keep < maxFacts; i-- {
		if total += len(m.facts[i]); total > maxFactsTotalChars {
			break
		}
		keep++
	}
	if keep < len(m.facts) {
		m.facts = slices.Clone(m.facts[len(m.facts)-keep:])
	}
}

// finishStep records the line describing a finished step. The previous current
// line moves to the recent layer, which is compacted when over budget.
func (m *memory) finishStep(ctx context.Context, line string) {
	if m.current != "" {
		m.recent = append(m.recent, m.current)
	}
	m.current = line
	m.compact(ctx)
}

func (m *memory) recentChars() int {
	n := 0
	for _, l := range m.recent {
		n += len(l) + 1
	}
	return n
}

// compact runs when the recent layer is over budget: its older half is
// summarized (by the memory model, or by shortening each line) and appended to
// the summary layer, which is itself condensed when over its budget.
func (m *memory) compact(ctx context.Context) {
	if m.recentChars() <= m.recentBudget || len(m.recent) == 0 {
		return
	}
	cut := max(1, len(m.recent)/2)
	old := strings.Join(m.recent[:cut], "\n")
	m.recent = slices.Clone(m.recent[cut:])
	piece := m.condense(ctx, old, m.recentBudget/2)
	if m.summary != "" {
		piece = m.summary + "\n" + piece
	}
	m.summary = piece
	if len(m.summary) > m.summaryBudget {
		m.summary = m.condense(ctx, m.summary, m.summaryBudget)
	}
}

// condense shortens text to about budget characters with the memory model, or
// without one (or when it fails) by shortening each line and keeping the newest.
func (m *memory) condense(ctx context.Context, text string, budget int) string {
	if m.model != nil {
		out, u, err := m.model.Complete(ctx, fmt.Sprintf(memorySystemPrompt, budget),
			"Condense these step records:\n"+text)
		m.usage = m.usage.Add(u)
		if err == nil {
			if s := parseSummary(out); s != "" {
				return truncateHead(s, budget)
			}
			err = fmt.Errorf("its answer has no summary")
		}
		if ctx.Err() == nil {
			m.warnings = append(m.warnings, "memory model failed, older steps were shortened instead: "+err.Error())
		}
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = shorten(l, 100)
	}
	return truncateHead(strings.Join(lines, "\n"), budget)
}

// shorten cuts s to at most n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// parseSummary reads {"summary": "..."} from a model answer, tolerating prose
// and code fences around it; a plain-text answer is taken as the summary.
func parseSummary(out string) string {
	out = strings.TrimSpace(out)
	if i, j := strings.Index(out, "{"), strings.LastIndex(out, "}"); i >= 0 && j > i {
		var v struct {
			Summary string `json:"summary"`
		}
		if json.Unmarshal([]byte(out[i:j+1]), &v) == nil && strings.TrimSpace(v.Summary) != "" {
			return strings.TrimSpace(v.Summary)
		}
	}
	if strings.HasPrefix(out, "{") {
		return ""
	}
	return out
}

// truncateHead keeps the last n bytes of s (on a line or rune boundary), marking the cut.
func truncateHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "… "
	cut := len(s) - (n - len(mark))
	for cut < len(s) && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
		cut++
	}
	if i := strings.IndexByte(s[cut:], '\n'); i >= 0 && i < (n/4) {
		cut += i + 1
	}
	return mark + s[cut:]
}

// text returns the memory layer shown to the model: facts and the summary of old steps.
func (m *memory) text() string {
	var b strings.Builder
	if len(m.facts) > 0 {
		b.WriteString("Facts gathered so far:\n")
		for _, f := range m.facts {
			b.WriteString("- ")
			b.WriteString(f)
			b.WriteByte('\n')
		}
	}
	if m.summary != "" {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("Summary of earlier steps:\n")
		b.WriteString(m.summary)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// history returns the recent steps and the current one, oldest first.
func (m *memory) history() string {
	var b strings.Builder
	if len(m.recent) > 0 {
		b.WriteString("Recent steps:\n")
		for _, l := range m.recent {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	if m.current != "" {
		b.WriteString("Last step:\n")
		b.WriteString(m.current)
	}
	return strings.TrimRight(b.String(), "\n")
}
