package imaging

import (
	"encoding/binary"
	"image"
	"math"
	"runtime"
	"sync"
)

// axisWeights is a precomputed 1-D resampling kernel from srcN to dstN samples:
// output i is the sum over k < taps of src[start[i]+k] * w[i*taps+k] / 256.
// Downscaling averages the covered area (box filter); upscaling is bilinear.
type axisWeights struct {
	srcN, dstN int
	taps       int
	start      []int32
	w          []uint16
}

func newAxisWeights(srcN, dstN int) *axisWeights {
	a := &axisWeights{srcN: srcN, dstN: dstN, start: make([]int32, dstN)}
	type tap struct {
		j int
		w float64
	}
	all := make([][]tap, dstN)
	r := float64(srcN) / float64(dstN)
	for i := range dstN {
		var ts []tap
		add := func(j int, w float64) {
			j = min(max(j, 0), srcN-1)
			for k := range ts {
				if ts[k].j == j {
					ts[k].w += w
					return
				}
			}
			ts = append(ts, tap{j, w})
		}
		if dstN < srcN { // area average over [i*r, (i+1)*r)
			lo, hi := float64(i)*r, float64(i+1)*r
			for j := int(math.Floor(lo)); float64(j) < hi; j++ {
				ov := math.Min(hi, float64(j+1)) - math.Max(lo, float64(j))
				if ov > 1e-9 {
					add(j, ov/r)
				}
			}
		} else { // bilinear, pixel centres aligned
			c := (float64(i)+0.5)*r - 0.5
			j0 := math.Floor(c)
			f := c - j0
			add(int(j0), 1-f)
			add(int(j0)+1, f)
		}
		all[i] = ts
		a.taps = max(a.taps, ts[len(ts)-1].j-ts[0].j+1)
	}
	a.w = make([]uint16, dstN*a.taps)
	for i, ts := range all {
		s := min(ts[0].j, srcN-a.taps)
		a.start[i] = int32(s)
		ws := a.w[i*a.taps : (i+1)*a.taps]
		sum, big := 0, 0
		for _, t := range ts {
			v := int(math.Round(t.w * 256))
			ws[t.j-s] += uint16(v)
			sum += v
			if ws[t.j-s] > ws[big] {
				big = t.j - s
			}
		}
		ws[big] = uint16(int(ws[big]) + 256 - sum) // weights sum to exactly 256
	}
	return a
}

// spread moves the four bytes of v into 16-bit lanes so one multiply scales
// all channels (SWAR); pack is its inverse.
func spread(v uint32) uint64 {
	t := uint64(v)
	t = (t | t<<16) & 0x0000ffff0000ffff
	return (t | t<<8) & 0x00ff00ff00ff00ff
}

func pack(a uint64) uint32 {
	a = (a >> 8) & 0x00ff00ff00ff00ff
	a = (a | a>>8) & 0x0000ffff0000ffff
	return uint32(a | a>>16)
}

const roundLanes = 0x0080008000800080

// scaler resamples RGBA images, caching kernels and its intermediate buffer.
// Not safe for concurrent use.
type scaler struct {
	h, v *axisWeights
	tmp  []byte
}

// Scale resamples src into dst (any bounds; dst's size is the target size). It
// treats pixels as opaque.
func (s *scaler) Scale(dst, src *image.RGBA) {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dw, dh := dst.Rect.Dx(), dst.Rect.Dy()
	if sw <= 0 || sh <= 0 || dw <= 0 || dh <= 0 {
		return
	}
	if sw == dw && sh == dh {
		for y := range dh {
			copy(dst.Pix[y*dst.Stride:y*dst.Stride+dw*4], src.Pix[y*src.Stride:y*src.Stride+sw*4])
		}
		return
	}
	if sw == 2*dw && sh == 2*dh { // exact 2:1 (HiDPI, 4K to 1080p): 2x2 box average
		parallelRows(dh, func(y0, y1 int) {
			for y := y0; y < y1; y++ {
				half2x(dst.Pix[y*dst.Stride:y*dst.Stride+dw*4], src.Pix[2*y*src.Stride:], src.Pix[(2*y+1)*src.Stride:], dw)
			}
		})
		return
	}
	if s.h == nil || s.h.srcN != sw || s.h.dstN != dw {
		s.h = newAxisWeights(sw, dw)
	}
	if s.v == nil || s.v.srcN != sh || s.v.dstN != dh {
		s.v = newAxisWeights(sh, dh)
	}
	// Horizontal pass into tmp (sh rows of dw pixels), unless widths match.
	mid, midStride := src.Pix, src.Stride
	if sw != dw {
		need := sh * dw * 4
		if cap(s.tmp) < need {
			s.tmp = make([]byte, need)
		}
		s.tmp = s.tmp[:need]
		mid, midStride = s.tmp, dw*4
		parallelRows(sh, func(y0, y1 int) {
			for y := y0; y < y1; y++ {
				horizontal(s.tmp[y*dw*4:(y+1)*dw*4], src.Pix[y*src.Stride:y*src.Stride+sw*4], s.h)
			}
		})
	}
	// Vertical pass into dst.
	parallelRows(dh, func(y0, y1 int) {
		for y := y0; y < y1; y++ {
			out := dst.Pix[y*dst.Stride : y*dst.Stride+dw*4]
			if sh == dh {
				copy(out, mid[y*midStride:y*midStride+dw*4])
				continue
			}
			vertical(out, mid, midStride, s.v, y)
		}
	})
}

// half2x averages 2x2 blocks of rows r0 and r1 into out (n pixels).
func half2x(out, r0, r1 []byte, n int) {
	r0, r1 = r0[:n*8], r1[:n*8]
	for x := range n {
		a := spread(binary.LittleEndian.Uint32(r0[x*8:])) + spread(binary.LittleEndian.Uint32(r0[x*8+4:])) +
			spread(binary.LittleEndian.Uint32(r1[x*8:])) + spread(binary.LittleEndian.Uint32(r1[x*8+4:]))
		binary.LittleEndian.PutUint32(out[x*4:], pack((a+0x0002000200020002)<<6))
	}
}

func horizontal(out, in []byte, a *axisWeights) {
	taps := a.taps
	n := a.dstN
	out = out[:n*4]
	switch taps {
	case 2:
		ws := a.w[:n*2]
		for x := range n {
			s := int(a.start[x]) * 4
			p := in[s : s+8 : s+8]
			acc := spread(binary.LittleEndian.Uint32(p[0:]))*uint64(ws[2*x]) +
				spread(binary.LittleEndian.Uint32(p[4:]))*uint64(ws[2*x+1])
			binary.LittleEndian.PutUint32(out[x*4:], pack(acc+roundLanes))
		}
	case 3:
		ws := a.w[:n*3]
		for x := range n {
			s := int(a.start[x]) * 4
			p := in[s : s+12 : s+12]
			acc := spread(binary.LittleEndian.Uint32(p[0:]))*uint64(ws[3*x]) +
				spread(binary.LittleEndian.Uint32(p[4:]))*uint64(ws[3*x+1]) +
				spread(binary.LittleEndian.Uint32(p[8:]))*uint64(ws[3*x+2])
			binary.LittleEndian.PutUint32(out[x*4:], pack(acc+roundLanes))
		}
	default:
		for x := range n {
			s := int(a.start[x]) * 4
			ws := a.w[x*taps : x*taps+taps]
			src := in[s : s+taps*4]
			var acc uint64
			for k, w := range ws {
				acc += spread(binary.LittleEndian.Uint32(src[k*4:])) * uint64(w)
			}
			binary.LittleEndian.PutUint32(out[x*4:], pack(acc+roundLanes))
		}
	}
}

func vertical(out, mid []byte, stride int, a *axisWeights, y int) {
	taps := a.taps
	s := int(a.start[y])
	ws := a.w[y*taps : y*taps+taps]
	n := len(out)
	switch {
	case taps == 2:
		r0, r1 := mid[s*stride:s*stride+n], mid[(s+1)*stride:(s+1)*stride+n]
		w0, w1 := uint64(ws[0]), uint64(ws[1])
		for i := 0; i+4 <= n; i += 4 {
			acc := spread(binary.LittleEndian.Uint32(r0[i:]))*w0 + spread(binary.LittleEndian.Uint32(r1[i:]))*w1
			binary.LittleEndian.PutUint32(out[i:], pack(acc+roundLanes))
		}
	case taps == 3:
		r0, r1, r2 := mid[s*stride:s*stride+n], mid[(s+1)*stride:(s+1)*stride+n], mid[(s+2)*stride:(s+2)*stride+n]
		w0, w1, w2 := uint64(ws[0]), uint64(ws[1]), uint64(ws[2])
		for i := 0; i+4 <= n; i += 4 {
			acc := spread(binary.LittleEndian.Uint32(r0[i:]))*w0 + spread(binary.LittleEndian.Uint32(r1[i:]))*w1 +
				spread(binary.LittleEndian.Uint32(r2[i:]))*w2
			binary.LittleEndian.PutUint32(out[i:], pack(acc+roundLanes))
		}
	default:
		for i := 0; i+4 <= n; i += 4 {
			var acc uint64
			for k, w := range ws {
				if w != 0 {
					off := (s+k)*stride + i
					acc += spread(binary.LittleEndian.Uint32(mid[off:])) * uint64(w)
				}
			}
			binary.LittleEndian.PutUint32(out[i:], pack(acc+roundLanes))
		}
	}
}

// parallelRows splits [0,n) into bands run on up to GOMAXPROCS goroutines.
func parallelRows(n int, f func(y0, y1 int)) {
	workers := min(runtime.GOMAXPROCS(0), 8, max(1, n/64))
	if workers <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	band := (n + workers - 1) / workers
	for y0 := band; y0 < n; y0 += band {
		wg.Go(func() { f(y0, min(y0+band, n)) })
	}
	f(0, min(band, n))
	wg.Wait()
}
