package imaging

import (
	"image"
	"math"
	"sort"
)

// Match is one place where a template was found.
type Match struct {
	// Rect is the matched area in pixels of the searched screen image.
	Rect image.Rectangle `json:"rect"`
	// Score is the normalized cross-correlation, from -1 to 1 (1 = identical up
	// to brightness and contrast). A flat template is scored by 1 - mean absolute
	// difference instead.
	Score float64 `json:"score"`
}

// Defaults of FindTemplate.
const (
	DefaultMatchThreshold = 0.8
	DefaultMaxMatches     = 10
)

// gray is a float luma plane.
type gray struct {
	w, h int
	p    []float32
}

func toGray(img image.Image) gray {
	m := ToRGBA(img)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	g := gray{w, h, make([]float32, w*h)}
	for y := range h {
		row := m.Pix[y*m.Stride : y*m.Stride+w*4]
		for x := range w {
			g.p[y*w+x] = 0.299*float32(row[x*4]) + 0.587*float32(row[x*4+1]) + 0.114*float32(row[x*4+2])
		}
	}
	return g
}

// crop returns the w x h part of g at (x, y).
func (g gray) crop(x, y, w, h int) gray {
	o := gray{w, h, make([]float32, max(0, w*h))}
	for j := range h {
		copy(o.p[j*w:(j+1)*w], g.p[(y+j)*g.w+x:])
	}
	return o
}

// localMax reports whether grid[x,y] is not smaller than its 8 neighbours.
func localMax(grid []float64, w, h, x, y int) bool {
	v := grid[y*w+x]
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			xx, yy := x+dx, y+dy
			if (dx != 0 || dy != 0) && xx >= 0 && yy >= 0 && xx < w && yy < h && grid[yy*w+xx] > v {
				return false
			}
		}
	}
	return true
}

// shrink returns g box-averaged by an integer factor k.
func (g gray) shrink(k int) gray {
	if k <= 1 {
		return g
	}
	o := gray{g.w / k, g.h / k, nil}
	o.p = make([]float32, o.w*o.h)
	inv := 1 / float32(k*k)
	for y := range o.h {
		for x := range o.w {
			var s float32
			for j := range k {
				row := g.p[(y*k+j)*g.w+x*k:]
				for i := range k {
					s += row[i]
				}
			}
			o.p[y*o.w+x] = s * inv
		}
	}
	return o
}

// integral holds the integral images of a screen plane, (w+1)*(h+1) each: the
// sums of values and of squares above and left of each point.
type integral struct {
	sum, sumSq []float64
}

func newIntegral(s gray) integral {
	W := s.w + 1
	in := integral{make([]float64, W*(s.h+1)), make([]float64, W*(s.h+1))}
	for y := range s.h {
		var rs, rq float64
		for x := range s.w {
			v := float64(s.p[y*s.w+x])
			rs += v
			rq += v * v
			in.sum[(y+1)*W+x+1] = in.sum[y*W+x+1] + rs
			in.sumSq[(y+1)*W+x+1] = in.sumSq[y*W+x+1] + rq
		}
	}
	return in
}

// scorer computes the match score of a template at positions of a screen.
type scorer struct {
	s, t  gray
	in    integral  // of s
	tz    []float32 // zero-mean template (zero where the mask leaves a pixel out)
	tNorm float64   // sqrt(sum tz^2)
	flat  bool
	tMean float64
	// runs are the template's counted pixels as row runs, n their number;
	// nil runs: every pixel counts (the integral images serve).
	runs []span
	n    float64
	rows rowSums // of s, when runs is set
}

// span is a run of counted template pixels: row y, columns x0 to x1-1.
type span struct{ y, x0, x1 int }

// rowSums holds prefix sums along each row of a screen plane, w+1 per row:
// a masked template's window sums are its runs' row sums.
type rowSums struct {
	w          int
	sum, sumSq []float64
}

func newRowSums(s gray) rowSums {
	W := s.w + 1
	r := rowSums{W, make([]float64, W*s.h), make([]float64, W*s.h)}
	for y := range s.h {
		for x := range s.w {
			v := float64(s.p[y*s.w+x])
			r.sum[y*W+x+1] = r.sum[y*W+x] + v
			r.sumSq[y*W+x+1] = r.sumSq[y*W+x] + v*v
		}
	}
	return r
}

// newScorer prepares template t for screen s, whose integral images are in.
func newScorer(s gray, in integral, t gray) *scorer {
	sc := &scorer{s: s, t: t, in: in, tz: make([]float32, len(t.p)), n: float64(len(t.p))}
	var mean float64
	for _, v := range t.p {
		mean += float64(v)
	}
	mean /= float64(len(t.p))
	var ss float64
	for i, v := range t.p {
		d := float64(v) - mean
		sc.tz[i] = float32(d)
		ss += d * d
	}
	sc.tMean, sc.tNorm = mean, math.Sqrt(ss)
	sc.flat = sc.tNorm < 1e-3*float64(len(t.p))
	return sc
}

// newMaskedScorer prepares template t counting only the pixels where mask
// m is 1, for screen s whose row sums are rows; nil when none counts.
func newMaskedScorer(s gray, rows rowSums, t, m gray) *scorer {
	sc := &scorer{s: s, t: t, rows: rows, tz: make([]float32, len(t.p))}
	var mean float64
	for y := range t.h {
		for x := 0; x < t.w; {
			if m.p[y*t.w+x] < 0.5 {
				x++
				continue
			}
			x0 := x
			for x < t.w && m.p[y*t.w+x] >= 0.5 {
				mean += float64(t.p[y*t.w+x])
				x++
			}
			sc.runs = append(sc.runs, span{y, x0, x})
			sc.n += float64(x - x0)
		}
	}
	if sc.n == 0 {
		return nil
	}
	mean /= sc.n
	var ss float64
	for _, r := range sc.runs {
		for i := r.y*t.w + r.x0; i < r.y*t.w+r.x1; i++ {
			d := float64(t.p[i]) - mean
			sc.tz[i] = float32(d)
			ss += d * d
		}
	}
	sc.tMean, sc.tNorm = mean, math.Sqrt(ss)
	sc.flat = sc.tNorm < 1e-3*sc.n
	return sc
}

func (sc *scorer) score(x, y int) float64 {
	if sc.runs != nil {
		return sc.scoreMasked(x, y)
	}
	tw, th := sc.t.w, sc.t.h
	n := float64(tw * th)
	if sc.flat {
		var sad float64
		for j := range th {
			row := sc.s.p[(y+j)*sc.s.w+x:]
			for i := range tw {
				sad += math.Abs(float64(row[i]) - sc.tMean)
			}
		}
		return 1 - sad/n/255
	}
	W := sc.s.w + 1
	a, b, c, d := y*W+x, y*W+x+tw, (y+th)*W+x, (y+th)*W+x+tw
	sum := sc.in.sum[d] - sc.in.sum[b] - sc.in.sum[c] + sc.in.sum[a]
	sq := sc.in.sumSq[d] - sc.in.sumSq[b] - sc.in.sumSq[c] + sc.in.sumSq[a]
	v := sq - sum*sum/n
	if v < 1e-6*n {
		return 0 // flat window cannot correlate with a textured template
	}
	var num float32
	for j := range th {
		row := sc.s.p[(y+j)*sc.s.w+x : (y+j)*sc.s.w+x+tw]
		trow := sc.tz[j*tw : j*tw+tw]
		for i, t := range trow {
			num += t * row[i]
		}
	}
	return float64(num) / (sc.tNorm * math.Sqrt(v))
}

// scoreMasked is score over the template's runs only.
func (sc *scorer) scoreMasked(x, y int) float64 {
	tw := sc.t.w
	if sc.flat {
		var sad float64
		for _, r := range sc.runs {
			row := sc.s.p[(y+r.y)*sc.s.w+x:]
			for i := r.x0; i < r.x1; i++ {
				sad += math.Abs(float64(row[i]) - sc.tMean)
			}
		}
		return 1 - sad/sc.n/255
	}
	var sum, sq float64
	W := sc.rows.w
	for _, r := range sc.runs {
		o := (y+r.y)*W + x
		sum += sc.rows.sum[o+r.x1] - sc.rows.sum[o+r.x0]
		sq += sc.rows.sumSq[o+r.x1] - sc.rows.sumSq[o+r.x0]
	}
	v := sq - sum*sum/sc.n
	if v < 1e-6*sc.n {
		return 0
	}
	var num float32
	for _, r := range sc.runs {
		row := sc.s.p[(y+r.y)*sc.s.w+x:]
		trow := sc.tz[r.y*tw:]
		for i := r.x0; i < r.x1; i++ {
			num += trow[i] * row[i]
		}
	}
	return float64(num) / (sc.tNorm * math.Sqrt(v))
}

// maskPlane is mask as a plane of 1 (counted) and 0 (left out) of t's size.
func maskPlane(mask *image.Alpha, w, h int) gray {
	g := gray{w, h, make([]float32, w*h)}
	for y := range h {
		for x := range w {
			if mask.Pix[mask.PixOffset(mask.Rect.Min.X+x, mask.Rect.Min.Y+y)] > 0 {
				g.p[y*w+x] = 1
			}
		}
	}
	return g
}

// count is the sum of g's values (a mask's counted pixels).
func (g gray) count() float64 {
	var n float64
	for _, v := range g.p {
		n += float64(v)
	}
	return n
}

// binarize keeps a shrunk mask's cells whose pixels all counted.
func (g gray) binarize() gray {
	for i, v := range g.p {
		if v >= 0.999 {
			g.p[i] = 1
		} else {
			g.p[i] = 0
		}
	}
	return g
}

// FindTemplate finds where tmpl appears in screen, best first: matches scoring at
// least threshold (0 = 0.8), at most maxResults (0 = 10), not overlapping a better
// match by more than half. It searches a downscaled pyramid level first, then
// refines candidates at full resolution.
func FindTemplate(screen *image.RGBA, tmpl image.Image, threshold float64, maxResults int) []Match {
	return findTemplate(screen, tmpl, nil, threshold, maxResults)
}

// FindTemplateMasked is FindTemplate scoring only the template's pixels that
// mask counts (alpha above zero; mask has tmpl's size): pixels that differ
// from one occurrence to the next, such as what a text field holds, are left
// out of the correlation. At the coarse level a cell counts only when all its
// pixels do. A nil mask counts every pixel (FindTemplate).
func FindTemplateMasked(screen *image.RGBA, tmpl image.Image, mask *image.Alpha, threshold float64, maxResults int) []Match {
	return findTemplate(screen, tmpl, mask, threshold, maxResults)
}

// findTemplate is FindTemplate and FindTemplateMasked (a nil mask: none),
// in named steps: planes, pyramid factor, coarse candidates, refinement,
// and the best non-overlapping matches.
func findTemplate(screen *image.RGBA, tmpl image.Image, mask *image.Alpha, threshold float64, maxResults int) []Match {
	if threshold == 0 {
		threshold = DefaultMatchThreshold
	}
	if maxResults <= 0 {
		maxResults = DefaultMaxMatches
	}
	s, t, m, ok := templatePlanes(screen, tmpl, mask)
	if !ok {
		return nil
	}
	k := pyramidFactor(t, m)
	cands := coarseCandidates(s, t, m, k, threshold)
	sort.Slice(cands, func(i, j int) bool { return cands[i].s > cands[j].s })
	if len(cands) > 8*maxResults+16 {
		cands = cands[:8*maxResults+16]
	}
	if len(cands) == 0 {
		return nil
	}
	found := refineCandidates(s, t, m, k, cands, threshold, screen.Rect.Min)
	return bestDisjoint(found, maxResults)
}

// templatePlanes converts the screen, the template and the mask (nil: none)
// to planes; m.p is nil without a mask. It reports false when nothing can
// match: an empty template, one larger than the screen, or a mask of
// another size.
func templatePlanes(screen *image.RGBA, tmpl image.Image, mask *image.Alpha) (s, t, m gray, ok bool) {
	s, t = toGray(screen), toGray(tmpl)
	if t.w == 0 || t.h == 0 || t.w > s.w || t.h > s.h {
		return s, t, m, false
	}
	if mask != nil {
		if mask.Rect.Dx() != t.w || mask.Rect.Dy() != t.h {
			return s, t, m, false
		}
		m = maskPlane(mask, t.w, t.h)
	}
	return s, t, m, true
}

// pyramidFactor is the coarse level's shrink factor (1, 2, 4 or 8) for
// template t and mask plane m (nil p: no mask).
func pyramidFactor(t, m gray) int {
	// Keep the coarse template at least 6 px on its short side.
	k := 1
	for k < 8 && min(t.w, t.h)/(k*2) >= 6 {
		k *= 2
	}
	// A mask's thin parts vanish from the coarse level (a cell counts only
	// when all its pixels do): shrink less while it would keep under a
	// quarter of the counted pixels.
	for m.p != nil && k > 1 && m.shrink(k).binarize().count()*float64(k*k) < m.count()/4 {
		k /= 2
	}
	return k
}

// templateCand is a coarse match to refine: its full-resolution position
// and coarse score.
type templateCand struct {
	x, y int
	s    float64
}

// scorerFor is the scorer of template t on screen s: an unmasked one from
// s's integral in, or a masked one (m.p not nil) from its row sums rows.
func scorerFor(s gray, in integral, rows rowSums, t, m gray) *scorer {
	if m.p == nil {
		return newScorer(s, in, t)
	}
	return newMaskedScorer(s, rows, t, m)
}

// coarseCandidates searches the screen shrunk by k for the template and
// returns the local maxima scoring near threshold or above, unsorted, at
// full-resolution positions.
func coarseCandidates(s, t, m gray, k int, threshold float64) []templateCand {
	var cands []templateCand
	cs := s.shrink(k)
	var csIn integral
	var csRows rowSums
	if m.p == nil {
		csIn = newIntegral(cs)
	} else {
		csRows = newRowSums(cs)
	}
	slack := 0.0
	if k > 1 {
		slack = 0.3 // coarse scores are blurred; refine generously
	}
	// The screen is shrunk (and integrated) once; the template is shrunk at each
	// of the k*k phases so that an occurrence at any offset is seen sharply by
	// one phase.
	for py := range k {
		for px := range k {
			pw, ph := (t.w-px)/k*k, (t.h-py)/k*k
			ct := t.crop(px, py, pw, ph).shrink(k)
			if ct.w == 0 || ct.h == 0 || ct.w > cs.w || ct.h > cs.h {
				continue
			}
			var cm gray
			if m.p != nil {
				cm = m.crop(px, py, pw, ph).shrink(k).binarize()
			}
			coarse := scorerFor(cs, csIn, csRows, ct, cm)
			if coarse == nil {
				continue
			}
			cands = appendPeaks(cands, coarse, cs.w-ct.w+1, cs.h-ct.h+1, k, px, py, threshold-slack)
		}
	}
	return cands
}

// appendPeaks scores coarse at every position of its cw x ch grid and
// appends to cands the local maxima scoring at least floor, at their
// full-resolution positions (shrink factor k, template phase px, py).
func appendPeaks(cands []templateCand, coarse *scorer, cw, ch, k, px, py int, floor float64) []templateCand {
	grid := make([]float64, cw*ch)
	for y := range ch {
		for x := range cw {
			grid[y*cw+x] = coarse.score(x, y)
		}
	}
	for y := range ch {
		for x := range cw {
			v := grid[y*cw+x]
			if v < floor || !localMax(grid, cw, ch, x, y) {
				continue
			}
			cands = append(cands, templateCand{x*k - px, y*k - py, v})
		}
	}
	return cands
}

// refineCandidates scores the template at full resolution within k pixels
// of each candidate and returns the best position of each that scores at
// least threshold, offset by origin (the screen image's Rect.Min).
func refineCandidates(s, t, m gray, k int, cands []templateCand, threshold float64, origin image.Point) []Match {
	var full *scorer
	if m.p == nil {
		full = newScorer(s, newIntegral(s), t)
	} else if full = newMaskedScorer(s, newRowSums(s), t, m); full == nil {
		return nil
	}
	var found []Match
	for _, c := range cands {
		best, bx, by := math.Inf(-1), 0, 0
		for y := max(0, c.y-k); y <= min(s.h-t.h, c.y+k); y++ {
			for x := max(0, c.x-k); x <= min(s.w-t.w, c.x+k); x++ {
				if v := full.score(x, y); v > best {
					best, bx, by = v, x, y
				}
			}
		}
		if best >= threshold {
			found = append(found, Match{Rect: image.Rect(bx, by, bx+t.w, by+t.h).Add(origin), Score: best})
		}
	}
	return found
}

// bestDisjoint sorts found best first and keeps at most maxResults of them,
// each not overlapping a better one kept by more than half its area.
func bestDisjoint(found []Match, maxResults int) []Match {
	sort.Slice(found, func(i, j int) bool { return found[i].Score > found[j].Score })
	var out []Match
	for _, m := range found {
		dup := false
		for _, o := range out {
			in := m.Rect.Intersect(o.Rect)
			if in.Dx()*in.Dy()*2 > m.Rect.Dx()*m.Rect.Dy() {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, m)
			if len(out) == maxResults {
				break
			}
		}
	}
	return out
}
