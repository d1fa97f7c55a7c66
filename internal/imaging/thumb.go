package imaging

import (
	"image"
	"image/color"
)

// ThumbSide is the side of a Thumb in pixels.
const ThumbSide = 32

// Thumb is a 32x32 grayscale (luma) summary of an image, row-major, for cheap
// change detection between screenshots.
type Thumb [ThumbSide * ThumbSide]uint8

// ThumbOf returns the thumbnail of img: each cell is the mean luma of the
// pixels it covers (sampled on a grid of at most 256x256 points).
func ThumbOf(img image.Image) Thumb {
	if m, ok := img.(*image.RGBA); ok {
		sub := m
		if m.Rect.Min != (image.Point{}) {
			sub = &image.RGBA{Pix: m.Pix[m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y):], Stride: m.Stride,
				Rect: image.Rect(0, 0, m.Rect.Dx(), m.Rect.Dy())}
		}
		return thumbRGBA(sub, m.Rect.Dx(), m.Rect.Dy())
	}
	b := img.Bounds()
	var sum, cnt [ThumbSide * ThumbSide]uint32
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return Thumb{}
	}
	sx, sy := max(1, w/256), max(1, h/256)
	for y := 0; y < h; y += sy {
		cy := y * ThumbSide / h
		for x := 0; x < w; x += sx {
			g := color.GrayModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.Gray)
			c := cy*ThumbSide + x*ThumbSide/w
			sum[c] += uint32(g.Y)
			cnt[c]++
		}
	}
	return finishThumb(&sum, &cnt)
}

// thumbRGBA summarizes the w x h top-left part of m (bounds at 0,0).
func thumbRGBA(m *image.RGBA, w, h int) Thumb {
	var sum, cnt [ThumbSide * ThumbSide]uint32
	if w <= 0 || h <= 0 {
		return Thumb{}
	}
	sx, sy := max(1, w/256), max(1, h/256)
	for y := 0; y < h; y += sy {
		row := m.Pix[y*m.Stride : y*m.Stride+w*4]
		base := (y * ThumbSide / h) * ThumbSide
		cx, rem := 0, 0 // x*ThumbSide == cx*w + rem, without a division per sample
		for x := 0; x < w; x += sx {
			p := row[x*4 : x*4+3 : x*4+3]
			// ITU-R 601 luma in 16.16 fixed point.
			l := (19595*uint32(p[0]) + 38470*uint32(p[1]) + 7471*uint32(p[2]) + 1<<15) >> 16
			c := (base + cx) & (ThumbSide*ThumbSide - 1)
			sum[c] += l
			cnt[c]++
			for rem += sx * ThumbSide; rem >= w; rem -= w {
				cx++
			}
		}
	}
	return finishThumb(&sum, &cnt)
}

func finishThumb(sum, cnt *[ThumbSide * ThumbSide]uint32) Thumb {
	var t Thumb
	for i := range t {
		if cnt[i] > 0 {
			t[i] = uint8((sum[i] + cnt[i]/2) / cnt[i])
		}
	}
	// Images smaller than 32 px on a side leave empty cells: copy the cell from
	// the nearest filled row/column so the thumb stays a faithful summary.
	for i := range t {
		if cnt[i] == 0 {
			y, x := i/ThumbSide, i%ThumbSide
			for yy := y; yy >= 0; yy-- {
				found := false
				for xx := x; xx >= 0; xx-- {
					if cnt[yy*ThumbSide+xx] > 0 {
						t[i] = t[yy*ThumbSide+xx]
						found = true
						break
					}
				}
				if found {
					break
				}
			}
		}
	}
	return t
}

// Diff returns the mean absolute difference of a and b, from 0 (identical) to 1
// (black versus white everywhere).
func Diff(a, b Thumb) float64 {
	var s uint32
	for i := range a {
		d := int32(a[i]) - int32(b[i])
		if d < 0 {
			d = -d
		}
		s += uint32(d)
	}
	return float64(s) / float64(len(a)*255)
}
