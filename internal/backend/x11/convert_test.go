package x11

import (
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
)

func TestConvertBGRX(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 17} {
		src := make([]byte, 4*n)
		for i := range src {
			src[i] = byte(i*37 + 11)
		}
		dst := make([]byte, len(src))
		convertBGRX(dst, src)
		for p := 0; p < n; p++ {
			b, g, r := src[4*p], src[4*p+1], src[4*p+2]
			if got := [4]byte(dst[4*p : 4*p+4]); got != [4]byte{r, g, b, 0xff} {
				t.Fatalf("n=%d pixel %d: got %v from BGRX %v, want %v", n, p, got, src[4*p:4*p+4], [4]byte{r, g, b, 0xff})
			}
		}
	}
}

func BenchmarkConvertBGRX1080(b *testing.B) {
	src := make([]byte, 1920*1080*4)
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		convertBGRX(dst, src)
	}
}

func TestKeyNames(t *testing.T) {
	if _, err := keyKeysym("NoSuchKey"); err == nil {
		t.Error("keyKeysym accepted an unknown key name")
	}
	for _, k := range []string{"Return", "F12", "Control_L", "a", "!", "é", "世"} {
		s, err := keyKeysym(desktop.Key(k))
		if err != nil {
			t.Fatalf("keyKeysym(%q): %v", k, err)
		}
		back, ok := KeysymKey(s)
		if !ok || string(back) != k {
			t.Errorf("KeysymKey(keyKeysym(%q)) = %q, %v", k, back, ok)
		}
	}
}
