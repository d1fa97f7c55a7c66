package trace

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
)

// MaxEmbeddedImageBytes bounds one image embedded in report.html as a data:
// URI; a larger file is only linked. The run's image budget
// (Options.MaxRunImageBytes) bounds the total.
const MaxEmbeddedImageBytes = 8 << 20

// imageEmbedder turns a run's stored images into data: URIs, reading each file once.
type imageEmbedder struct {
	dir   string
	cache map[string]template.HTMLAttr
}

// src returns the attribute src="data:..." holding rec's image, or "" when it
// has no stored file (not stored, missing, too large, or not an image type
// the report shows). It is an attribute, not a URL, so that html/template
// does not escape every '+' of the base64 text as "&#43;".
func (e *imageEmbedder) src(rec *ImageRecord) template.HTMLAttr {
	if rec == nil || rec.Ref == "" {
		return ""
	}
	if u, ok := e.cache[rec.Ref]; ok {
		return u
	}
	var u template.HTMLAttr
	mime := rec.MIME
	switch mime {
	case "image/jpeg", "image/png", "image/webp":
	default:
		mime = ""
	}
	path := filepath.Join(e.dir, filepath.FromSlash(rec.Ref))
	if fi, err := os.Stat(path); mime != "" && err == nil && fi.Size() <= MaxEmbeddedImageBytes {
		if b, err := os.ReadFile(path); err == nil {
			// Safe as an attribute: a fixed MIME type and base64 text (no quote, '&' or '<').
			u = template.HTMLAttr(`src="data:` + mime + ";base64," + base64.StdEncoding.EncodeToString(b) + `"`)
		}
	}
	e.cache[rec.Ref] = u
	return u
}

// unescapeJSONHTML undoes json.Marshal's HTML escaping (\u003c, \u003e,
// \u0026 and the line separators) in a JSON text, so "<redacted 5 chars>"
// reads as such. Other escapes, including an escaped backslash, are kept.
func unescapeJSONHTML(s string) string {
	if !strings.Contains(s, `\u`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch strings.ToLower(s[i+2 : i+6]) {
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2]) // any other escape, kept whole
		i++
	}
	return b.String()
}

// prettyText pretty-prints JSON text (leaving other text as it is) without HTML escapes.
func prettyText(s string) string {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return s
	}
	return strings.TrimRight(unescapeJSONHTML(string(prettyJSON([]byte(t)))), "\n")
}

var executedRE = regexp.MustCompile(`^(\d+)/(\d+) actions executed$`)

// outcomeOK reports whether a step outcome means every action ran.
func outcomeOK(outcome string) bool {
	if outcome == "ok" || outcome == "no actions" {
		return true
	}
	m := executedRE.FindStringSubmatch(outcome)
	return m != nil && m[1] == m[2]
}

// coordColumn is one column of a step's action table holding coordinates.
type coordColumn struct {
	Header string
	Cells  []string
}

var numRE = regexp.MustCompile(`-?\d+(?:\.\d+)?(?:e[-+]?\d+)?`)

// sameCoords reports whether two cells hold the same numbers (within half a pixel).
func sameCoords(a, b string) bool {
	na, nb := numRE.FindAllString(a, -1), numRE.FindAllString(b, -1)
	if len(na) != len(nb) {
		return false
	}
	for i := range na {
		x, _ := strconv.ParseFloat(na[i], 64)
		y, _ := strconv.ParseFloat(nb[i], 64)
		if d := x - y; d > 0.5 || d < -0.5 {
			return false
		}
	}
	return true
}

// collapseColumns merges adjacent coordinate columns that hold the same
// numbers in every row (their headers joined with " = ") and drops columns
// that are empty in every row.
func collapseColumns(cols []coordColumn) []coordColumn {
	var out []coordColumn
	for _, c := range cols {
		empty := true
		for _, v := range c.Cells {
			empty = empty && v == ""
		}
		if empty {
			continue
		}
		if n := len(out); n > 0 {
			prev := out[n-1]
			same := true
			for i := range c.Cells {
				same = same && sameCoords(prev.Cells[i], c.Cells[i])
			}
			if same {
				out[n-1].Header = prev.Header + " = " + c.Header
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// coordTable fills s.Cols and each action's Coords from its raw coordinates.
func (s *stepView) coordTable() {
	cols := []coordColumn{{Header: "Model coords"}, {Header: "Image px"}, {Header: "Screen px (global)"}}
	for _, a := range s.Actions {
		cols[0].Cells = append(cols[0].Cells, a.Model)
		cols[1].Cells = append(cols[1].Cells, a.Image)
		cols[2].Cells = append(cols[2].Cells, a.Global)
	}
	s.Cols = collapseColumns(cols)
	for i := range s.Actions {
		s.Actions[i].Coords = nil
		for _, c := range s.Cols {
			s.Actions[i].Coords = append(s.Actions[i].Coords, c.Cells[i])
		}
	}
}

// actionLabel is the action for humans without its points: action.Label,
// for a click always its button and count (a plain left click included), so
// that a click's parameters show, and for an ask_user the question (askLabel).
func actionLabel(a action.Action) string {
	switch a.Kind {
	case action.Click, action.DoubleClick, action.TripleClick:
	case action.AskUser:
		return askLabel(a)
	default:
		return a.Label()
	}
	button := a.Button
	if button == 0 {
		button = desktop.Left
	}
	n := a.Clicks()
	d := fmt.Sprintf("%s (%s button, %d click", a.Kind, button, n)
	if n > 1 {
		d += "s"
	}
	if len(a.Keys) > 0 {
		d += " with " + desktop.ComboString(a.Keys)
	}
	if a.Target != "" && a.At == nil {
		d += fmt.Sprintf(" on %q", a.Target)
	}
	return d + ")"
}
