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
		if fix := int(ws[big]) + 256 - sum; fix >= 0 {
			ws[big] = uint16(fix) // weights sum to exactly 256
			continue
		}
		// Very strong reductions (over ~85:1) round many small weights up; then
		// round the cumulative sum instead, which keeps every weight >= 0.
		clear(ws)
		cum := 0.0
		lo := 0
		for k, t := range ts {
			cum += t.w
			hi := min(256, int(math.Round(cum*256)))
			if k == len(ts)-1 {
				hi = 256
			}
			ws[t.j-s] += uint16(hi - lo)
			lo = hi
		}
	}
	return a
}

// spread moves the four bytes of v (R, G, B, A) into the 16-bit lanes of a
// uint64 (in the order R, B, G, A) so one multiply scales all channels (SWAR);
// pack is its inverse for lanes holding 8.8 fixed-point values. Lanes never
// carry into each other: weights sum to 256, so a lane stays below 65536.
func spread(v uint32) uint64 {
	t := uint64(v)
	return (t | t<<24) & laneMask
}

func pack(a uint64) uint32 {
	a = (a >> 8) & laneMask
	return uint32(a | a>>24)
}

const (
	laneMask   = 0x00ff00ff00ff00ff
	roundLanes = 0x0080008000800080
)

// scaler resamples RGBA images, caching kernels and the per-band row rings.
// Not safe for concurrent use.
type scaler struct {
	h, v  *axisWeights
	rings [][]uint64 // one ring of v.taps horizontally scaled rows per band
}

// Scale resamples src into dst (any bounds; dst's size is the target size). It
// treats pixels as opaque.
//
// The two 1-D passes are fused: each band of output rows keeps a small ring of
// horizontally scaled source rows (in spread form, see spread) and scales each
// source row once, so the image is read once and no full-size intermediate is
// written; the ring stays in the L1/L2 cache.
func (s *scaler) Scale(dst, src *image.RGBA) {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dw, dh := dst.Rect.Dx(), dst.Rect.Dy()
	if sw <= 0 || sh <= 0 || dw <= 0 || dh <= 0 {
		return
	}
	if sw == dw && sh == dh {
		parallelRows(dh, rowBands(dh), func(_, y0, y1 int) {
			for y := y0; y < y1; y++ {
				copy(dst.Pix[y*dst.Stride:y*dst.Stride+dw*4], src.Pix[y*src.Stride:y*src.Stride+sw*4])
			}
		})
		return
	}
	if sw == 2*dw && sh == 2*dh { // exact 2:1 (HiDPI, 4K to 1080p): 2x2 box average
		parallelRows(dh, rowBands(dh), func(_, y0, y1 int) {
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
	bands := rowBands(dh)
	ringN := s.v.taps * dw
	for len(s.rings) < bands {
		s.rings = append(s.rings, nil)
	}
	for b := range bands {
		if cap(s.rings[b]) < ringN {
			s.rings[b] = make([]uint64, ringN)
		}
		s.rings[b] = s.rings[b][:ringN]
	}
	parallelRows(dh, bands, func(band, y0, y1 int) {
		s.band(dst, src, s.rings[band], y0, y1)
	})
}

// band computes output rows [y0, y1) of dst.
func (s *scaler) band(dst, src *image.RGBA, ring []uint64, y0, y1 int) {
	sw, dw := src.Rect.Dx(), dst.Rect.Dx()
	taps := s.v.taps
	var rowsArr [8][]uint64
	rows := rowsArr[:0]
	if taps > len(rowsArr) {
		rows = make([][]uint64, 0, taps)
	}
	next := 0 // first source row not yet in the ring
	for y := y0; y < y1; y++ {
		s0 := int(s.v.start[y])
		next = max(next, s0)
		for ; next < s0+taps; next++ {
			out := ring[(next%taps)*dw : (next%taps+1)*dw]
			in := src.Pix[next*src.Stride : next*src.Stride+sw*4]
			if sw == dw {
				spreadRow(out, in)
			} else {
				horizontal(out, in, s.h)
			}
		}
		rows = rows[:0]
		for k := range taps {
			j := (s0 + k) % taps
			rows = append(rows, ring[j*dw:(j+1)*dw])
		}
		vertical(dst.Pix[y*dst.Stride:y*dst.Stride+dw*4], rows, s.v.w[y*taps:(y+1)*taps])
	}
}

// half2x averages 2x2 blocks of rows r0 and r1 into out (n pixels).
func half2x(out, r0, r1 []byte, n int) {
	r0, r1, out = r0[:n*8], r1[:n*8], out[:n*4]
	for x := range n {
		p0, p1 := r0[x*8:x*8+8:x*8+8], r1[x*8:x*8+8:x*8+8]
		a := spread(binary.LittleEndian.Uint32(p0)) + spread(binary.LittleEndian.Uint32(p0[4:])) +
			spread(binary.LittleEndian.Uint32(p1)) + spread(binary.LittleEndian.Uint32(p1[4:]))
		binary.LittleEndian.PutUint32(out[x*4:], pack((a+0x0002000200020002)<<6))
	}
}

// spreadRow converts a row of RGBA pixels to spread form unchanged.
func spreadRow(out []uint64, in []byte) {
	in = in[:len(out)*4]
	for x := range out {
		out[x] = spread(binary.LittleEndian.Uint32(in[x*4:]))
	}
}

// horizontal resamples the RGBA row in to len(out) pixels in spread form, each
// lane rounded to 8 bits.
func horizontal(out []uint64, in []byte, a *axisWeights) {
	taps := a.taps
	st := a.start[:len(out)]
	switch taps {
	case 2:
		ws := a.w[:2*len(st)]
		for x, s := range st {
			p := in[int(s)*4 : int(s)*4+8 : int(s)*4+8]
			w := ws[2*x : 2*x+2 : 2*x+2]
			acc := spread(binary.LittleEndian.Uint32(p))*uint64(w[0]) +
				spread(binary.LittleEndian.Uint32(p[4:]))*uint64(w[1])
			out[x] = (acc + roundLanes) >> 8 & laneMask
		}
	case 3:
		ws := a.w[:3*len(st)]
		for x, s := range st {
			p := in[int(s)*4 : int(s)*4+12 : int(s)*4+12]
			w := ws[3*x : 3*x+3 : 3*x+3]
			acc := spread(binary.LittleEndian.Uint32(p))*uint64(w[0]) +
				spread(binary.LittleEndian.Uint32(p[4:]))*uint64(w[1]) +
				spread(binary.LittleEndian.Uint32(p[8:]))*uint64(w[2])
			out[x] = (acc + roundLanes) >> 8 & laneMask
		}
	default:
		for x, s := range st {
			ws := a.w[x*taps : x*taps+taps]
			p := in[int(s)*4 : int(s)*4+taps*4]
			var acc uint64
			for k, w := range ws {
				acc += spread(binary.LittleEndian.Uint32(p[k*4:])) * uint64(w)
			}
			out[x] = (acc + roundLanes) >> 8 & laneMask
		}
	}
}

// vertical combines rows (spread form, len(ws) of them) with weights ws into the
// RGBA row out.
func vertical(out []byte, rows [][]uint64, ws []uint16) {
	n := len(out) / 4
	out = out[:n*4]
	switch len(ws) {
	case 1:
		r0 := rows[0][:n]
		for i, v := range r0 {
			binary.LittleEndian.PutUint32(out[i*4:], pack(v<<8))
		}
	case 2:
		r0, r1 := rows[0][:n], rows[1][:n]
		w0, w1 := uint64(ws[0]), uint64(ws[1])
		for i, v := range r0 {
			binary.LittleEndian.PutUint32(out[i*4:], pack(v*w0+r1[i]*w1+roundLanes))
		}
	case 3:
		r0, r1, r2 := rows[0][:n], rows[1][:n], rows[2][:n]
		w0, w1, w2 := uint64(ws[0]), uint64(ws[1]), uint64(ws[2])
		for i, v := range r0 {
			binary.LittleEndian.PutUint32(out[i*4:], pack(v*w0+r1[i]*w1+r2[i]*w2+roundLanes))
		}
	default:
		for i := range n {
			var acc uint64
			for k, w := range ws {
				acc += rows[k][i] * uint64(w)
			}
			binary.LittleEndian.PutUint32(out[i*4:], pack(acc+roundLanes))
		}
	}
}

// rowBands is the number of bands parallelRows splits n rows into.
func rowBands(n int) int {
	return min(runtime.GOMAXPROCS(0), 8, max(1, n/64))
}

// parallelRows splits [0,n) into at most bands bands, runs f on each (band is
// the band's index, below bands) on its own goroutine, the first on the
// caller's, and waits.
func parallelRows(n, bands int, f func(band, y0, y1 int)) {
	if bands <= 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	size := (n + bands - 1) / bands
	for b := 1; b*size < n; b++ {
		wg.Go(func() { f(b, b*size, min((b+1)*size, n)) })
	}
	f(0, 0, min(size, n))
	wg.Wait()
}
