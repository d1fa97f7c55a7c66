package vnc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

// fakeServer is a scripted RFB server on a loopback port: it runs the
// handshake for one version and security type, then hands the connection to
// serve.
type fakeServer struct {
	version  string // "003.003", "003.007", "003.008" (what the server announces)
	reply    string // the version the client must answer; "" means version
	security byte   // secNone or secVNCAuth
	password string
	w, h     int
	serve    func(t *testing.T, c net.Conn, r *bufio.Reader)

	addr    string
	authErr chan error // the server's view of authentication
}

func (s *fakeServer) start(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s.addr = l.Addr().String()
	s.authErr = make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		if err := s.handshake(c, r); err != nil {
			s.authErr <- err
			return
		}
		s.authErr <- nil
		if s.serve != nil {
			s.serve(t, c, r)
		}
		_, _ = io.Copy(io.Discard, r)
	}()
}

func (s *fakeServer) handshake(c net.Conn, r *bufio.Reader) error {
	be := binary.BigEndian
	c.Write([]byte("RFB " + s.version + "\n"))
	ver := make([]byte, 12)
	if _, err := io.ReadFull(r, ver); err != nil {
		return err
	}
	v := s.version
	if s.reply != "" {
		v = s.reply
	}
	if string(ver) != "RFB "+v+"\n" {
		return errors.New("client answered version " + string(ver))
	}
	if v == "003.003" {
		c.Write(be.AppendUint32(nil, uint32(s.security)))
	} else {
		c.Write([]byte{1, s.security})
		var pick [1]byte
		if _, err := io.ReadFull(r, pick[:]); err != nil {
			return err
		}
		if pick[0] != s.security {
			return errors.New("client picked another security type")
		}
	}
	ok := true
	if s.security == secVNCAuth {
		var ch [16]byte
		copy(ch[:], "0123456789abcdef")
		c.Write(ch[:])
		var resp [16]byte
		if _, err := io.ReadFull(r, resp[:]); err != nil {
			return err
		}
		want, _ := vncAuthResponse(s.password, ch)
		ok = resp == want
	}
	if s.security == secVNCAuth || v == "003.008" {
		if !ok {
			c.Write(be.AppendUint32(nil, 1))
			if v == "003.008" {
				reason := "Authentication failed"
				c.Write(append(be.AppendUint32(nil, uint32(len(reason))), reason...))
			}
			return errors.New("wrong password")
		}
		c.Write(be.AppendUint32(nil, 0))
	}
	var shared [1]byte
	if _, err := io.ReadFull(r, shared[:]); err != nil {
		return err
	}
	init := be.AppendUint16(nil, uint16(s.w))
	init = be.AppendUint16(init, uint16(s.h))
	init = append(init, make([]byte, 16)...)
	init = append(be.AppendUint32(init, 4), "fake"...)
	c.Write(init)
	// SetPixelFormat (20 bytes) and SetEncodings (4 + 4n).
	pf := make([]byte, 20)
	if _, err := io.ReadFull(r, pf); err != nil {
		return err
	}
	if pf[0] != msgSetPixelFormat || pf[4] != 32 || pf[7] != 1 {
		return errors.New("bad SetPixelFormat")
	}
	se := make([]byte, 4)
	if _, err := io.ReadFull(r, se); err != nil {
		return err
	}
	if _, err := r.Discard(4 * int(be.Uint16(se[2:]))); err != nil {
		return err
	}
	return nil
}

// readRequest reads client messages until a FramebufferUpdateRequest and returns its rectangle.
func readRequest(r *bufio.Reader) (incremental bool, rect image.Rectangle, err error) {
	for {
		t, err := r.ReadByte()
		if err != nil {
			return false, rect, err
		}
		switch t {
		case msgFramebufferUpdateRequest:
			m := make([]byte, 9)
			if _, err := io.ReadFull(r, m); err != nil {
				return false, rect, err
			}
			be := binary.BigEndian
			x, y := int(be.Uint16(m[1:])), int(be.Uint16(m[3:]))
			return m[0] == 1, image.Rect(x, y, x+int(be.Uint16(m[5:])), y+int(be.Uint16(m[7:]))), nil
		case msgKeyEvent:
			_, err = r.Discard(7)
		case msgPointerEvent:
			_, err = r.Discard(5)
		case msgClientCutText:
			m := make([]byte, 7)
			if _, err = io.ReadFull(r, m); err == nil {
				n := int32(binary.BigEndian.Uint32(m[3:]))
				if n < 0 {
					n = -n
				}
				_, err = r.Discard(int(n))
			}
		default:
			return false, rect, errors.New("unexpected client message")
		}
		if err != nil {
			return false, rect, err
		}
	}
}

// rawRect encodes a Raw rectangle of one colour (RGBX bytes, as the client asked).
func rawRect(r image.Rectangle, c color.RGBA) []byte {
	be := binary.BigEndian
	m := be.AppendUint16(nil, uint16(r.Min.X))
	m = be.AppendUint16(m, uint16(r.Min.Y))
	m = be.AppendUint16(m, uint16(r.Dx()))
	m = be.AppendUint16(m, uint16(r.Dy()))
	m = be.AppendUint32(m, uint32(encRaw))
	for range r.Dx() * r.Dy() {
		m = append(m, c.R, c.G, c.B, 0)
	}
	return m
}

func rectHeader(r image.Rectangle, enc int32) []byte {
	be := binary.BigEndian
	m := be.AppendUint16(nil, uint16(r.Min.X))
	m = be.AppendUint16(m, uint16(r.Min.Y))
	m = be.AppendUint16(m, uint16(r.Dx()))
	m = be.AppendUint16(m, uint16(r.Dy()))
	return be.AppendUint32(m, uint32(enc))
}

func update(rects ...[]byte) []byte {
	m := []byte{msgFramebufferUpdate, 0}
	m = binary.BigEndian.AppendUint16(m, uint16(len(rects)))
	for _, r := range rects {
		m = append(m, r...)
	}
	return m
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestHandshakeVersionsAndSecurity(t *testing.T) {
	for _, tc := range []struct {
		version, reply, want string
		security             byte
	}{
		{"003.003", "", "3.3", secNone}, {"003.003", "", "3.3", secVNCAuth},
		{"003.007", "", "3.7", secNone}, {"003.007", "", "3.7", secVNCAuth},
		{"003.008", "", "3.8", secNone}, {"003.008", "", "3.8", secVNCAuth},
		// Apple Screen Sharing, Intel AMT KVM and RealVNC 4.6 / 5+ announce
		// these and speak 3.8 with a client that answers 3.8.
		{"003.889", "003.008", "3.8", secVNCAuth},
		{"004.000", "003.008", "3.8", secNone},
		{"004.001", "003.008", "3.8", secVNCAuth},
		{"005.000", "003.008", "3.8", secVNCAuth},
	} {
		t.Run(tc.version+"/"+map[byte]string{secNone: "none", secVNCAuth: "vncauth"}[tc.security], func(t *testing.T) {
			s := &fakeServer{version: tc.version, reply: tc.reply, security: tc.security, password: "pw-1234", w: 64, h: 48,
				serve: func(t *testing.T, c net.Conn, r *bufio.Reader) {
					for {
						_, rect, err := readRequest(r)
						if err != nil {
							return
						}
						c.Write(update(rawRect(rect, color.RGBA{R: 10, G: 20, B: 30, A: 255})))
					}
				}}
			s.start(t)
			b := New(Options{Addr: s.addr, Password: "pw-1234", Logger: quiet()})
			if err := b.Start(context.Background()); err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer b.Close()
			if err := <-s.authErr; err != nil {
				t.Fatalf("server side of the handshake: %v", err)
			}
			if b.version != tc.want {
				t.Errorf("negotiated RFB %s, want %s", b.version, tc.want)
			}
			ds, err := b.Displays(context.Background())
			if err != nil || len(ds) != 1 || ds[0].Bounds != (geom.Rect{W: 64, H: 48}) || ds[0].Name != "fake" || !ds[0].Primary {
				t.Errorf("Displays = %+v, %v; want one 64x48 primary display named fake", ds, err)
			}
			img, err := b.Capture(context.Background(), geom.Rect{X: 4, Y: 4, W: 8, H: 8}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := img.RGBAAt(3, 3); got != (color.RGBA{R: 10, G: 20, B: 30, A: 255}) {
				t.Errorf("captured pixel %v, want the served colour with alpha 255", got)
			}
		})
	}
}

func TestWrongPasswordAndRefusedConnection(t *testing.T) {
	for _, v := range []string{"003.003", "003.008"} {
		s := &fakeServer{version: v, security: secVNCAuth, password: "right", w: 8, h: 8}
		s.start(t)
		b := New(Options{Addr: s.addr, Password: "wrong", Logger: quiet()})
		err := b.Start(context.Background())
		if !errors.Is(err, ErrAuthFailed) || !strings.Contains(err.Error(), s.addr) || !strings.Contains(err.Error(), "password") {
			t.Errorf("RFB %s, wrong password: Start = %v; want ErrAuthFailed naming %s and the password", v, err, s.addr)
		}
		if err := b.Close(); err != nil {
			t.Errorf("Close after a failed Start: %v", err)
		}
	}
	s := &fakeServer{version: "003.008", security: secVNCAuth, w: 8, h: 8}
	s.start(t)
	err := New(Options{Addr: s.addr, Logger: quiet()}).Start(context.Background())
	if !errors.Is(err, ErrAuthFailed) || !strings.Contains(err.Error(), "requires a password") {
		t.Errorf("no password for a VncAuth server: %v", err)
	}

	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	b := New(Options{Addr: addr, Logger: quiet()})
	err = b.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "check that the VNC server runs") {
		t.Errorf("Start on a closed port: %v; want an error naming %s and the fix", err, addr)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close after a refused connection: %v", err)
	}
	if _, err := b.Capture(context.Background(), geom.Rect{W: 1, H: 1}, nil); err == nil {
		t.Error("Capture on a backend that never started succeeded")
	}
	if err := New(Options{}).Start(context.Background()); err == nil || !strings.Contains(err.Error(), "host:port") {
		t.Errorf("Start without an address: %v", err)
	}
}

// The framebuffer follows Raw, CopyRect and DesktopSize; Bell and plain
// ServerCutText (Latin-1) are understood.
func TestFramebufferUpdatesAndCutText(t *testing.T) {
	red, blue := color.RGBA{R: 200, A: 255}, color.RGBA{B: 200, A: 255}
	step := make(chan int)
	s := &fakeServer{version: "003.008", security: secNone, w: 32, h: 32,
		serve: func(t *testing.T, c net.Conn, r *bufio.Reader) {
			// Answer the start-up request; then paint blue and red at (0,0)-(4,4), copy that to (10,10).
			_, rect, _ := readRequest(r)
			c.Write(update(rawRect(rect, red)))
			<-step
			c.Write(update(rawRect(image.Rect(0, 0, 16, 16), blue), rawRect(image.Rect(0, 0, 4, 4), red)))
			c.Write(update(append(rectHeader(image.Rect(10, 10, 14, 14), encCopyRect), 0, 0, 0, 0)))
			c.Write([]byte{msgBell})
			cut := []byte("Gr\xfc\xdfe")
			c.Write(append([]byte{msgServerCutText, 0, 0, 0}, append(binary.BigEndian.AppendUint32(nil, uint32(len(cut))), cut...)...))
			_, rect, _ = readRequest(r)
			c.Write(update(rawRect(rect, blue)))
			<-step
			c.Write(update(rectHeader(image.Rect(0, 0, 48, 20), encDesktopSize)))
			_, rect, _ = readRequest(r)
			c.Write(update(rawRect(rect, red)))
		}}
	s.start(t)
	b := New(Options{Addr: s.addr, Logger: quiet()})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	step <- 1
	ctx := context.Background()
	// Only the answer to the capture's request covers (20,20); the server
	// sent the other updates before it, so they are applied by then.
	img, err := b.Capture(ctx, geom.Rect{X: 20, Y: 20, W: 2, H: 2}, nil)
	if err != nil || img.RGBAAt(0, 0) != blue {
		t.Fatalf("capture = %v, %v", img, err)
	}
	b.fbMu.Lock()
	at := func(x, y int) color.RGBA { return b.fb.RGBAAt(x, y) }
	if at(1, 1) != red || at(11, 11) != red || at(13, 13) != red || at(14, 14) != blue || at(9, 9) != blue {
		t.Errorf("framebuffer after raw + copyrect: (1,1)=%v (11,11)=%v (13,13)=%v (14,14)=%v (9,9)=%v", at(1, 1), at(11, 11), at(13, 13), at(14, 14), at(9, 9))
	}
	bells := b.bells
	b.fbMu.Unlock()
	if bells != 1 {
		t.Errorf("bells = %d, want 1", bells)
	}
	if got, err := b.ReadClipboard(ctx); err != nil || got != "Grüße" {
		t.Errorf("ReadClipboard after Latin-1 ServerCutText = %q, %v", got, err)
	}
	if err := b.WriteClipboard(ctx, "世界"); err == nil || !strings.Contains(err.Error(), "Latin-1") {
		t.Errorf("WriteClipboard of non-Latin-1 text without the extended clipboard: %v", err)
	}
	step <- 2
	deadline := time.Now().Add(5 * time.Second)
	for b.size() != (geom.Size{W: 48, H: 20}) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	ds, _ := b.Displays(ctx)
	if len(ds) != 1 || ds[0].Bounds != (geom.Rect{W: 48, H: 20}) {
		t.Fatalf("after DesktopSize, Displays = %+v, want 48x20", ds)
	}
	if img, err := b.Capture(ctx, geom.Rect{X: 40, Y: 10, W: 8, H: 10}, nil); err != nil || img.RGBAAt(7, 9) != red {
		t.Errorf("capture in the resized screen: %v", err)
	}
	if _, err := b.Capture(ctx, geom.Rect{X: 0, Y: 0, W: 64, H: 64}, nil); err == nil || !strings.Contains(err.Error(), "outside the remote screen") {
		t.Errorf("capture beyond the resized screen: %v", err)
	}
}

func TestCloseIsIdempotentAndStopsUse(t *testing.T) {
	s := &fakeServer{version: "003.008", security: secNone, w: 8, h: 8,
		serve: func(t *testing.T, c net.Conn, r *bufio.Reader) {
			_, rect, _ := readRequest(r)
			c.Write(update(rawRect(rect, color.RGBA{A: 255})))
		}}
	s.start(t)
	b := New(Options{Addr: s.addr, Logger: quiet()})
	if err := b.Close(); err != nil {
		t.Errorf("Close before Start: %v", err)
	}
	b = New(Options{Addr: s.addr, Logger: quiet()})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	err := b.MoveTo(context.Background(), geom.GlobalPoint{X: 1, Y: 1})
	if err == nil || !strings.Contains(err.Error(), "start the backend again") {
		t.Errorf("MoveTo after Close: %v", err)
	}
}

// A server that never answers an update request makes Capture fail within
// the update timeout, naming the server.
func TestCaptureTimeout(t *testing.T) {
	s := &fakeServer{version: "003.008", security: secNone, w: 8, h: 8,
		serve: func(t *testing.T, c net.Conn, r *bufio.Reader) {
			_, rect, _ := readRequest(r)
			c.Write(update(rawRect(rect, color.RGBA{A: 255})))
			_, _ = io.Copy(io.Discard, r) // then silence
		}}
	s.start(t)
	b := New(Options{Addr: s.addr, Logger: quiet(), UpdateTimeout: 200 * time.Millisecond})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err := b.Capture(context.Background(), geom.Rect{W: 4, H: 4}, nil)
	if err == nil || !strings.Contains(err.Error(), s.addr) || !strings.Contains(err.Error(), "within 200ms") {
		t.Errorf("Capture from a silent server: %v", err)
	}
}

// Pixels received before a DesktopSize change are gone with the old
// framebuffer: a capture pending across the change waits for its whole region
// again instead of returning the black of the new framebuffer.
func TestResizeDuringCaptureWaitsForFreshPixels(t *testing.T) {
	red, blue, green := color.RGBA{R: 200, A: 255}, color.RGBA{B: 200, A: 255}, color.RGBA{G: 200, A: 255}
	top, bottom := image.Rect(0, 0, 8, 4), image.Rect(0, 4, 8, 8)
	s := &fakeServer{version: "003.008", security: secNone, w: 32, h: 32,
		serve: func(t *testing.T, c net.Conn, r *bufio.Reader) {
			_, rect, _ := readRequest(r) // start-up request
			c.Write(update(rawRect(rect, red)))
			if _, _, err := readRequest(r); err != nil { // the capture's request
				return
			}
			c.Write(update(rawRect(top, red)))
			c.Write(update(rectHeader(image.Rect(0, 0, 40, 32), encDesktopSize)))
			if _, _, err := readRequest(r); err != nil { // asked again after the resize
				return
			}
			c.Write(update(rawRect(bottom, blue)))
			c.Write(update(rawRect(top, green)))
		}}
	s.start(t)
	b := New(Options{Addr: s.addr, Logger: quiet()})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	img, err := b.Capture(context.Background(), geom.Rect{W: 8, H: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.RGBAAt(2, 1); got != green {
		t.Errorf("top half = %v, want %v (sent after the resize), not the black of the new framebuffer", got, green)
	}
	if got := img.RGBAAt(2, 6); got != blue {
		t.Errorf("bottom half = %v, want %v", got, blue)
	}
}
