package windows

import (
	"encoding/binary"
	"strings"
)

// bgraToRGBA converts 32-bit BGRA pixels (what GetDIBits returns for a
// 32-bit DIB; the fourth byte is undefined for screen content) to opaque RGBA
// in place, two pixels per 64-bit word.
func bgraToRGBA(pix []byte) {
	n := len(pix) &^ 3
	i := 0
	for ; i+8 <= n; i += 8 {
		v := binary.LittleEndian.Uint64(pix[i:])
		const (
			g  = 0x0000ff000000ff00
			lo = 0x000000ff000000ff
			a  = 0xff000000ff000000
		)
		binary.LittleEndian.PutUint64(pix[i:], v&g|(v>>16)&lo|(v&lo)<<16|a)
	}
	for ; i+4 <= n; i += 4 {
		pix[i], pix[i+2], pix[i+3] = pix[i+2], pix[i], 0xff
	}
}

// toClipboardText converts text to the CRLF line breaks Windows programs
// expect in CF_UNICODETEXT ("\r\n" stays as it is).
func toClipboardText(text string) string {
	if !strings.Contains(text, "\n") {
		return text
	}
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n")
}

// fromClipboardText converts CRLF line breaks to "\n", so that text written
// with WriteClipboard reads back unchanged.
func fromClipboardText(text string) string {
	return strings.ReplaceAll(text, "\r\n", "\n")
}
