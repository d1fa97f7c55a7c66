package vnc

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// Password files written by TigerVNC's vncpasswd -f for known passwords.
func TestObfuscatedPasswordMatchesVncpasswd(t *testing.T) {
	for pw, want := range map[string]string{
		"secret12":  "24b5ae4ce15503c6",
		"pw":        "45d011ed9ab348f4",
		"secret12x": "24b5ae4ce15503c6", // only 8 bytes count
	} {
		if got := hex.EncodeToString(ObfuscatedPassword(pw)); got != want {
			t.Errorf("ObfuscatedPassword(%q) = %s, want vncpasswd's %s", pw, got, want)
		}
	}
}

func TestReverseBits(t *testing.T) {
	for in, want := range map[byte]byte{0x01: 0x80, 0x80: 0x01, 0x0f: 0xf0, 0xa5: 0xa5, 0x12: 0x48, 0xff: 0xff, 0: 0} {
		if got := reverseBits(in); got != want {
			t.Errorf("reverseBits(%#02x) = %#02x, want %#02x", in, got, want)
		}
	}
}

// The VNC challenge response is DES with the mirrored password bytes as the
// key; a response must depend on the password and on both challenge halves.
func TestVNCAuthResponse(t *testing.T) {
	var ch [16]byte
	for i := range ch {
		ch[i] = byte(i * 17)
	}
	a, err := vncAuthResponse("secret12", ch)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := vncAuthResponse("secret13", ch)
	if a == b {
		t.Error("different passwords gave the same response")
	}
	if bytes.Equal(a[:8], a[8:]) {
		t.Error("the two challenge halves gave the same block")
	}
	c, _ := vncAuthResponse("secret12-and-more", ch)
	if a != c {
		t.Error("characters after the 8th changed the response; VNC Authentication uses only 8")
	}
	// The key is the password's bytes, each mirrored: "p" 0x70 -> 0x0e, "w" 0x77 -> 0xee.
	k := vncDESKey([]byte("password"))
	if got := hex.EncodeToString(k[:]); got != "0e86ceceeef64e26" {
		t.Errorf("mirrored key of %q = %s", "password", got)
	}
}
