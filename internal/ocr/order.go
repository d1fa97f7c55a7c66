package ocr

import (
	"cmp"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/geom"
)

// NewLine builds a line from its words: sorted left to right, text joined by
// single spaces, box the union of the words' boxes, confidence their mean.
// Words with no text are dropped; no words give the zero Line.
func NewLine(words []Word) Line {
	ws := make([]Word, 0, len(words))
	for _, w := range words {
		if w.Text = strings.TrimSpace(w.Text); w.Text != "" {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return Line{}
	}
	slices.SortStableFunc(ws, func(a, b Word) int { return cmp.Compare(a.Box.X, b.Box.X) })
	l := Line{Words: ws}
	texts := make([]string, len(ws))
	sum := 0.0
	for i, w := range ws {
		texts[i] = w.Text
		l.Box = l.Box.Union(w.Box)
		sum += w.Conf
	}
	l.Text = strings.Join(texts, " ")
	l.Conf = sum / float64(len(ws))
	return l
}

// SortLines puts lines in reading order: rows top to bottom, and left to
// right within a row. Two lines share a row when they overlap vertically by
// at least half the height of the shorter one (so labels and buttons side by
// side read as one row, as a person scans a screen; columns of a page of
// prose are not told apart).
func SortLines(lines []Line) {
	slices.SortStableFunc(lines, func(a, b Line) int {
		return cmp.Or(cmp.Compare(a.Box.Y, b.Box.Y), cmp.Compare(a.Box.X, b.Box.X))
	})
	for start := 0; start < len(lines); {
		row := lines[start].Box
		end := start + 1
		for end < len(lines) && sameRow(row, lines[end].Box) {
			end++
		}
		slices.SortStableFunc(lines[start:end], func(a, b Line) int { return cmp.Compare(a.Box.X, b.Box.X) })
		start = end
	}
}

// sameRow reports whether b overlaps row vertically by at least half the
// shorter height.
func sameRow(row, b geom.ImageRect) bool {
	overlap := min(row.Y+row.H, b.Y+b.H) - max(row.Y, b.Y)
	return overlap*2 >= min(row.H, b.H)
}
