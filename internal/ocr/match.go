package ocr

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/guiagent/guiagent/internal/geom"
)

// Mode is how a query's text is compared with what was read.
type Mode string

// The match modes.
const (
	// Exact: a run of whole words of one line reads as the text, ignoring
	// case, spacing and punctuation at the run's ends ("Name" finds "Name:").
	Exact Mode = "exact"
	// Contains: the text occurs in one line, ignoring case and spacing.
	Contains Mode = "contains"
	// Regex: a Go regular expression (RE2 syntax) matches in one line's text
	// (words joined by single spaces, case as read: add (?i) to ignore case).
	Regex Mode = "regex"
)

// Modes lists the accepted modes.
var Modes = []Mode{Exact, Contains, Regex}

// ErrQuery is wrapped by every error of a query that cannot run.
var ErrQuery = errors.New("invalid text query")

// Query is what to look for on a page.
type Query struct {
	// Text is the text to find; for Regex, the expression.
	Text string `json:"text"`
	// Match is the mode; "" means Exact.
	Match Mode `json:"match,omitempty"`
	// Region, when set, keeps only matches whose box lies inside it (pixels of
	// the image read). Reader.Find also reads only that part of the image.
	Region geom.ImageRect `json:"region,omitzero"`
	// CaseSensitive compares letters' case too (Exact and Contains).
	CaseSensitive bool `json:"case_sensitive,omitempty"`
}

// Match is one place the query's text was found.
type Match struct {
	// Text is what was read there: the matched words (Exact, Contains) or the
	// matched part of the line (Regex).
	Text string `json:"text"`
	// Box is the union of the matched words' boxes.
	Box   geom.ImageRect `json:"box"`
	Words []Word         `json:"words"`
	// Conf is the lowest confidence of the matched words, 0-100.
	Conf float64 `json:"conf"`
	// Line is the index of the match's line in the page's Lines.
	Line int `json:"line"`
}

// compiled is a validated query ready to run.
type compiled struct {
	q      Query
	re     *regexp.Regexp
	needle []rune // Exact, Contains: the normalized text
}

// Validate reports the first problem of q: empty text, an unknown mode, a
// regular expression that does not compile.
func (q Query) Validate() error {
	_, err := q.compile()
	return err
}

func (q Query) compile() (compiled, error) {
	c := compiled{q: q}
	if c.q.Match == "" {
		c.q.Match = Exact
	}
	if strings.TrimSpace(q.Text) == "" {
		return c, fmt.Errorf("%w: the text to find is empty: give the words as they appear on the screen", ErrQuery)
	}
	switch c.q.Match {
	case Exact, Contains:
		c.needle = normalize(q.Text, q.CaseSensitive)
		if len(c.needle) == 0 {
			return c, fmt.Errorf("%w: the text to find %q has only spaces", ErrQuery, q.Text)
		}
	case Regex:
		re, err := regexp.Compile(q.Text)
		if err != nil {
			return c, fmt.Errorf("%w: the regular expression %q does not compile (%v): use Go RE2 syntax, e.g. (?i)item \\d+, or match: contains for plain text", ErrQuery, q.Text, err)
		}
		c.re = re
	default:
		return c, fmt.Errorf("%w: match %q is not a mode: use exact, contains or regex", ErrQuery, q.Match)
	}
	return c, nil
}

// Find returns every place q's text is on page p, in reading order (p's line
// order, then left to right). An invalid query is an error wrapping ErrQuery.
func Find(p Page, q Query) ([]Match, error) {
	c, err := q.compile()
	if err != nil {
		return nil, err
	}
	var out []Match
	for i, l := range p.Lines {
		var ms []Match
		if c.re != nil {
			ms = matchRegex(l, c.re)
		} else {
			ms = matchWords(l, c.needle, c.q.Match == Exact, q.CaseSensitive)
		}
		for _, m := range ms {
			if q.Region != (geom.ImageRect{}) && !m.Box.In(q.Region) {
				continue
			}
			m.Line = i
			out = append(out, m)
		}
	}
	return out, nil
}

// normalize folds s for comparison: spaces removed, case folded unless
// caseSensitive.
func normalize(s string, caseSensitive bool) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if unicode.IsSpace(r) {
			continue
		}
		if !caseSensitive {
			r = unicode.ToLower(r)
		}
		out = append(out, r)
	}
	return out
}

// span is the place of one word in a line's normalized text: [start, end),
// and core, the part without punctuation at the word's ends.
type span struct{ start, end, coreStart, coreEnd int }

// lineRunes is l's words normalized and concatenated, with each word's span.
func lineRunes(l Line, caseSensitive bool) ([]rune, []span) {
	var rs []rune
	spans := make([]span, len(l.Words))
	for i, w := range l.Words {
		n := normalize(w.Text, caseSensitive)
		s := span{start: len(rs), end: len(rs) + len(n)}
		cs, ce := 0, len(n)
		for cs < ce && isEdgePunct(n[cs]) {
			cs++
		}
		for ce > cs && isEdgePunct(n[ce-1]) {
			ce--
		}
		s.coreStart, s.coreEnd = s.start+cs, s.start+ce
		spans[i] = s
		rs = append(rs, n...)
	}
	return rs, spans
}

// isEdgePunct is punctuation an exact match ignores at a run's ends.
func isEdgePunct(r rune) bool {
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// matchWords finds needle in l's normalized text: anywhere (contains), or
// from the start of a word to the end of a word, punctuation at either end
// aside (exact). Occurrences do not overlap.
func matchWords(l Line, needle []rune, exact, caseSensitive bool) []Match {
	rs, spans := lineRunes(l, caseSensitive)
	var out []Match
	for at := 0; at+len(needle) <= len(rs); {
		if !runesEqual(rs[at:at+len(needle)], needle) {
			at++
			continue
		}
		end := at + len(needle)
		first, last := wordAt(spans, at), wordAt(spans, end-1)
		if exact && !(startsWord(spans[first], at) && endsWord(spans[last], end)) {
			at++
			continue
		}
		out = append(out, matchOf(l.Words[first:last+1]))
		at = end
	}
	return out
}

func startsWord(s span, at int) bool { return at == s.start || at == s.coreStart }
func endsWord(s span, end int) bool  { return end == s.end || end == s.coreEnd }

// wordAt is the index of the word holding rune position i.
func wordAt(spans []span, i int) int {
	for k, s := range spans {
		if i < s.end {
			return k
		}
	}
	return len(spans) - 1
}

func runesEqual(a, b []rune) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// matchRegex runs re on l's text (words joined by single spaces); each match
// covers the words it touches. An empty match is not a match.
func matchRegex(l Line, re *regexp.Regexp) []Match {
	starts := make([]int, len(l.Words)) // byte offset of each word in text
	texts := make([]string, len(l.Words))
	at := 0
	for i, w := range l.Words {
		starts[i], texts[i] = at, w.Text
		at += len(w.Text) + 1
	}
	text := strings.Join(texts, " ")
	var out []Match
	for _, loc := range re.FindAllStringIndex(text, -1) {
		if loc[1] <= loc[0] {
			continue
		}
		var ws []Word
		for i, w := range l.Words {
			if starts[i] < loc[1] && starts[i]+len(w.Text) > loc[0] {
				ws = append(ws, w)
			}
		}
		if len(ws) == 0 { // the match is only the space between two words
			continue
		}
		m := matchOf(ws)
		m.Text = text[loc[0]:loc[1]]
		out = append(out, m)
	}
	return out
}

// matchOf is the match of words ws (one line's, left to right).
func matchOf(ws []Word) Match {
	m := Match{Words: append([]Word(nil), ws...), Conf: 100}
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.Text
		m.Box = m.Box.Union(w.Box)
		m.Conf = min(m.Conf, w.Conf)
	}
	m.Text = strings.Join(texts, " ")
	return m
}
