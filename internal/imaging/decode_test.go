package imaging

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"runtime"
	"testing"
)

// pngHeaderOnly returns a PNG that announces w x h 8-bit gray pixels but
// carries almost no data, as a PNG bomb's header does.
func pngHeaderOnly(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc.Sum32())
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8] = 8 // bit depth; colour type 0 (gray)
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

func encodePNG(t testing.TB, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDecodeLimitedRefusesBombWithoutAllocating holds hole 3 of issue 9: a
// PNG announcing 31000x31000 pixels is refused from its header, without
// allocating its 3.8 GB of pixels.
func TestDecodeLimitedRefusesBombWithoutAllocating(t *testing.T) {
	bomb := pngHeaderOnly(31000, 31000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := DecodeLimited(bomb, 1920, 1080)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrImageTooLarge) {
		t.Fatalf("DecodeLimited(31000x31000 PNG) = %v, want ErrImageTooLarge", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("refusing the bomb allocated %d bytes, want under 1 MiB", n)
	}
	if _, err := Decode(bomb); !errors.Is(err, ErrImageTooLarge) {
		t.Errorf("Decode(31000x31000 PNG) = %v, want ErrImageTooLarge (over MaxDecodeSide)", err)
	}
}

func TestDecodeLimitedAcceptsWithinAndRefusesPastEachSide(t *testing.T) {
	data := encodePNG(t, 40, 30)
	img, err := DecodeLimited(data, 40, 30)
	if err != nil || img.Bounds().Dx() != 40 || img.Bounds().Dy() != 30 {
		t.Fatalf("40x30 within 40x30: %v, %v", img, err)
	}
	for _, max := range [][2]int{{39, 30}, {40, 29}} {
		if _, err := DecodeLimited(data, max[0], max[1]); !errors.Is(err, ErrImageTooLarge) {
			t.Errorf("40x30 within %dx%d: err %v, want ErrImageTooLarge", max[0], max[1], err)
		}
	}
	var gif bytes.Buffer
	gif.WriteString("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	if _, err := DecodeLimited(gif.Bytes(), 10, 10); err == nil {
		t.Error("a GIF was accepted")
	}
	if _, err := DecodeLimited(pngHeaderOnly(0, 5), 10, 10); err == nil {
		t.Error("a 0x5 PNG was accepted")
	}
}

// FuzzDecodeLimited checks that decoding any bytes as a template neither
// panics nor returns an image larger than allowed.
func FuzzDecodeLimited(f *testing.F) {
	f.Add(encodePNG(f, 3, 2), 4, 4)
	f.Add(pngHeaderOnly(31000, 31000), 1920, 1080)
	f.Add(pngHeaderOnly(8, 8), 16, 16)
	var j bytes.Buffer
	g := image.NewGray(image.Rect(0, 0, 9, 7))
	g.Set(1, 1, color.Gray{200})
	if err := jpeg.Encode(&j, g, nil); err != nil {
		f.Fatal(err)
	}
	f.Add(j.Bytes(), 9, 7)
	f.Fuzz(func(t *testing.T, data []byte, maxW, maxH int) {
		maxW, maxH = min(max(maxW, 0), 4096), min(max(maxH, 0), 4096)
		img, err := DecodeLimited(data, maxW, maxH)
		if err != nil {
			return
		}
		if b := img.Bounds(); b.Dx() > maxW || b.Dy() > maxH || b.Empty() {
			t.Fatalf("DecodeLimited returned %v, allowed %dx%d", b, maxW, maxH)
		}
	})
}
