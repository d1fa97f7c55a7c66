package ocr

import (
	"errors"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

// word is a word at x on a line at y, 10 pixels tall, 8 pixels a letter.
func word(text string, x, y int, conf float64) Word {
	return Word{Text: text, Box: geom.ImageRect{X: x, Y: y, W: 8 * len(text), H: 10}, Conf: conf}
}

// page builds a page of lines, each given as words separated by spaces,
// one line every 20 pixels.
func page(lines ...string) Page {
	var p Page
	for i, l := range lines {
		var ws []Word
		x := 10
		for _, t := range strings.Fields(l) {
			ws = append(ws, word(t, x, 10+20*i, 90))
			x += 8*len(t) + 6
		}
		p.Lines = append(p.Lines, NewLine(ws))
	}
	return p
}

func texts(ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

func TestFindModes(t *testing.T) {
	p := page("Name: Ada Lovelace", "Save as... Cancel", "Item 1 Item 2 Item 12", "ada@example.org Submit")
	cases := []struct {
		q    Query
		want []string
	}{
		{Query{Text: "Name"}, []string{"Name:"}},                // punctuation at the run's ends is ignored
		{Query{Text: "ada lovelace"}, []string{"Ada Lovelace"}}, // case and spacing are ignored
		{Query{Text: "Lovelace Save"}, nil},                     // a match stays on one line
		{Query{Text: "Love"}, nil},                              // exact: whole words only
		{Query{Text: "Love", Match: Contains}, []string{"Lovelace"}},
		{Query{Text: "Save as"}, []string{"Save as..."}},
		{Query{Text: "Item 1"}, []string{"Item 1"}}, // not "Item 12"
		{Query{Text: "item 1", Match: Contains}, []string{"Item 1", "Item 12"}},
		{Query{Text: "ada", CaseSensitive: true}, nil},
		{Query{Text: "@example", Match: Contains}, []string{"ada@example.org"}},
		{Query{Text: `Item \d+`, Match: Regex}, []string{"Item 1", "Item 2", "Item 12"}},
		{Query{Text: `(?i)^save`, Match: Regex}, []string{"Save"}},
		{Query{Text: `e\.org S`, Match: Regex}, []string{"e.org S"}}, // the part matched, across two words
	}
	for _, c := range cases {
		ms, err := Find(p, c.q)
		if err != nil {
			t.Errorf("%+v: %v", c.q, err)
			continue
		}
		if got := texts(ms); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Find %+v = %q, want %q", c.q, got, c.want)
		}
	}
}

func TestFindBoxesAndConfidence(t *testing.T) {
	p := page("Name: Ada Lovelace")
	p.Lines[0].Words[2].Conf = 40
	ms, err := Find(p, Query{Text: "Ada Lovelace"})
	if err != nil || len(ms) != 1 {
		t.Fatalf("Find = %v, %v", ms, err)
	}
	m := ms[0]
	ada, love := p.Lines[0].Words[1].Box, p.Lines[0].Words[2].Box
	if m.Box != ada.Union(love) || len(m.Words) != 2 || m.Conf != 40 || m.Line != 0 {
		t.Errorf("match %+v: want the box %v over both words, 2 words, the lower confidence 40", m, ada.Union(love))
	}
	// A regex match inside one word covers that word.
	ms, _ = Find(p, Query{Text: "ove", Match: Regex})
	if len(ms) != 1 || ms[0].Box != love || ms[0].Text != "ove" {
		t.Errorf("regex inside a word: %+v, want the word's box %v and the text matched", ms, love)
	}
}

func TestFindRegion(t *testing.T) {
	p := page("OK Cancel", "OK")
	all, _ := Find(p, Query{Text: "OK"})
	if len(all) != 2 {
		t.Fatalf("two OKs: %v", all)
	}
	second := p.Lines[1].Box
	ms, _ := Find(p, Query{Text: "OK", Region: geom.ImageRect{X: 0, Y: second.Y - 2, W: 200, H: 20}})
	if len(ms) != 1 || ms[0].Line != 1 {
		t.Errorf("region around line 2: %+v, want only its OK", ms)
	}
}

func TestBadQueriesSayWhatToDo(t *testing.T) {
	for _, c := range []struct {
		q    Query
		want string
	}{
		{Query{Text: "  "}, "empty"},
		{Query{Text: "(unclosed", Match: Regex}, "does not compile"},
		{Query{Text: "x", Match: "fuzzy"}, "exact, contains or regex"},
	} {
		_, err := Find(page("x"), c.q)
		if !errors.Is(err, ErrQuery) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrQuery saying %q", c.q, err, c.want)
		}
	}
}

func TestResolveRegion(t *testing.T) {
	size := geom.Size{W: 100, H: 50}
	if r, err := ResolveRegion(size, geom.ImageRect{}); err != nil || r != (geom.ImageRect{W: 100, H: 50}) {
		t.Errorf("zero region = %v, %v; want the whole image", r, err)
	}
	if r, err := ResolveRegion(size, geom.ImageRect{X: 10, Y: 10, W: 90, H: 40}); err != nil || r.W != 90 {
		t.Errorf("inside = %v, %v", r, err)
	}
	for _, r := range []geom.ImageRect{{X: 10, Y: 10, W: 91, H: 5}, {X: -1, Y: 0, W: 5, H: 5}, {X: 0, Y: 0, W: 0, H: 5}, {X: 200, Y: 200, W: 5, H: 5}} {
		_, err := ResolveRegion(size, r)
		if !errors.Is(err, ErrRegion) || !strings.Contains(err.Error(), "100x50") && !strings.Contains(err.Error(), "no area") {
			t.Errorf("region %v: %v, want ErrRegion naming the image size", r, err)
		}
	}
}

func TestSortLinesReadingOrder(t *testing.T) {
	mk := func(text string, x, y, h int) Line {
		return NewLine([]Word{{Text: text, Box: geom.ImageRect{X: x, Y: y, W: 30, H: h}, Conf: 90}})
	}
	lines := []Line{mk("C", 10, 60, 10), mk("B", 200, 12, 10), mk("A", 10, 10, 14), mk("D", 200, 58, 12)}
	SortLines(lines)
	var got []string
	for _, l := range lines {
		got = append(got, l.Text)
	}
	if strings.Join(got, "") != "ABCD" {
		t.Errorf("order %v, want A B (one row, left to right), then C D", got)
	}
	if p := (Page{Lines: lines}); p.Text() != "A\nB\nC\nD" {
		t.Errorf("Text() = %q", p.Text())
	}
}

func TestNewLine(t *testing.T) {
	l := NewLine([]Word{word("world", 60, 0, 80), word(" ", 40, 0, 10), word("hello", 0, 0, 90)})
	if l.Text != "hello world" || len(l.Words) != 2 || l.Conf != 85 || l.Box != (geom.ImageRect{X: 0, Y: 0, W: 100, H: 10}) {
		t.Errorf("NewLine = %+v", l)
	}
	if l := NewLine(nil); len(l.Words) != 0 || l.Text != "" {
		t.Errorf("NewLine(nil) = %+v", l)
	}
}
