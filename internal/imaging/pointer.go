package imaging

import "image"

// PointerHeight is the height in pixels of the arrow DrawPointer draws.
const PointerHeight = 16

// DrawPointer draws a small arrow (white, outlined in black) with its tip at
// (x, y) of img; the parts outside img are clipped.
func DrawPointer(img *image.RGBA, x, y int) {
	for dy := range PointerHeight {
		for dx := 0; dx <= dy*2/3; dx++ {
			var v byte = 255
			if dx == 0 || dx == dy*2/3 || dy == PointerHeight-1 {
				v = 0
			}
			if pt := image.Pt(x+dx, y+dy); pt.In(img.Rect) {
				i := img.PixOffset(pt.X, pt.Y)
				img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = v, v, v, 255
			}
		}
	}
}
