package vnc

import (
	"crypto/des"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"strconv"
	"strings"
)

// RFB security types (RFC 6143 section 7.2).
const (
	secInvalid = 0
	secNone    = 1
	secVNCAuth = 2
)

// Encodings and pseudo-encodings this client asks for.
const (
	encRaw               int32 = 0
	encCopyRect          int32 = 1
	encCursor            int32 = -239
	encDesktopSize       int32 = -223
	encExtendedClipboard int32 = -1063131698 // 0xC0A1E5CE
)

// ErrAuthFailed is wrapped by the error Start returns when the server rejects
// the password (or the connection) at the security stage.
var ErrAuthFailed = errors.New("VNC authentication failed")

// handshake runs everything from the ProtocolVersion to the first messages of
// the normal phase (SetPixelFormat, SetEncodings).
func (b *Backend) handshake() error {
	r := b.br
	var ver [12]byte
	if _, err := io.ReadFull(r, ver[:]); err != nil {
		return b.handshakeErr("read the protocol version", err)
	}
	major, minor, err := parseVersion(ver[:])
	if err != nil {
		return fmt.Errorf("vnc: %s did not greet with an RFB protocol version (%q): check that the address is a VNC server and not another service", b.addr, ver[:])
	}
	if major < 3 || major == 3 && minor < 3 {
		return fmt.Errorf("vnc: %s speaks RFB %d.%d, which this client does not support (3.3, 3.7 or 3.8 needed)", b.addr, major, minor)
	}
	// A client answers with the highest version it speaks that is not above the
	// server's (RFC 6143 section 7.1.1). Servers announcing 4.x or 5.x (Intel
	// AMT KVM, RealVNC 4.6 and later) accept 3.8.
	switch {
	case major > 3 || minor >= 8:
		minor = 8
	case minor >= 7:
		minor = 7
	default:
		minor = 3 // 3.4-3.6 are to be treated as 3.3 (RFC 6143 section 7.1.1)
	}
	b.version = "3." + strconv.Itoa(minor)
	if _, err := fmt.Fprintf(b.conn, "RFB 003.%03d\n", minor); err != nil {
		return b.handshakeErr("send the protocol version", err)
	}

	sec, err := b.negotiateSecurity(minor)
	if err != nil {
		return err
	}
	switch sec {
	case secNone:
		b.security = "None"
	case secVNCAuth:
		b.security = "VNC Authentication"
		if err := b.vncAuth(); err != nil {
			return err
		}
	}
	// SecurityResult: always with 3.8, only after VNC Authentication before.
	if minor >= 8 || sec == secVNCAuth {
		var res [4]byte
		if _, err := io.ReadFull(r, res[:]); err != nil {
			return b.handshakeErr("read the security result", err)
		}
		if binary.BigEndian.Uint32(res[:]) != 0 {
			reason := ""
			if minor >= 8 {
				reason, _ = b.readString(1 << 16)
			}
			return b.authFailed(sec, reason)
		}
	}

	// ClientInit: shared, so other viewers stay connected.
	if _, err := b.conn.Write([]byte{1}); err != nil {
		return b.handshakeErr("send ClientInit", err)
	}
	var si [24]byte
	if _, err := io.ReadFull(r, si[:]); err != nil {
		return b.handshakeErr("read ServerInit", err)
	}
	w, h := int(binary.BigEndian.Uint16(si[0:])), int(binary.BigEndian.Uint16(si[2:]))
	name, err := b.readStringAt(si[20:24], 1<<16)
	if err != nil {
		return b.handshakeErr("read the desktop name", err)
	}
	b.name = strings.ToValidUTF8(name, "?")
	b.fb = newFramebuffer(w, h)

	if err := b.writeMsg(setPixelFormatMsg()); err != nil {
		return b.handshakeErr("send SetPixelFormat", err)
	}
	if err := b.writeMsg(setEncodingsMsg(encRaw, encCopyRect, encDesktopSize, encCursor, encExtendedClipboard)); err != nil {
		return b.handshakeErr("send SetEncodings", err)
	}
	return nil
}

// handshakeErr wraps an I/O error of the handshake with the address and a fix.
func (b *Backend) handshakeErr(step string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("vnc: %s closed the connection when asked to %s: the server may allow only one viewer, or limit which hosts may connect; check its log", b.addr, step)
	}
	return fmt.Errorf("vnc: could not %s with %s: %w", step, b.addr, err)
}

// parseVersion parses "RFB xxx.yyy\n".
func parseVersion(v []byte) (int, int, error) {
	s := string(v)
	if len(s) != 12 || !strings.HasPrefix(s, "RFB ") || s[7] != '.' || s[11] != '\n' {
		return 0, 0, errors.New("not an RFB version")
	}
	major, err1 := strconv.Atoi(s[4:7])
	minor, err2 := strconv.Atoi(s[8:11])
	if err1 != nil || err2 != nil {
		return 0, 0, errors.New("not an RFB version")
	}
	return major, minor, nil
}

// negotiateSecurity reads the server's security types and picks VNC
// Authentication when a password is set and offered, else None.
func (b *Backend) negotiateSecurity(minor int) (byte, error) {
	r := b.br
	if minor == 3 { // the server decides: one U32
		var t [4]byte
		if _, err := io.ReadFull(r, t[:]); err != nil {
			return 0, b.handshakeErr("read the security type", err)
		}
		typ := binary.BigEndian.Uint32(t[:])
		switch typ {
		case secInvalid:
			reason, _ := b.readString(1 << 16)
			return 0, fmt.Errorf("vnc: %s refused the connection: %s", b.addr, printable(reason))
		case secNone:
			return secNone, nil
		case secVNCAuth:
			if b.opts.Password == "" {
				return 0, fmt.Errorf("vnc: %s requires a password: %w; give the VNC password", b.addr, ErrAuthFailed)
			}
			return secVNCAuth, nil
		}
		return 0, fmt.Errorf("vnc: %s requires security type %d, which this client does not support (only None and VNC Authentication): configure the server to offer VNC Authentication", b.addr, typ)
	}
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return 0, b.handshakeErr("read the security types", err)
	}
	if n[0] == 0 {
		reason, _ := b.readString(1 << 16)
		return 0, fmt.Errorf("vnc: %s refused the connection: %s", b.addr, printable(reason))
	}
	types := make([]byte, n[0])
	if _, err := io.ReadFull(r, types); err != nil {
		return 0, b.handshakeErr("read the security types", err)
	}
	has := func(t byte) bool { return strings.IndexByte(string(types), t) >= 0 }
	var pick byte
	switch {
	case has(secVNCAuth) && b.opts.Password != "":
		pick = secVNCAuth
	case has(secNone):
		pick = secNone
	case has(secVNCAuth):
		return 0, fmt.Errorf("vnc: %s requires a password: %w; give the VNC password", b.addr, ErrAuthFailed)
	default:
		return 0, fmt.Errorf("vnc: %s offers only security types %v; this client supports None (1) and VNC Authentication (2): enable one of them on the server (TigerVNC: -SecurityTypes VncAuth)", b.addr, types)
	}
	if _, err := b.conn.Write([]byte{pick}); err != nil {
		return 0, b.handshakeErr("choose the security type", err)
	}
	return pick, nil
}

// vncAuth answers the 16-byte DES challenge.
func (b *Backend) vncAuth() error {
	var ch [16]byte
	if _, err := io.ReadFull(b.br, ch[:]); err != nil {
		return b.handshakeErr("read the authentication challenge", err)
	}
	resp, err := vncAuthResponse(b.opts.Password, ch)
	if err != nil {
		return err
	}
	if _, err := b.conn.Write(resp[:]); err != nil {
		return b.handshakeErr("send the authentication response", err)
	}
	return nil
}

// authFailed builds the error for a failed SecurityResult.
func (b *Backend) authFailed(sec byte, reason string) error {
	msg := ""
	if reason != "" {
		msg = " (" + printable(reason) + ")"
	}
	if sec == secVNCAuth {
		return fmt.Errorf("vnc: %s rejected the password%s: %w; check the VNC password (only its first 8 characters count), and wait a little if the server blocks repeated failures", b.addr, msg, ErrAuthFailed)
	}
	return fmt.Errorf("vnc: %s rejected the connection%s: %w; the server may require a password", b.addr, msg, ErrAuthFailed)
}

// readString reads a U32 length and that many bytes (at most limit).
func (b *Backend) readString(limit int) (string, error) {
	var n [4]byte
	if _, err := io.ReadFull(b.br, n[:]); err != nil {
		return "", err
	}
	return b.readStringAt(n[:], limit)
}

func (b *Backend) readStringAt(n []byte, limit int) (string, error) {
	l := binary.BigEndian.Uint32(n)
	if l > uint32(limit) {
		return "", fmt.Errorf("string of %d bytes is longer than the %d allowed", l, limit)
	}
	buf := make([]byte, l)
	if _, err := io.ReadFull(b.br, buf); err != nil {
		return "", err
	}
	return string(buf), nil
}

// printable makes a server-supplied reason safe to show.
func printable(s string) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if s == "" {
		return "no reason given"
	}
	return s
}

// reverseBits reverses the bit order of a byte: VNC Authentication uses the
// password bytes as a DES key with each byte mirrored.
func reverseBits(c byte) byte {
	c = c>>4 | c<<4
	c = (c&0xcc)>>2 | (c&0x33)<<2
	c = (c&0xaa)>>1 | (c&0x55)<<1
	return c
}

// vncDESKey returns the DES key VNC derives from a password: its first 8
// bytes, zero padded, each byte bit-reversed.
func vncDESKey(password []byte) [8]byte {
	var k [8]byte
	copy(k[:], password)
	for i := range k {
		k[i] = reverseBits(k[i])
	}
	return k
}

// vncAuthResponse encrypts the challenge (two DES-ECB blocks) with the key
// derived from password.
func vncAuthResponse(password string, challenge [16]byte) ([16]byte, error) {
	var out [16]byte
	k := vncDESKey([]byte(password))
	c, err := des.NewCipher(k[:])
	if err != nil {
		return out, fmt.Errorf("vnc: DES key: %w", err)
	}
	c.Encrypt(out[0:8], challenge[0:8])
	c.Encrypt(out[8:16], challenge[8:16])
	return out, nil
}

// obfuscationKey is the fixed key VNC servers use for stored password files
// (the ~/.vnc/passwd format written by vncpasswd).
var obfuscationKey = [8]byte{23, 82, 107, 6, 35, 78, 88, 7}

// ObfuscatedPassword returns password in the stored format of VNC password
// files (vncpasswd -f): its first 8 bytes, zero padded, DES-encrypted with the
// fixed VNC key. It is obfuscation, not protection.
func ObfuscatedPassword(password string) []byte {
	var k [8]byte
	for i, c := range obfuscationKey {
		k[i] = reverseBits(c)
	}
	c, _ := des.NewCipher(k[:]) // an 8-byte key never fails
	var in [8]byte
	copy(in[:], password)
	out := make([]byte, 8)
	c.Encrypt(out, in[:])
	return out
}

// newFramebuffer returns an opaque black w x h image.
func newFramebuffer(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 0xff
	}
	return img
}
