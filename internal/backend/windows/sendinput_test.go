package windows

import (
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"slices"
	"testing"
	"unsafe"

	"github.com/guiagent/guiagent/internal/desktop"
)

// raw returns the bytes of an INPUT as SendInput reads them.
func raw(in *input) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(in)), inputSize)
}

func TestInputLayoutMatchesWin32(t *testing.T) {
	ptr := int(unsafe.Sizeof(uintptr(0)))
	// sizeof(INPUT): 40 on 64-bit Windows, 28 on 32-bit.
	wantSize, union := 40, 8
	if ptr == 4 {
		wantSize, union = 28, 4
	}
	if inputSize != wantSize {
		t.Fatalf("sizeof(INPUT) = %d, want %d", inputSize, wantSize)
	}
	if off := int(unsafe.Offsetof(input{}.Mouse)); off != union {
		t.Fatalf("INPUT union offset = %d, want %d", off, union)
	}
	le := binary.LittleEndian

	k := keyEvent(vkKey{VK: 0x25, Extended: true}, 0x4B, true)
	k.key().DwExtraInfo = 0x1234
	b := raw(&k)
	// KEYBDINPUT: wVk, wScan, dwFlags, time, dwExtraInfo (pointer-aligned).
	extra := union + 12
	if ptr == 8 {
		extra = union + 16
	}
	if le.Uint32(b) != inputKeyboard || le.Uint16(b[union:]) != 0x25 || le.Uint16(b[union+2:]) != 0x4B ||
		le.Uint32(b[union+4:]) != keyExtended|keyUp || le.Uint32(b[union+8:]) != 0 || b[extra] != 0x34 || b[extra+1] != 0x12 {
		t.Fatalf("keyboard INPUT bytes = % x", b)
	}

	m := mouseEvent(mouseMove|mouseAbsolute|mouseVirtualDesk, -7, 65535, uint32(0xFFFFFF88))
	b = raw(&m)
	// MOUSEINPUT: dx, dy, mouseData, dwFlags, time, dwExtraInfo.
	if le.Uint32(b) != inputMouse || int32(le.Uint32(b[union:])) != -7 || le.Uint32(b[union+4:]) != 65535 ||
		le.Uint32(b[union+8:]) != 0xFFFFFF88 || le.Uint32(b[union+12:]) != mouseMove|mouseAbsolute|mouseVirtualDesk {
		t.Fatalf("mouse INPUT bytes = % x", b)
	}

	u := unicodeEvent(0xD83D, false)
	b = raw(&u)
	if le.Uint16(b[union:]) != 0 || le.Uint16(b[union+2:]) != 0xD83D || le.Uint32(b[union+4:]) != keyUnicode {
		t.Fatalf("unicode INPUT bytes = % x", b)
	}
}

// describe renders events for failure messages and comparisons.
func describe(evs []input) []string {
	var out []string
	for i := range evs {
		e := &evs[i]
		if e.Type == inputMouse {
			out = append(out, "mouse:"+hex(e.Mouse.Flags))
			continue
		}
		kb := e.key()
		s := "key:" + hex(uint32(kb.VK)) + "/" + hex(uint32(kb.Scan))
		if kb.Flags&keyUnicode != 0 {
			s = "unicode:" + hex(uint32(kb.Scan))
		}
		if kb.Flags&keyUp != 0 {
			s += ":up"
		} else {
			s += ":down"
		}
		out = append(out, s)
	}
	return out
}

func hex(v uint32) string { return fmt.Sprintf("%x", v) }

func TestReleasesAfterPartialInsert(t *testing.T) {
	shift, a := vkKey{VK: vkLShift}, vkKey{VK: 0x41}
	batch := []input{
		keyEvent(shift, 0x2A, false), keyEvent(a, 0x1E, false), keyEvent(a, 0x1E, true), keyEvent(shift, 0x2A, true),
	}
	for _, tc := range []struct {
		sent int
		want []string
	}{
		{0, nil},
		{1, []string{"key:a0/2a:up"}},
		{2, []string{"key:41/1e:up", "key:a0/2a:up"}}, // newest first
		{3, []string{"key:a0/2a:up"}},
		{4, nil},
	} {
		if got := describe(releasesAfter(batch, tc.sent)); !slices.Equal(got, tc.want) {
			t.Errorf("releasesAfter(sent=%d) = %v, want %v", tc.sent, got, tc.want)
		}
	}

	typed := []input{unicodeEvent('x', false), unicodeEvent('x', true), unicodeEvent(0xD83D, false)}
	if got := describe(releasesAfter(typed, 3)); !slices.Equal(got, []string{"unicode:d83d:up"}) {
		t.Errorf("unicode releases = %v, want the high surrogate released", got)
	}

	drag := []input{mouseEvent(mouseLeftDown, 0, 0, 0), mouseEvent(mouseRightDown, 0, 0, 0), mouseEvent(mouseLeftUp, 0, 0, 0)}
	if got := describe(releasesAfter(drag, 3)); !slices.Equal(got, []string{"mouse:10"}) {
		t.Errorf("mouse releases = %v, want right button up (0x10)", got)
	}
	if got := describe(releasesAfter(drag, 2)); !slices.Equal(got, []string{"mouse:10", "mouse:4"}) {
		t.Errorf("mouse releases = %v, want right up then left up", got)
	}
	if got := releasesAfter(drag, 99); len(got) != 1 {
		t.Errorf("sent beyond the batch: %v", describe(got))
	}
}

func TestScrollEvents(t *testing.T) {
	for _, tc := range []struct {
		d       desktop.Direction
		notches int
		flags   uint32
		delta   int32
		n       int
	}{
		{desktop.Up, 3, mouseWheel, 120, 3},
		{desktop.Down, 2, mouseWheel, -120, 2},
		{desktop.LeftD, 1, mouseHWheel, -120, 1},
		{desktop.RightD, 0, mouseHWheel, 120, 1}, // at least one notch
	} {
		ev, err := scrollEvents(tc.d, tc.notches)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev) != tc.n {
			t.Fatalf("%s x%d: %d events, want %d", tc.d, tc.notches, len(ev), tc.n)
		}
		for _, e := range ev {
			if e.Type != inputMouse || e.Mouse.Flags != tc.flags || int32(e.Mouse.MouseData) != tc.delta {
				t.Fatalf("%s: event %+v, want flags 0x%x delta %d", tc.d, e.Mouse, tc.flags, tc.delta)
			}
		}
	}
	if _, err := scrollEvents("sideways", 1); err == nil {
		t.Fatal("unknown direction accepted")
	}
	if _, _, err := buttonFlags(desktop.Button(9)); err == nil {
		t.Fatal("unknown button accepted")
	}
	if d, u, _ := buttonFlags(desktop.Right); d != mouseRightDown || u != mouseRightUp {
		t.Fatalf("right button flags = 0x%x/0x%x", d, u)
	}
}

func TestBGRAToRGBA(t *testing.T) {
	// Five pixels: the two-pixel fast path and the single-pixel tail.
	pix := []byte{
		1, 2, 3, 0, 10, 20, 30, 99,
		0xff, 0, 0, 0, 0, 0xff, 0, 7,
		0, 0, 0xff, 0,
	}
	bgraToRGBA(pix)
	want := []byte{
		3, 2, 1, 255, 30, 20, 10, 255,
		0, 0, 0xff, 255, 0, 0xff, 0, 255,
		0xff, 0, 0, 255,
	}
	if !slices.Equal(pix, want) {
		t.Fatalf("got  % x\nwant % x", pix, want)
	}
}

func TestPrepareRGBAReusesBuffers(t *testing.T) {
	big := image.NewRGBA(image.Rect(0, 0, 100, 100))
	img := desktop.ReuseRGBA(big, 30, 20)
	if &img.Pix[0] != &big.Pix[0] || img.Bounds() != image.Rect(0, 0, 30, 20) || img.Stride != 120 {
		t.Fatalf("prepareRGBA did not reuse a large enough buffer: bounds %v stride %d", img.Bounds(), img.Stride)
	}
	img.Pix[(19*30+29)*4] = 200 // last pixel addressable with the new stride
	if c := img.RGBAAt(29, 19); c != (color.RGBA{R: 200}) {
		t.Fatalf("pixel (29,19) = %v", c)
	}
	small := desktop.ReuseRGBA(img, 200, 100)
	if small == img || small.Bounds() != image.Rect(0, 0, 200, 100) {
		t.Fatalf("prepareRGBA reused a buffer that is too small")
	}
}

func TestClipboardLineBreaks(t *testing.T) {
	for in, want := range map[string]string{
		"plain":    "plain",
		"a\nb":     "a\r\nb",
		"a\r\nb\n": "a\r\nb\r\n",
		"\n\n":     "\r\n\r\n",
		"中文\n😀":    "中文\r\n😀",
	} {
		got := toClipboardText(in)
		if got != want {
			t.Errorf("toClipboardText(%q) = %q, want %q", in, got, want)
		}
		if back := fromClipboardText(got); back != fromClipboardText(in) {
			t.Errorf("round trip of %q = %q", in, back)
		}
	}
}
