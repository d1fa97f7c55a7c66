package ocr

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/geom"
)

// Target is a described element whose words can be looked for on the screen:
// a quoted string (`the "Save as" button`) or a short label (`Submit`,
// `Item 3`, `the second OK button`).
type Target struct {
	// Text is the words to find.
	Text string `json:"text"`
	// Match is Exact for described targets.
	Match Mode `json:"match"`
	// Nth picks one of several matches in reading order: 1 the first, 2 the
	// second, -1 the last; 0 means the target must be the only match.
	Nth int `json:"nth,omitempty"`
	// Role is the kind of element the description named ("button", "link"),
	// "" when none; it does not take part in the match.
	Role string `json:"role,omitempty"`
	// Quoted is set when Text came from quotes.
	Quoted bool `json:"quoted,omitempty"`
	// Region, set by the caller, keeps only matches inside it (image pixels).
	Region geom.ImageRect `json:"region,omitzero"`
}

// Query is the query that finds t's text.
func (t Target) Query() Query { return Query{Text: t.Text, Match: t.Match, Region: t.Region} }

// The longest unquoted label ParseTarget takes, in words and characters.
const (
	maxLabelWords = 3
	maxLabelChars = 40
)

// quotes are the quotation marks ParseTarget recognizes, opening and closing.
var quotes = [][2]rune{{'"', '"'}, {'“', '”'}, {'„', '“'}, {'«', '»'}, {'`', '`'}, {'\'', '\''}, {'‘', '’'}}

// roles are element kinds a description may name after the label, longest first.
var roles = []string{"menu item", "list item", "text field", "check box", "radio button", "button", "link",
	"tab", "label", "field", "checkbox", "option", "entry", "icon", "heading", "title", "row", "item", "menu", "text"}

// labelledRoles are the roles whose element does not show its own name: in
// "the Name field" (or `the "Name" field`) the word Name is the label beside
// the field, so clicking where it is written would miss the field: such
// targets are left to the tree and the vision model.
var labelledRoles = map[string]bool{"field": true, "text field": true, "entry": true}

// ordinals are the words that pick one of several matches.
var ordinals = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
	"seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "last": -1}

// ParseTarget reports whether desc names its element by text, and which:
// the first quoted string in desc, or, unquoted, a label of at most three
// words starting with a capital letter or a digit, once an article, an
// ordinal ("the second", "the 3rd", "the last") and a role word ("button",
// "menu item", ...) are taken off. "the red button" and "the field under
// Email" are not text targets (they are left to the vision model).
func ParseTarget(desc string) (Target, bool) {
	desc = strings.TrimSpace(desc)
	if inner, before, after, ok := quoted(desc); ok {
		t := Target{Text: inner, Match: Exact, Quoted: true}
		t.Nth, _ = takeOrdinal(strings.Fields(before))
		if r := strings.ToLower(strings.Join(strings.Fields(after), " ")); slices.Contains(roles, r) {
			t.Role = r
		}
		if labelledRoles[t.Role] {
			return Target{}, false
		}
		return t, true
	}
	words := strings.Fields(desc)
	nth, words := takeOrdinal(words)
	role, words := takeRole(words)
	if len(words) == 0 || len(words) > maxLabelWords || labelledRoles[role] {
		return Target{}, false
	}
	label := strings.Join(words, " ")
	first, _ := utf8.DecodeRuneInString(label)
	if utf8.RuneCountInString(label) > maxLabelChars || !(unicode.IsUpper(first) || unicode.IsDigit(first)) {
		return Target{}, false
	}
	return Target{Text: label, Match: Exact, Nth: nth, Role: role}, true
}

// quoted finds the first quoted non-empty string of s: its text and what
// comes before and after the quotes. An apostrophe inside a word ("don't")
// does not open a quote.
func quoted(s string) (inner, before, after string, ok bool) {
	best := -1
	for _, q := range quotes {
		for from := 0; from < len(s); {
			i := strings.IndexRune(s[from:], q[0])
			if i < 0 {
				break
			}
			i += from
			if q[0] == '\'' && i > 0 {
				if r, _ := utf8.DecodeLastRuneInString(s[:i]); unicode.IsLetter(r) || unicode.IsDigit(r) {
					from = i + 1
					continue
				}
			}
			open := i + utf8.RuneLen(q[0])
			j := strings.IndexRune(s[open:], q[1])
			if j < 0 {
				break
			}
			if text := strings.TrimSpace(s[open : open+j]); text != "" && (best < 0 || i < best) {
				best, inner, before, after = i, text, s[:i], s[open+j+utf8.RuneLen(q[1]):]
			}
			break
		}
	}
	return inner, before, after, best >= 0
}

// takeOrdinal takes a leading article and ordinal off words: the pick (0
// when none) and the words left.
func takeOrdinal(words []string) (int, []string) {
	if len(words) > 0 && isArticle(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		return 0, words
	}
	w := strings.ToLower(words[0])
	if n, ok := ordinals[w]; ok {
		return n, words[1:]
	}
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if d, ok := strings.CutSuffix(w, suf); ok {
			if n, err := strconv.Atoi(d); err == nil && n > 0 {
				return n, words[1:]
			}
		}
	}
	return 0, words
}

func isArticle(w string) bool {
	return slices.Contains([]string{"the", "a", "an"}, strings.ToLower(w))
}

// takeRole takes a trailing role word (or two, "menu item") off words when
// words remain: a lone "Menu" is a label.
func takeRole(words []string) (string, []string) {
	lower := strings.ToLower(strings.Join(words, " "))
	for _, r := range roles {
		if strings.HasSuffix(lower, " "+r) {
			return r, words[:len(words)-len(strings.Fields(r))]
		}
	}
	return "", words
}

// ErrNotFound is wrapped by Pick's error when nothing matched.
var ErrNotFound = errors.New("text not found")

// ErrAmbiguous is wrapped by AmbiguousError.
var ErrAmbiguous = errors.New("text found in several places")

// AmbiguousError is Pick's error when several places match and the target
// does not say which.
type AmbiguousError struct {
	Target  Target
	Matches []Match
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d places read %q:", len(e.Matches), e.Target.Text)
	for i, m := range e.Matches {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " %s %q at %s", ordinalName(i+1), m.Text, m.Box)
	}
	fmt.Fprintf(&b, ". Say which: \"the second %s\", or give a region", e.Target.Text)
	return b.String()
}

func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }

// core is s normalized with its case kept and punctuation at its ends taken off.
func core(s string) string {
	return strings.TrimFunc(string(normalize(s, true)), isEdgePunct)
}

func ordinalName(n int) string {
	for w, k := range ordinals {
		if k == n {
			return w
		}
	}
	return strconv.Itoa(n) + "."
}

// Pick chooses t's match among ms (Find's answer, in reading order): the
// Nth, else the only one. When several match and t does not say which, the
// ones whose letters have t's case are preferred (a target "Blue" picks the
// one "Blue" over "BLUE"); still several is an *AmbiguousError listing them.
// None is an error wrapping ErrNotFound.
func Pick(ms []Match, t Target) (Match, error) {
	if t.Region != (geom.ImageRect{}) {
		ms = slices.DeleteFunc(slices.Clone(ms), func(m Match) bool { return !m.Box.In(t.Region) })
	}
	switch {
	case len(ms) == 0:
		return Match{}, fmt.Errorf("%w: no text %q on the screen", ErrNotFound, t.Text)
	case t.Nth == -1:
		return ms[len(ms)-1], nil
	case t.Nth > len(ms):
		return Match{}, fmt.Errorf("%w: the %s %q was asked for, and %d places read it", ErrNotFound, ordinalName(t.Nth), t.Text, len(ms))
	case t.Nth > 0:
		return ms[t.Nth-1], nil
	case len(ms) == 1:
		return ms[0], nil
	}
	same := slices.DeleteFunc(slices.Clone(ms), func(m Match) bool { return core(m.Text) != core(t.Text) })
	if len(same) == 1 {
		return same[0], nil
	}
	return Match{}, &AmbiguousError{Target: t, Matches: ms}
}
