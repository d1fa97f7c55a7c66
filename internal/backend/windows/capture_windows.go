package windows

import (
	"context"
	"fmt"
	"image"
	"unsafe"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// bitmapInfo is BITMAPINFO with room for the three colour masks GetDIBits may
// write after the header.
type bitmapInfo struct {
	Size          uint32
	Width         int32
	Height        int32
	Planes        uint16
	BitCount      uint16
	Compression   uint32
	SizeImage     uint32
	XPelsPerMeter int32
	YPelsPerMeter int32
	ClrUsed       uint32
	ClrImportant  uint32
	Colors        [4]uint32
}

const (
	srcCopy       = 0x00CC0020
	captureBlt    = 0x40000000 // include layered windows
	biRGB         = 0
	dibRGBColors  = 0
	bitmapHdrSize = 40 // sizeof(BITMAPINFOHEADER)
)

// Capture grabs region (global logical pixels, inside one display) at the
// display's physical resolution into dst when its buffer is large enough,
// else into a new image. It copies the screen with GDI (BitBlt with
// CAPTUREBLT, so layered windows are included) and reads the pixels as a
// top-down 32-bit DIB straight into the image, then swaps BGRA to RGBA in
// place. Every GDI object is released on every path.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	l, err := b.currentLayout(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := l.physicalRegion(region)
	if err != nil {
		return nil, err
	}
	img := desktop.ReuseRGBA(dst, pr.W, pr.H)
	b.capMu.Lock()
	defer b.capMu.Unlock()
	if err := gdiCapture(pr, img.Pix); err != nil {
		return nil, err
	}
	bgraToRGBA(img.Pix)
	return img, nil
}

// gdiCapture copies the physical rectangle pr of the screen into pix as
// top-down BGRA rows of pr.W*4 bytes.
func gdiCapture(pr physRect, pix []byte) (err error) {
	if len(pix) < pr.W*pr.H*4 {
		return fmt.Errorf("windows capture: buffer of %d bytes is too small for %dx%d pixels", len(pix), pr.W, pr.H)
	}
	screen, _, e := procGetDC.Call(0)
	if screen == 0 {
		return fmt.Errorf("%w (is the session locked or disconnected? the screen is only readable on the interactive desktop)", callErr("GetDC", e))
	}
	defer procReleaseDC.Call(0, screen)

	mem, _, e := procCreateCompatibleDC.Call(screen)
	if mem == 0 {
		return callErr("CreateCompatibleDC", e)
	}
	defer procDeleteDC.Call(mem)

	bmp, _, e := procCreateCompatibleBitmap.Call(screen, uintptr(pr.W), uintptr(pr.H))
	if bmp == 0 {
		return fmt.Errorf("%w (a %dx%d bitmap: out of GDI memory?)", callErr("CreateCompatibleBitmap", e), pr.W, pr.H)
	}
	defer procDeleteObject.Call(bmp)

	old, _, e := procSelectObject.Call(mem, bmp)
	if old == 0 {
		return callErr("SelectObject", e)
	}
	r, _, e := procBitBlt.Call(mem, 0, 0, uintptr(pr.W), uintptr(pr.H), screen,
		uintptr(int32(pr.X)), uintptr(int32(pr.Y)), srcCopy|captureBlt)
	// The bitmap must not be selected into a DC when GetDIBits reads it.
	procSelectObject.Call(mem, old)
	if r == 0 {
		return fmt.Errorf("%w (the secure desktop, such as a UAC prompt or the lock screen, cannot be captured)", callErr("BitBlt", e))
	}

	bi := bitmapInfo{Size: bitmapHdrSize, Width: int32(pr.W), Height: -int32(pr.H), Planes: 1, BitCount: 32, Compression: biRGB}
	lines, _, e := procGetDIBits.Call(mem, bmp, 0, uintptr(pr.H),
		uintptr(unsafe.Pointer(&pix[0])), uintptr(unsafe.Pointer(&bi)), dibRGBColors)
	if lines == 0 {
		return callErr("GetDIBits", e)
	}
	if int(lines) != pr.H {
		return fmt.Errorf("windows GetDIBits copied %d of %d rows", lines, pr.H)
	}
	return nil
}
