package guiagent_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// markdownLink finds [text](target) links; images too.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug is GitHub's anchor of a heading: lower case, punctuation other than
// '-' and '_' removed, spaces to '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the heading anchors of a Markdown file, outside code blocks.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		s := slug(h)
		for i := 1; out[s]; i++ { // GitHub numbers repeated headings
			s = slug(h) + "-" + string(rune('0'+i))
		}
		out[s] = true
	}
	return out
}

// TestDocumentationLinks: every relative link between README.md,
// ARCHITECTURE.md and the pages of docs/ reaches a file that exists and,
// when it names one, a heading of that file; every page of docs/ is linked
// from the README.
func TestDocumentationLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	files := append([]string{"README.md", "ARCHITECTURE.md"}, pages...)
	texts := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	for _, f := range files {
		for _, m := range markdownLink.FindAllStringSubmatch(texts[f], -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f), path)))
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s links to %s, which does not exist", f, target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			text, ok := texts[file]
			if !ok {
				b, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				text = string(b)
			}
			if !anchors(text)[anchor] {
				t.Errorf("%s links to %s, but %s has no heading with the anchor #%s", f, target, file, anchor)
			}
		}
	}
	for _, p := range pages {
		if !strings.Contains(texts["README.md"], "("+filepath.ToSlash(p)+")") {
			t.Errorf("README.md does not link to %s", p)
		}
	}
}

// TestREADMEIsAFrontDoor: the README stays short; the reference lives in docs/.
func TestREADMEIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n >= 300 {
		t.Errorf("README.md has %d lines: keep it under 300 and move reference material into docs/", n)
	}
}
