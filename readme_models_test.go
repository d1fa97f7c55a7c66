package guiagent_test

import (
	"os"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/llm"
)

// TestREADMEModelTablesAreTheRegistry: docs/models.md's provider and adapter
// tables are what the registry holds (llm.RegistryMarkdown), between the
// registry markers.
func TestREADMEModelTablesAreTheRegistry(t *testing.T) {
	b, err := os.ReadFile("docs/models.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- registry:begin -->\n", "<!-- registry:end -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("docs/models.md has no %q ... %q section", begin, end)
	}
	if got, want := s[i+len(begin):j], llm.RegistryMarkdown(); got != want {
		t.Fatalf("docs/models.md's model tables differ from the registry; replace them with:\n%s", want)
	}
}
