package llm

import (
	"fmt"
	"strings"
)

// RegistryMarkdown is the README's model tables, written from the registry:
// each provider's rules (model id to adapter) and each adapter's wire and
// tool rules. A test holds the README to it.
func RegistryMarkdown() string {
	var b strings.Builder
	b.WriteString("| provider | model ids (first match wins) -> adapter | example |\n| --- | --- | --- |\n")
	for _, p := range Providers() {
		var rules []string
		for _, r := range p.Rules {
			rules = append(rules, fmt.Sprintf("%s -> %s", patterns(r.Match), r.Adapter))
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` |\n", p.Name, strings.Join(rules, "; "), p.Example)
	}
	b.WriteString("\n| adapter | speaks | tool by model id |\n| --- | --- | --- |\n")
	for _, a := range Adapters() {
		var tools []string
		for _, r := range a.Rules {
			s := fmt.Sprintf("%s -> `%s`", patterns(r.Match), r.ToolVersion)
			if r.Profile != "" {
				s += " (profile " + r.Profile + ")"
			}
			if r.NoVision {
				s += " (no vision tools)"
			}
			tools = append(tools, s)
		}
		t := strings.Join(tools, "; ")
		if t == "" {
			t = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", a.Name, strings.ReplaceAll(a.Doc, "|", "\\|"), t)
	}
	return b.String()
}

func patterns(ms []string) string {
	q := make([]string, len(ms))
	for i, m := range ms {
		q[i] = "`" + m + "`"
	}
	return strings.Join(q, ", ")
}
