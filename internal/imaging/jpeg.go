package imaging

import (
	"encoding/binary"
	"fmt"
	"image"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// jpegEncoder is a baseline JPEG encoder (4:2:0, Annex K tables) tuned for
// screenshots: a float AAN forward DCT, a fast path for flat blocks, and
// restart intervals so that bands of MCU rows are entropy-coded in parallel.
// The output is a standard JFIF file any decoder reads. Not safe for
// concurrent use; its buffers are reused between calls.
type jpegEncoder struct {
	quality int
	qLuma   [64]uint8   // zig-zag order, as written in DQT
	qChroma [64]uint8   // zig-zag order
	fLuma   [64]float32 // zig-zag order: 1/(q * AAN scale * 8)
	fChroma [64]float32 // zig-zag order
	segs    [][]byte
}

// aanScale[k] is the AAN DCT output scale of frequency k.
var aanScale = [8]float64{1, 1.387039845, 1.306562965, 1.175875602, 1, 0.785694958, 0.541196100, 0.275899379}

func (e *jpegEncoder) setQuality(q int) {
	if e.quality == q {
		return
	}
	e.quality = q
	scale := 200 - 2*q
	if q < 50 {
		scale = 5000 / q
	}
	for i := range 64 {
		for _, t := range []struct {
			base *[64]uint8
			zz   *[64]uint8
			f    *[64]float32
		}{{&stdQuantLuma, &e.qLuma, &e.fLuma}, {&stdQuantChroma, &e.qChroma, &e.fChroma}} {
			n := zigzag[i]
			v := (int(t.base[n])*scale + 50) / 100
			v = min(max(v, 1), 255)
			t.zz[i] = uint8(v)
			t.f[i] = float32(1 / (float64(v) * aanScale[n/8] * aanScale[n%8] * 8))
		}
	}
}

// Encode appends the JPEG encoding of m (whose bounds must start at 0,0) to dst.
func (e *jpegEncoder) Encode(dst []byte, m *image.RGBA, quality int) ([]byte, error) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	if w <= 0 || h <= 0 || w > 65535 || h > 65535 {
		return dst, fmt.Errorf("cannot encode a %dx%d image as JPEG: sides must be 1..65535 pixels", w, h)
	}
	if m.Rect.Min != (image.Point{}) {
		return dst, fmt.Errorf("jpeg: image bounds must start at (0,0), got %v", m.Rect)
	}
	e.setQuality(quality)
	mcuCols, mcuRows := (w+15)/16, (h+15)/16
	workers := min(runtime.GOMAXPROCS(0), 8)
	// Several segments per worker balance the load; the restart interval (MCUs per
	// segment) must fit in 16 bits.
	rowsPerSeg := max(1, (mcuRows+4*workers-1)/(4*workers))
	for rowsPerSeg*mcuCols > 65535 {
		rowsPerSeg--
	}
	rowsPerSeg = max(rowsPerSeg, 1)
	nSeg := (mcuRows + rowsPerSeg - 1) / rowsPerSeg
	for len(e.segs) < nSeg {
		e.segs = append(e.segs, nil)
	}

	var next atomic.Int32
	work := func() {
		for {
			s := int(next.Add(1)) - 1
			if s >= nSeg {
				return
			}
			y0 := s * rowsPerSeg
			e.segs[s] = e.encodeRows(e.segs[s][:0], m, y0, min(y0+rowsPerSeg, mcuRows), mcuCols)
		}
	}
	if workers > 1 && nSeg > 1 {
		var wg sync.WaitGroup
		for range min(workers, nSeg) - 1 {
			wg.Go(work)
		}
		work()
		wg.Wait()
	} else {
		work()
	}

	dst = e.header(dst, w, h, rowsPerSeg*mcuCols)
	for s := range nSeg {
		dst = append(dst, e.segs[s]...)
		if s < nSeg-1 {
			dst = append(dst, 0xff, 0xd0+byte(s%8))
		}
	}
	return append(dst, 0xff, 0xd9), nil
}

func (e *jpegEncoder) header(dst []byte, w, h, restart int) []byte {
	dst = append(dst, 0xff, 0xd8) // SOI
	// APP0 JFIF 1.01, no density, no thumbnail.
	dst = append(dst, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0)
	// DQT: two 8-bit tables.
	dst = append(dst, 0xff, 0xdb, 0, 2+2*65, 0)
	dst = append(dst, e.qLuma[:]...)
	dst = append(dst, 1)
	dst = append(dst, e.qChroma[:]...)
	// SOF0: 8-bit, 3 components, Y 2x2, Cb/Cr 1x1.
	dst = append(dst, 0xff, 0xc0, 0, 17, 8)
	dst = binary.BigEndian.AppendUint16(dst, uint16(h))
	dst = binary.BigEndian.AppendUint16(dst, uint16(w))
	dst = append(dst, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1)
	// DHT: the four Annex K tables.
	n := 2
	for _, s := range stdHuffSpecs {
		n += 17 + len(s.values)
	}
	dst = append(dst, 0xff, 0xc4)
	dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	for i, class := range []byte{0x00, 0x10, 0x01, 0x11} {
		s := stdHuffSpecs[i]
		dst = append(dst, class)
		dst = append(dst, s.counts[:]...)
		dst = append(dst, s.values...)
	}
	// DRI
	dst = append(dst, 0xff, 0xdd, 0, 4)
	dst = binary.BigEndian.AppendUint16(dst, uint16(restart))
	// SOS: 3 components, full spectral range.
	return append(dst, 0xff, 0xda, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0)
}

// bitWriter packs Huffman codes MSB first, stuffing a 0 after every 0xFF byte.
type bitWriter struct {
	buf   []byte
	acc   uint64
	nbits uint
}

// emit appends the low size bits of code (size <= 32; code has no higher bits).
func (b *bitWriter) emit(code uint32, size uint8) {
	b.acc = b.acc<<size | uint64(code)
	b.nbits += uint(size)
	if b.nbits >= 32 {
		b.write32()
	}
}

// write32 moves the oldest 32 pending bits to buf. Kept out of emit so that
// emit inlines.
//
//go:noinline
func (b *bitWriter) write32() {
	b.nbits -= 32
	v := uint32(b.acc >> b.nbits)
	// Fast path: no 0xFF byte among the four.
	if (^v-0x01010101)&v&0x80808080 == 0 {
		b.buf = binary.BigEndian.AppendUint32(b.buf, v)
		return
	}
	for sh := 24; sh >= 0; sh -= 8 {
		c := byte(v >> sh)
		b.buf = append(b.buf, c)
		if c == 0xff {
			b.buf = append(b.buf, 0)
		}
	}
}

// flush pads the last byte with 1 bits.
func (b *bitWriter) flush() {
	for b.nbits >= 8 {
		b.nbits -= 8
		c := byte(b.acc >> b.nbits)
		b.buf = append(b.buf, c)
		if c == 0xff {
			b.buf = append(b.buf, 0)
		}
	}
	if b.nbits > 0 {
		c := byte(b.acc<<(8-b.nbits)) | byte(0xff>>b.nbits)
		b.buf = append(b.buf, c)
		if c == 0xff {
			b.buf = append(b.buf, 0)
		}
	}
	b.acc, b.nbits = 0, 0
}

// encodeRows entropy-codes MCU rows [r0, r1) as one restart segment.
func (e *jpegEncoder) encodeRows(dst []byte, m *image.RGBA, r0, r1, mcuCols int) []byte {
	bw := bitWriter{buf: dst}
	var yb [4][64]float32
	var cb, cr [64]float32
	var prevY, prevCb, prevCr int32
	w, h := m.Rect.Dx(), m.Rect.Dy()
	pix, stride := m.Pix, m.Stride
	for my := r0; my < r1; my++ {
		for mx := range mcuCols {
			x0, y0 := mx*16, my*16
			// Load 16x16 pixels (edges replicated), convert to level-shifted YCbCr,
			// chroma averaged over 2x2.
			interior := x0+16 <= w && y0+16 <= h
			if interior && uniformMCU(pix[y0*stride+x0*4:], stride) {
				// One colour (common on screens): convert it once, exactly as the
				// per-pixel path would, and code six flat blocks.
				p := pix[y0*stride+x0*4 : y0*stride+x0*4+3]
				r, g, b := float32(p[0]), float32(p[1]), float32(p[2])
				yv := 0.299*r + 0.587*g + 0.114*b - 128
				sr, sg, sb := (r+r)*0.25, (g+g)*0.25, (b+b)*0.25
				cbv := -0.168736*sr - 0.331264*sg + 0.5*sb
				crv := 0.5*sr - 0.418688*sg - 0.081312*sb
				for range 4 {
					prevY = flatBlock(&bw, yv, &e.fLuma, huffDCLuma, huffACLuma, prevY)
				}
				prevCb = flatBlock(&bw, cbv+cbv, &e.fChroma, huffDCChroma, huffACChroma, prevCb)
				prevCr = flatBlock(&bw, crv+crv, &e.fChroma, huffDCChroma, huffACChroma, prevCr)
				continue
			}
			for j := range 16 {
				row := min(y0+j, h-1) * stride
				yblk := &yb[(j>>3)<<1]
				yi := (j & 7) * 8
				ci := (j >> 1) * 8
				if interior {
					if j&1 == 0 {
						convertRowPair(pix[row+x0*4:], stride, yblk, &yb[(j>>3)<<1|1], yi, &cb, &cr, ci)
					}
					continue
				}
				for i := 0; i < 16; i += 2 {
					o0, o1 := row+min(x0+i, w-1)*4, row+min(x0+i+1, w-1)*4
					r0, g0, b0 := float32(pix[o0]), float32(pix[o0+1]), float32(pix[o0+2])
					r1, g1, b1 := float32(pix[o1]), float32(pix[o1+1]), float32(pix[o1+2])
					blk := yblk
					if i >= 8 {
						blk = &yb[(j>>3)<<1|1]
					}
					blk[yi+i&7] = 0.299*r0 + 0.587*g0 + 0.114*b0 - 128
					blk[yi+i&7+1] = 0.299*r1 + 0.587*g1 + 0.114*b1 - 128
					sr, sg, sb := (r0+r1)*0.25, (g0+g1)*0.25, (b0+b1)*0.25
					c := ci + i>>1
					if j&1 == 0 {
						cb[c] = -0.168736*sr - 0.331264*sg + 0.5*sb
						cr[c] = 0.5*sr - 0.418688*sg - 0.081312*sb
					} else {
						cb[c] += -0.168736*sr - 0.331264*sg + 0.5*sb
						cr[c] += 0.5*sr - 0.418688*sg - 0.081312*sb
					}
				}
			}
			for k := range 4 {
				prevY = e.block(&bw, &yb[k], &e.fLuma, huffDCLuma, huffACLuma, prevY)
			}
			prevCb = e.block(&bw, &cb, &e.fChroma, huffDCChroma, huffACChroma, prevCb)
			prevCr = e.block(&bw, &cr, &e.fChroma, huffDCChroma, huffACChroma, prevCr)
		}
	}
	bw.flush()
	return bw.buf
}

// block transforms, quantizes and entropy-codes one 8x8 block (natural order;
// f holds the quantizer factors in zig-zag order); it returns the block's DC
// value for the next prediction.
func (e *jpegEncoder) block(bw *bitWriter, d *[64]float32, f *[64]float32, dcT, acT *huffTable, prevDC int32) int32 {
	var q [64]int32 // zig-zag order
	var nonzero uint64
	flat := true
	v0 := d[0]
	for _, v := range d[1:] {
		if v != v0 {
			flat = false
			break
		}
	}
	if flat {
		q[0] = roundI32(v0 * 64 * f[0])
	} else {
		fdct(d)
		for g := 0; g < 64; g += 8 {
			z := (*[8]int)(zigzag[g : g+8])
			fg := (*[8]float32)(f[g : g+8])
			qg := (*[8]int32)(q[g : g+8])
			var bits8 uint32
			for i := range 8 {
				v := roundI32(d[z[i]&63] * fg[i])
				qg[i] = v
				bits8 |= uint32(v|-v) >> 31 << i
			}
			nonzero |= uint64(bits8) << g
		}
	}
	// DC difference.
	diff := q[0] - prevDC
	n, extra := category(diff)
	c := dcT[n]
	bw.emit(c.code<<n|extra, c.size+n)
	// AC coefficients: walk the set bits of nonzero, so zero runs cost nothing.
	k := 0 // zig-zag index of the last coded coefficient
	for m := nonzero >> 1; m != 0; {
		run := bits.TrailingZeros64(m)
		k += run + 1
		m >>= run + 1
		for ; run > 15; run -= 16 {
			c = acT[0xf0]
			bw.emit(c.code, c.size)
		}
		n, extra := category(q[k&63])
		c = acT[byte(run<<4)|n]
		bw.emit(c.code<<n|extra, c.size+n)
	}
	if k < 63 {
		c = acT[0x00] // EOB
		bw.emit(c.code, c.size)
	}
	return q[0]
}

// Colour conversion tables: each entry is the float32 product the conversion
// formulas compute (coefficient times sample, or times the mean of a pixel
// pair for chroma), so table lookups give bit-identical results.
var (
	yR, yG, yB    [256]float32
	cbR, cbG, cbB [511]float32 // by r0+r1 etc.: coefficient * (sum * 0.25)
	crR, crG, crB [511]float32
)

func init() {
	for i := range 256 {
		v := float32(i)
		yR[i], yG[i], yB[i] = 0.299*v, 0.587*v, 0.114*v
	}
	for i := range 511 {
		s := float32(i) * 0.25
		cbR[i], cbG[i], cbB[i] = -0.168736*s, 0.331264*s, 0.5*s
		crR[i], crG[i], crB[i] = 0.5*s, 0.418688*s, 0.081312*s
	}
}

// convertRowPair converts two rows of 16 RGBA pixels at p (rows stride bytes
// apart) to level-shifted luma rows yi/8 and yi/8+1 of the left and right blocks,
// and to one row (from offset ci) of 2x2-averaged chroma. It computes exactly
// 0.299*r + 0.587*g + 0.114*b - 128 per pixel and, per pair of a row,
// -0.168736*sr - 0.331264*sg + 0.5*sb (Cb) and 0.5*sr - 0.418688*sg -
// 0.081312*sb (Cr) with sr = (r0+r1)*0.25, summed over the two rows.
func convertRowPair(p []byte, stride int, left, right *[64]float32, yi int, cb, cr *[64]float32, ci int) {
	p0 := p[:64:64]
	p1 := p[stride : stride+64 : stride+64]
	for half, blk := range [2]*[64]float32{left, right} {
		ys := blk[yi : yi+16 : yi+16]
		cbs := cb[ci+half*4 : ci+half*4+4 : ci+half*4+4]
		crs := cr[ci+half*4 : ci+half*4+4 : ci+half*4+4]
		q0 := p0[half*32 : half*32+32 : half*32+32]
		q1 := p1[half*32 : half*32+32 : half*32+32]
		for i := range 4 {
			a := binary.LittleEndian.Uint32(q0[8*i:])
			b := binary.LittleEndian.Uint32(q0[8*i+4:])
			c := binary.LittleEndian.Uint32(q1[8*i:])
			d := binary.LittleEndian.Uint32(q1[8*i+4:])
			ra, ga, ba := a&0xff, a>>8&0xff, a>>16&0xff
			rb, gb, bb := b&0xff, b>>8&0xff, b>>16&0xff
			rc, gc, bc := c&0xff, c>>8&0xff, c>>16&0xff
			rd, gd, bd := d&0xff, d>>8&0xff, d>>16&0xff
			ys[2*i] = yR[ra] + yG[ga] + yB[ba] - 128
			ys[2*i+1] = yR[rb] + yG[gb] + yB[bb] - 128
			ys[8+2*i] = yR[rc] + yG[gc] + yB[bc] - 128
			ys[8+2*i+1] = yR[rd] + yG[gd] + yB[bd] - 128
			sr, sg, sb := ra+rb, ga+gb, ba+bb
			tr, tg, tb := rc+rd, gc+gd, bc+bd
			cbs[i] = (cbR[sr] - cbG[sg] + cbB[sb]) + (cbR[tr] - cbG[tg] + cbB[tb])
			crs[i] = (crR[sr] - crG[sg] - crB[sb]) + (crR[tr] - crG[tg] - crB[tb])
		}
	}
}

// uniformMCU reports whether the 16x16 pixels at the start of p (rows stride
// bytes apart) all have the same RGBA value.
func uniformMCU(p []byte, stride int) bool {
	p = p[:15*stride+64]
	v := binary.LittleEndian.Uint32(p)
	want := uint64(v) | uint64(v)<<32
	for j := range 16 {
		row := p[j*stride : j*stride+64 : j*stride+64]
		var diff uint64
		for i := 0; i < 64; i += 8 {
			diff |= binary.LittleEndian.Uint64(row[i:]) ^ want
		}
		if diff != 0 {
			return false
		}
	}
	return true
}

// flatBlock codes a block whose 64 samples all equal v: a DC value and an
// end-of-block. It matches block for such input.
func flatBlock(bw *bitWriter, v float32, f *[64]float32, dcT, acT *huffTable, prevDC int32) int32 {
	dc := roundI32(v * 64 * f[0])
	n, extra := category(dc - prevDC)
	c := dcT[n]
	bw.emit(c.code<<n|extra, c.size+n)
	c = acT[0x00]
	bw.emit(c.code, c.size)
	return dc
}

// category returns the JPEG magnitude category of v and its extra bits.
func category(v int32) (uint8, uint32) {
	a := v
	if a < 0 {
		a = -a
		v--
	}
	n := uint8(bits.Len32(uint32(a)))
	return n, uint32(v) & (1<<n - 1)
}

// roundI32 rounds half away from zero without a branch.
func roundI32(v float32) int32 {
	half := math.Float32frombits(0x3f000000 | math.Float32bits(v)&0x80000000)
	return int32(v + half)
}

// fdct is the AAN forward DCT (float, as in the Arai-Agui-Nakajima paper); its
// outputs are scaled by 8*aanScale[u]*aanScale[v], folded into the quantizer.
// The 1-D butterfly is written out in both passes so that it is inlined.
func fdct(d *[64]float32) {
	for r := 0; r < 64; r += 8 {
		p := (*[8]float32)(d[r : r+8])
		d0, d1, d2, d3, d4, d5, d6, d7 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
		t0, t7 := d0+d7, d0-d7
		t1, t6 := d1+d6, d1-d6
		t2, t5 := d2+d5, d2-d5
		t3, t4 := d3+d4, d3-d4
		t10, t13 := t0+t3, t0-t3
		t11, t12 := t1+t2, t1-t2
		z1 := (t12 + t13) * 0.707106781
		t10b := t4 + t5
		t11b := t5 + t6
		t12b := t6 + t7
		z5 := (t10b - t12b) * 0.382683433
		z2 := 0.541196100*t10b + z5
		z4 := 1.306562965*t12b + z5
		z3 := t11b * 0.707106781
		z11, z13 := t7+z3, t7-z3
		p[0], p[4] = t10+t11, t10-t11
		p[2], p[6] = t13+z1, t13-z1
		p[5], p[3] = z13+z2, z13-z2
		p[1], p[7] = z11+z4, z11-z4
	}
	for c := range 8 {
		d0, d1, d2, d3, d4, d5, d6, d7 := d[c], d[c+8], d[c+16], d[c+24], d[c+32], d[c+40], d[c+48], d[c+56]
		t0, t7 := d0+d7, d0-d7
		t1, t6 := d1+d6, d1-d6
		t2, t5 := d2+d5, d2-d5
		t3, t4 := d3+d4, d3-d4
		t10, t13 := t0+t3, t0-t3
		t11, t12 := t1+t2, t1-t2
		z1 := (t12 + t13) * 0.707106781
		t10b := t4 + t5
		t11b := t5 + t6
		t12b := t6 + t7
		z5 := (t10b - t12b) * 0.382683433
		z2 := 0.541196100*t10b + z5
		z4 := 1.306562965*t12b + z5
		z3 := t11b * 0.707106781
		z11, z13 := t7+z3, t7-z3
		d[c], d[c+32] = t10+t11, t10-t11
		d[c+16], d[c+48] = t13+z1, t13-z1
		d[c+40], d[c+24] = z13+z2, z13-z2
		d[c+8], d[c+56] = z11+z4, z11-z4
	}
}
