package darwin

import (
	"unicode/utf16"

	"github.com/guiagent/guiagent/internal/desktop"
)

// maxUnicodePerEvent is the most UTF-16 code units one keyboard event carries;
// CGEventKeyboardSetUnicodeString ignores the rest.
const maxUnicodePerEvent = 20

// typeStep is one keyboard event pair (down and up) of a typing plan: either a
// key (Return or Tab, which applications treat as keys, not text) or a run of
// text sent as a Unicode string.
type typeStep struct {
	key  desktop.Key
	text []uint16
}

// planTyping splits text into steps: line breaks ("\n", "\r\n", "\r") become
// Return, tabs become Tab, and everything else is cut into runs of at most
// maxUnicodePerEvent UTF-16 units without splitting a surrogate pair.
func planTyping(text string) []typeStep {
	var steps []typeStep
	var run []uint16
	flush := func() {
		for len(run) > 0 {
			n := min(len(run), maxUnicodePerEvent)
			if n < len(run) && utf16.IsSurrogate(rune(run[n-1])) && run[n-1] < 0xDC00 {
				n-- // do not end a chunk with a high surrogate
			}
			steps = append(steps, typeStep{text: run[:n:n]})
			run = run[n:]
		}
		run = nil
	}
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '\r':
			if i+1 < len(rs) && rs[i+1] == '\n' {
				i++
			}
			fallthrough
		case '\n':
			flush()
			steps = append(steps, typeStep{key: "Return"})
		case '\t':
			flush()
			steps = append(steps, typeStep{key: "Tab"})
		default:
			run = utf16.AppendRune(run, r)
		}
	}
	flush()
	return steps
}
