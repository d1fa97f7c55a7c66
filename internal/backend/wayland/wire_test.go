package wayland

import (
	"bytes"
	"encoding/binary"
	"image"
	"math"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

func TestEncodeMatchesTheWireFormat(t *testing.T) {
	var e encoder
	e.uint(7)
	e.int(-2)
	e.fixed(1.5)
	e.string("wl_shm")
	e.array([]byte{1, 2, 3})
	msg, err := message(3, 1, e.buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		3, 0, 0, 0, 1, 0, 48, 0, // object 3, opcode 1, size 48
		7, 0, 0, 0,
		0xfe, 0xff, 0xff, 0xff,
		0x80, 1, 0, 0, // 1.5 * 256
		7, 0, 0, 0, 'w', 'l', '_', 's', 'h', 'm', 0, 0, // length with NUL, padded
		3, 0, 0, 0, 1, 2, 3, 0,
	}
	want[6] = byte(len(want))
	if !bytes.Equal(msg, want) {
		t.Errorf("message =\n% x\nwant\n% x", msg, want)
	}
	sender, op, size := header(msg)
	if sender != 3 || op != 1 || size != len(want) {
		t.Errorf("header = %d %d %d", sender, op, size)
	}
}

func TestDecodeReadsWhatEncodeWrote(t *testing.T) {
	var e encoder
	e.uint(42)
	e.int(-7)
	e.fixed(-3.25)
	e.string("HEADLESS-2")
	e.string("")
	e.array([]byte{2, 0, 0, 0})
	d := &decoder{data: e.buf}
	if v := d.uint(); v != 42 {
		t.Errorf("uint = %d", v)
	}
	if v := d.int(); v != -7 {
		t.Errorf("int = %d", v)
	}
	if v := d.fixed(); v != -3.25 {
		t.Errorf("fixed = %v", v)
	}
	if v := d.string(); v != "HEADLESS-2" {
		t.Errorf("string = %q", v)
	}
	if v := d.string(); v != "" {
		t.Errorf("empty string = %q", v)
	}
	if v := d.array(); !bytes.Equal(v, []byte{2, 0, 0, 0}) {
		t.Errorf("array = %v", v)
	}
	if d.err != nil {
		t.Errorf("err = %v", d.err)
	}
	d.uint()
	if d.err == nil {
		t.Error("reading past the end set no error")
	}
	short := &decoder{data: []byte{200, 0, 0, 0, 'a'}} // a string longer than the event
	if s := short.string(); s != "" || short.err == nil {
		t.Errorf("truncated string read %q, err %v", s, short.err)
	}
	if fd := (&decoder{}).fd(); fd != -1 {
		t.Errorf("fd without descriptors = %d", fd)
	}
}

func TestMessageRefusesOversizedRequests(t *testing.T) {
	if _, err := message(1, 0, make([]byte, maxMessage)); err == nil || !strings.Contains(err.Error(), "4096") {
		t.Errorf("oversized message: %v, want an error naming the 4096-byte limit", err)
	}
}

// fakeSock records writes and serves canned reads, for the client's dispatch.
type fakeSock struct {
	writes [][]byte
	reads  chan []byte
}

func (f *fakeSock) write(b []byte, fds []int) error {
	f.writes = append(f.writes, append([]byte(nil), b...))
	return nil
}

func (f *fakeSock) read(b []byte) (int, []int, error) {
	m, ok := <-f.reads
	if !ok {
		return 0, nil, errShort
	}
	return copy(b, m), nil, nil
}

func (f *fakeSock) close() error { return nil }

func event(sender uint32, op uint16, args func(*encoder)) []byte {
	var e encoder
	args(&e)
	m, _ := message(sender, op, e.buf)
	return m
}

func TestClientAllocatesIdsInOrderAndDispatchesSplitEvents(t *testing.T) {
	f := &fakeSock{reads: make(chan []byte, 4)}
	c := newClient(f)
	defer close(f.reads)
	got := make(chan string, 2)
	var reg, cb uint32
	if err := c.send(displayID, 1, newObj{h: func(op uint16, d *decoder) {
		got <- d.string()
	}, out: &reg}); err != nil {
		t.Fatal(err)
	}
	if err := c.send(displayID, 0, newObj{out: &cb}); err != nil {
		t.Fatal(err)
	}
	if reg != 2 || cb != 3 {
		t.Errorf("ids %d, %d; want 2 and 3 (wl_display is 1)", reg, cb)
	}
	if id := binary.LittleEndian.Uint32(f.writes[0][8:]); id != 2 {
		t.Errorf("get_registry carried id %d", id)
	}
	// One event split across two reads, then two events in one read.
	ev := event(reg, 0, func(e *encoder) { e.string("first") })
	f.reads <- ev[:5]
	f.reads <- append(ev[5:], event(reg, 0, func(e *encoder) { e.string("second") })...)
	for _, want := range []string{"first", "second"} {
		if s := <-got; s != want {
			t.Errorf("event %q, want %q", s, want)
		}
	}
	// A protocol error fails the client with a message naming it.
	f.reads <- event(displayID, 0, func(e *encoder) { e.uint(reg); e.uint(3); e.string("bad things") })
	<-c.dead
	if err := c.failed(); err == nil || !strings.Contains(err.Error(), "bad things") || !strings.Contains(err.Error(), "error 3") {
		t.Errorf("after wl_display.error the client reports %v", err)
	}
	if err := c.send(reg, 0); err == nil {
		t.Error("a failed client accepted a request")
	}
}

func TestLayoutMapsScaledOutputs(t *testing.T) {
	outs := []output{
		{global: 2, name: "DP-2", modeW: 3840, modeH: 2160, lx: 1920, ly: 0, lw: 2560, lh: 1440, hasLogical: true}, // 1.5
		{global: 1, name: "DP-1", modeW: 1920, modeH: 1080, lx: 0, ly: 0, lw: 1920, lh: 1080, hasLogical: true},
		{global: 3, name: "HDMI-1", modeW: 1080, modeH: 1920, transform: 1, scale: 2, geomX: -540, geomY: 0}, // rotated, no xdg-output
	}
	var ps []place
	for _, o := range outs {
		p, ok := placeOf(o)
		if !ok {
			t.Fatalf("placeOf(%+v) not ready", o)
		}
		ps = append(ps, p)
	}
	ds, origin := layout(ps)
	if origin != (geom.GlobalPoint{}) {
		t.Errorf("origin %v, want the output at the layout's origin", origin)
	}
	want := []geom.Display{
		{ID: "0", Name: "HDMI-1", Bounds: geom.Rect{X: -540, Y: 0, W: 960, H: 540}, Scale: 2},
		{ID: "1", Name: "DP-1", Bounds: geom.Rect{X: 0, Y: 0, W: 1920, H: 1080}, Scale: 1, Primary: true},
		{ID: "2", Name: "DP-2", Bounds: geom.Rect{X: 1920, Y: 0, W: 2560, H: 1440}, Scale: 1.5},
	}
	for i := range want {
		if ds[i] != want[i] {
			t.Errorf("display %d = %+v, want %+v", i, ds[i], want[i])
		}
	}
	// A layout without an output at its origin: the top-left-most is primary and the origin.
	ds, origin = layout([]place{{name: "A", logical: geom.Rect{X: 100, Y: 50, W: 800, H: 600}, physical: geom.Size{W: 800, H: 600}}})
	if origin != (geom.GlobalPoint{X: 100, Y: 50}) || ds[0].Bounds != (geom.Rect{W: 800, H: 600}) || !ds[0].Primary {
		t.Errorf("offset layout: %+v origin %v", ds, origin)
	}
	// Image pixels of the scale-1.5 output map to its logical points.
	d := want[2]
	f := geom.NewFrame("f", d, d.Bounds, d.PhysicalSize())
	if p := f.ImageToLocal(geom.ImagePoint{X: 1500, Y: 750}); math.Round(p.X) != 1000 || math.Round(p.Y) != 500 {
		t.Errorf("device pixel (1500,750) of a scale-1.5 output maps to local %v, want logical pixel (1000,500)", p)
	}
}

func TestAbsoluteMotionLandsOnPixelCentres(t *testing.T) {
	ps := []place{
		{logical: geom.Rect{X: 0, Y: 0, W: 1280, H: 800}},
		{logical: geom.Rect{X: 1280, Y: 0, W: 960, H: 540}},
	}
	x, y, w, h, err := absolute(ps, geom.GlobalPoint{}, geom.GlobalPoint{X: 1500, Y: 300})
	if err != nil {
		t.Fatal(err)
	}
	if w != 2*2240 || h != 2*800 || x != 3001 || y != 601 {
		t.Errorf("absolute = %d/%d, %d/%d; want 3001/4480, 601/1600 (half pixels of the 2240x800 layout)", x, w, y, h)
	}
	if float64(x)/float64(w)*2240 != 1500.5 {
		t.Errorf("the compositor would put the pointer at %v, want the centre of pixel 1500", float64(x)/float64(w)*2240)
	}
	if _, _, _, _, err := absolute(ps, geom.GlobalPoint{}, geom.GlobalPoint{X: 1500, Y: 700}); err == nil {
		t.Error("a point below the short output, on no output, was accepted")
	}
}

func TestConvertHandlesFormatsAndYInvert(t *testing.T) {
	// Two rows of two pixels, stride 12 (padding after each row).
	src := []byte{
		1, 2, 3, 0, 4, 5, 6, 0, 9, 9, 9, 9,
		7, 8, 9, 0, 10, 11, 12, 0, 9, 9, 9, 9,
	}
	for _, tc := range []struct {
		format  uint32
		yInvert bool
		first   [4]byte
	}{
		{fmtXRGB8888, false, [4]byte{3, 2, 1, 255}}, // B,G,R,X in memory
		{fmtARGB8888, false, [4]byte{3, 2, 1, 255}},
		{fmtXBGR8888, false, [4]byte{1, 2, 3, 255}}, // R,G,B,X in memory
		{fmtABGR8888, true, [4]byte{7, 8, 9, 255}},  // bottom row first
	} {
		img := image.NewRGBA(image.Rect(0, 0, 2, 2))
		convert(img, src, frameFormat{format: tc.format, w: 2, h: 2, stride: 12, yInvert: tc.yInvert})
		if got := [4]byte(img.Pix[:4]); got != tc.first {
			t.Errorf("format %#x y_invert %v: first pixel %v, want %v", tc.format, tc.yInvert, got, tc.first)
		}
	}
	if knownFormat(0x30335241) { // AR30: 10 bits per channel
		t.Error("a 10-bit format is taken as 8-bit")
	}
}

func TestKeymapGrowsAndKeepsHeldKeys(t *testing.T) {
	m := newKeymap()
	text := m.text()
	for _, want := range []string{"xkb_keycodes", "include \"complete\"", "modifier_map Control", "modifier_map Shift", "modifier_map Mod1", "modifier_map Mod4", "0x0000ffe3"} {
		if !strings.Contains(text, want) {
			t.Errorf("keymap lacks %q", want)
		}
	}
	kc, ok := m.add(0x01007551) // 界
	if !ok || !strings.Contains(m.text(), "0x01007551") {
		t.Fatalf("adding a CJK keysym: %d %v", kc, ok)
	}
	if again, _ := m.add(0x01007551); again != kc {
		t.Errorf("the same keysym got a second keycode %d (first %d)", again, kc)
	}
	// Fill the keymap, then drop all but one held key.
	n := m.free()
	for i := range n {
		if _, ok := m.add(uint32(0x01000400 + i)); !ok {
			t.Fatalf("keymap full after %d of %d free keycodes", i, n)
		}
	}
	if _, ok := m.add(0x01002713); ok {
		t.Fatal("a full keymap took one more keysym")
	}
	m.drop(func(c int) bool { return c == kc })
	if got, ok := m.lookup(0x01007551); !ok || got != kc {
		t.Errorf("the held key's keycode changed or went: %d %v", got, ok)
	}
	if _, ok := m.lookup(0x01000400); ok {
		t.Error("drop kept a key no one holds")
	}
	if ctrl, ok := m.lookup(0xffe3); !ok || ctrl != minCode+1 {
		t.Errorf("Control_L at %d %v, want the base keycode %d", ctrl, ok, minCode+1)
	}
}

func TestSocketPathAndMissing(t *testing.T) {
	for _, tc := range []struct {
		o       Options
		want    string
		wantErr string
	}{
		{Options{Display: "wayland-1", RuntimeDir: "/run/user/1000"}, "/run/user/1000/wayland-1", ""},
		{Options{RuntimeDir: "/run/user/1000"}, "/run/user/1000/wayland-0", ""},
		{Options{Display: "/tmp/sock"}, "/tmp/sock", ""},
		{Options{Display: "wayland-1"}, "", "XDG_RUNTIME_DIR"},
		{Options{Display: "a/b"}, "", "absolute path"},
	} {
		got, err := tc.o.SocketPath()
		if got != tc.want || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("SocketPath(%+v) = %q, %v; want %q, an error naming %q", tc.o, got, err, tc.want, tc.wantErr)
		}
	}
	r := Report{Protocols: []Protocol{{Name: ifScreencopy, Version: 3}, {Name: ifDataControlWlr, Version: 2}, {Name: ifDataControlExt}, {Name: ifVirtualPointer}}}
	if m := r.Missing(); len(m) != 1 || m[0] != ifVirtualPointer {
		t.Errorf("Missing = %v, want only the virtual pointer (wlr data control stands for ext)", m)
	}
}

func BenchmarkConvert1080(b *testing.B) {
	src := make([]byte, 1920*1080*4)
	for i := range src {
		src[i] = byte(i * 7)
	}
	img := image.NewRGBA(image.Rect(0, 0, 1920, 1080))
	f := frameFormat{format: fmtXRGB8888, w: 1920, h: 1080, stride: 1920 * 4}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		convert(img, src, f)
	}
}

// TestConvertInPartsEqualsOneRun: the parallel conversion of a large,
// y-inverted, padded frame is the row-by-row one.
func TestConvertInPartsEqualsOneRun(t *testing.T) {
	w, h, stride := 1030, 700, 1030*4+16
	src := make([]byte, stride*h)
	for i := range src {
		src[i] = byte(i*31 + i/7)
	}
	for _, f := range []frameFormat{
		{format: fmtXRGB8888, w: w, h: h, stride: stride, yInvert: true},
		{format: fmtXBGR8888, w: w, h: h, stride: w * 4},
	} {
		got := image.NewRGBA(image.Rect(0, 0, w, h))
		convert(got, src, f)
		want := image.NewRGBA(image.Rect(0, 0, w, h))
		convertRows(want, src, f, 0, h)
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("format %#x: the parallel conversion differs from one run", f.format)
		}
		sy := 0
		if f.yInvert {
			sy = h - 1
		}
		px := src[sy*f.stride : sy*f.stride+4]
		wantPx := [4]byte{px[0], px[1], px[2], 255}
		if f.format == fmtXRGB8888 {
			wantPx = [4]byte{px[2], px[1], px[0], 255}
		}
		if [4]byte(got.Pix[:4]) != wantPx {
			t.Errorf("format %#x: first pixel %v, want %v", f.format, got.Pix[:4], wantPx)
		}
	}
}
