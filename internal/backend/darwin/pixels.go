package darwin

import (
	"encoding/binary"
	"fmt"
	"image"
)

// CGBitmapInfo fields.
const (
	alphaInfoMask  uint32 = 0x1F
	alphaNone      uint32 = 0
	alphaPremLast  uint32 = 1
	alphaPremFirst uint32 = 2
	alphaLast      uint32 = 3
	alphaFirst     uint32 = 4
	alphaSkipLast  uint32 = 5
	alphaSkipFirst uint32 = 6

	floatComponents uint32 = 0x100

	byteOrderMask     uint32 = 0x7000
	byteOrderDefault  uint32 = 0
	byteOrder16Little uint32 = 0x1000
	byteOrder32Little uint32 = 0x2000
	byteOrder32Big    uint32 = 0x4000

	pixelFormatMask      uint32 = 0xF0000
	pixelFormatPacked    uint32 = 0
	pixelFormatRGB101010 uint32 = 0x30000
)

// pixelLayout describes the bytes of a CGImage as CoreGraphics reports them.
type pixelLayout struct {
	bitsPerPixel, bitsPerComponent int
	bitmapInfo                     uint32
}

// String describes l for error messages.
func (l pixelLayout) String() string {
	return fmt.Sprintf("%d bits per pixel, %d per component, bitmap info %#x", l.bitsPerPixel, l.bitsPerComponent, l.bitmapInfo)
}

// convertPixels writes the w x h image in src (rows bytesPerRow apart, in
// layout l) into dst, which must be w x h, as opaque RGBA. It supports the
// formats macOS display captures use: 8-bit RGB with alpha or padding first
// or last in either byte order, 24-bit RGB, and 10-bit packed RGB.
func convertPixels(dst *image.RGBA, src []byte, w, h, bytesPerRow int, l pixelLayout) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("macOS capture: the image is %dx%d", w, h)
	}
	if dst.Rect.Dx() != w || dst.Rect.Dy() != h {
		return fmt.Errorf("macOS capture: internal error: destination is %v, image is %dx%d", dst.Rect, w, h)
	}
	bpp := l.bitsPerPixel / 8
	if bpp <= 0 || bytesPerRow < w*bpp || len(src) < (h-1)*bytesPerRow+w*bpp {
		return fmt.Errorf("macOS capture: %d bytes are too few for a %dx%d image with %d bytes per row (%v)", len(src), w, h, bytesPerRow, l)
	}
	if l.bitmapInfo&floatComponents != 0 {
		return fmt.Errorf("macOS capture: floating-point pixels (%v) are not supported: set the display to a standard (non-HDR) colour mode", l)
	}
	alpha := l.bitmapInfo & alphaInfoMask
	order := l.bitmapInfo & byteOrderMask
	format := l.bitmapInfo & pixelFormatMask
	switch {
	case l.bitsPerPixel == 32 && l.bitsPerComponent == 8 && format == pixelFormatPacked:
		ri, gi, bi, err := byteOffsets(alpha, order)
		if err != nil {
			return fmt.Errorf("%w (%v)", err, l)
		}
		if ri == 2 && gi == 1 && bi == 0 { // BGRA in memory: what macOS captures give
			for y := range h {
				convertBGRARow(dst.Pix[y*dst.Stride:y*dst.Stride+w*4], src[y*bytesPerRow:y*bytesPerRow+w*4])
			}
			return nil
		}
		for y := range h {
			s := src[y*bytesPerRow : y*bytesPerRow+w*4]
			d := dst.Pix[y*dst.Stride : y*dst.Stride+w*4]
			for x := 0; x < len(s); x += 4 {
				d[x], d[x+1], d[x+2], d[x+3] = s[x+ri], s[x+gi], s[x+bi], 0xFF
			}
		}
		return nil
	case l.bitsPerPixel == 24 && l.bitsPerComponent == 8 && format == pixelFormatPacked:
		for y := range h {
			s := src[y*bytesPerRow : y*bytesPerRow+w*3]
			d := dst.Pix[y*dst.Stride : y*dst.Stride+w*4]
			for x, o := 0, 0; x < len(s); x, o = x+3, o+4 {
				d[o], d[o+1], d[o+2], d[o+3] = s[x], s[x+1], s[x+2], 0xFF
			}
		}
		return nil
	case l.bitsPerPixel == 32 && l.bitsPerComponent == 10:
		var shift uint
		switch alpha {
		case alphaFirst, alphaSkipFirst, alphaPremFirst, alphaNone:
			shift = 0 // 2 spare bits on top: xxRRRRRRRRRRGGGGGGGGGGBBBBBBBBBB
		case alphaLast, alphaSkipLast, alphaPremLast:
			shift = 2 // RRRRRRRRRRGGGGGGGGGGBBBBBBBBBBxx
		default:
			return fmt.Errorf("macOS capture: unsupported alpha layout in a 10-bit image (%v)", l)
		}
		var bo binary.ByteOrder = binary.BigEndian
		if order == byteOrder32Little || order == byteOrder16Little {
			bo = binary.LittleEndian
		}
		for y := range h {
			s := src[y*bytesPerRow : y*bytesPerRow+w*4]
			d := dst.Pix[y*dst.Stride : y*dst.Stride+w*4]
			for x := 0; x < len(s); x += 4 {
				v := bo.Uint32(s[x:]) >> shift
				d[x], d[x+1], d[x+2], d[x+3] = byte(v>>22), byte(v>>12), byte(v>>2), 0xFF
			}
		}
		return nil
	}
	return fmt.Errorf("macOS capture: unsupported pixel format (%v): set the display to a standard colour profile or report this format", l)
}

// byteOffsets returns where red, green and blue sit in each 4-byte pixel of
// an 8-bit image with the given alpha position and byte order.
func byteOffsets(alpha, order uint32) (r, g, b int, err error) {
	// Component order as a big-endian 32-bit word.
	switch alpha {
	case alphaFirst, alphaSkipFirst, alphaPremFirst:
		r, g, b = 1, 2, 3
	case alphaLast, alphaSkipLast, alphaPremLast, alphaNone:
		r, g, b = 0, 1, 2
	default:
		return 0, 0, 0, fmt.Errorf("macOS capture: unsupported alpha layout %d", alpha)
	}
	switch order {
	case byteOrderDefault, byteOrder32Big:
	case byteOrder32Little:
		r, g, b = 3-r, 3-g, 3-b
	default:
		return 0, 0, 0, fmt.Errorf("macOS capture: unsupported byte order %#x for 32-bit pixels", order)
	}
	return r, g, b, nil
}

// convertBGRARow swaps blue and red of one row of 4-byte pixels and makes
// them opaque, one 32-bit word per pixel.
func convertBGRARow(d, s []byte) {
	d = d[:len(s)]
	for x := 0; x+4 <= len(s); x += 4 {
		v := binary.LittleEndian.Uint32(s[x:])
		binary.LittleEndian.PutUint32(d[x:], 0xFF000000|v&0x0000FF00|(v>>16)&0xFF|(v&0xFF)<<16)
	}
}
