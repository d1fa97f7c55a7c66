package wayland

import (
	"encoding/binary"
	"image"
)

// wl_shm formats (argb8888 and xrgb8888 have codes of their own; the others
// are DRM fourcc codes).
const (
	fmtARGB8888 = 0
	fmtXRGB8888 = 1
	fmtABGR8888 = 0x34324241 // "AB24"
	fmtXBGR8888 = 0x34324258 // "XB24"
)

func knownFormat(f uint32) bool {
	switch f {
	case fmtARGB8888, fmtXRGB8888, fmtABGR8888, fmtXBGR8888:
		return true
	}
	return false
}

// convert writes the frame in src (f's format, stride and orientation) into
// img (f.w x f.h), opaque: the alpha of a screen capture means nothing.
func convert(img *image.RGBA, src []byte, f frameFormat) {
	swap := f.format == fmtARGB8888 || f.format == fmtXRGB8888 // B,G,R,A in memory
	for y := 0; y < f.h; y++ {
		sy := y
		if f.yInvert {
			sy = f.h - 1 - y
		}
		row := src[sy*f.stride : sy*f.stride+f.w*4]
		out := img.Pix[y*img.Stride : y*img.Stride+f.w*4]
		if !swap {
			copy(out, row)
			for i := 3; i < len(out); i += 4 {
				out[i] = 0xff
			}
			continue
		}
		for i := 0; i+4 <= len(row); i += 4 {
			v := binary.LittleEndian.Uint32(row[i:])
			binary.LittleEndian.PutUint32(out[i:], (v&0xff)<<16|(v>>16)&0xff|v&0xff00|0xff000000)
		}
	}
}
