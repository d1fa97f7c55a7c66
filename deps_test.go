package guiagent_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules holds the import direction of ARCHITECTURE.md: geom is pure,
// the MCP SDK stays in mcpserver (and the e2e tests), and only cmd and platform
// import concrete backends; only cmd imports concrete model providers outside
// tests.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/guiagent/guiagent/"
	rules := []struct {
		imported string
		allowed  func(pkg string) bool
	}{
		{"github.com/modelcontextprotocol/go-sdk", func(p string) bool { return strings.HasPrefix(p, mod+"internal/mcpserver") }},
		{mod + "internal/backend/", func(p string) bool {
			return strings.HasPrefix(p, mod+"cmd/") || strings.HasPrefix(p, mod+"internal/platform") || strings.HasPrefix(p, mod+"internal/backend/")
		}},
		{mod + "internal/llm/openai", func(p string) bool { return strings.HasPrefix(p, mod+"cmd/") }},
		{mod + "internal/llm/anthropic", func(p string) bool { return strings.HasPrefix(p, mod+"cmd/") }},
		{mod + "internal/llm/responses", func(p string) bool { return strings.HasPrefix(p, mod+"cmd/") }},
		{mod + "internal/mcpserver", func(p string) bool {
			return strings.HasPrefix(p, mod+"cmd/") || strings.HasPrefix(p, mod+"internal/web")
		}},
		{mod + "internal/agent", func(p string) bool {
			for _, ok := range []string{"cmd/", "internal/mcpserver", "internal/web", "internal/trace", "internal/agent"} {
				if strings.HasPrefix(p, mod+ok) {
					return true
				}
			}
			return false
		}},
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		for _, imp := range imports {
			if pkg == mod+"internal/geom" && strings.Contains(imp, ".") {
				t.Errorf("internal/geom must import only the standard library, imports %s", imp)
			}
			for _, r := range rules {
				if strings.HasPrefix(imp, r.imported) && !strings.HasPrefix(pkg, r.imported) && !r.allowed(pkg) {
					t.Errorf("%s imports %s, which the layout forbids (see ARCHITECTURE.md)", pkg, imp)
				}
			}
		}
	}
}
