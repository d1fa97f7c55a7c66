package tesseract

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"hash/maphash"
	"image"
	"slices"
	"sync"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/ocr/regions"
)

// readPrepared finds the region's lines and reads each line's prepared
// crop on its own: one text line to Tesseract (psm 7), no page layout to
// analyse. The lines go out in batches, the costliest first, to whichever
// process is free, each batch prepared while the ones before it are read;
// a crop identical to one already sent (the same label twice) is read once,
// and one the engine read before (Options.LineCache) not at all.
func (e *Engine) readPrepared(ctx context.Context, img image.Image, region geom.ImageRect) ([]ocr.Line, error) {
	g := regions.Luma(img, region)
	lay := regions.Find(g, e.o.Regions)
	batches := planBatches(lay.Lines, e.o.Workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := len(lay.Lines)
	r := &lineRead{sheets: make([]regions.Sheet, n), first: make([]int, n), rows: make([][][]string, n),
		seen: map[uint64][]int{}, keys: make([]cropKey, n), cache: &e.lines}
	work := make(chan []int, len(batches)) // indices of the sheets to read
	go func() {
		defer close(work)
		for _, b := range batches {
			if todo := r.prepare(g, lay, b, e.o.Regions); len(todo) > 0 {
				select {
				case work <- todo:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	var errs []error
	var wg sync.WaitGroup
	for range min(e.o.Workers, len(batches)) {
		wg.Go(func() {
			for todo := range work {
				if err := r.read(ctx, e, todo); err != nil {
					r.mu.Lock()
					errs = append(errs, err)
					r.mu.Unlock()
					cancel()
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil { // the caller's context ended before all was read
		return nil, err
	}
	var lines []ocr.Line
	for i, sh := range r.sheets {
		if sh.Image != nil {
			lines = append(lines, e.sheetLines(sh, r.rows[r.first[i]], region)...)
		}
	}
	return lines, nil
}

// lineRead is one readPrepared's lines: each line's sheet (nil Image: no
// contrast), the first line with the same crop, and the rows read of it.
type lineRead struct {
	sheets []regions.Sheet
	first  []int
	seen   map[uint64][]int // lines by their crop's hash
	mu     sync.Mutex
	rows   [][][]string
	keys   []cropKey
	cache  *lineCache
}

var cropSeed, cropSeed2 = maphash.MakeSeed(), maphash.MakeSeed()

// cropKey identifies a prepared crop by its size and two hashes of its pixels.
type cropKey struct {
	w, h int
	a, b uint64
}

func keyOf(g *image.Gray) cropKey {
	return cropKey{g.Rect.Dx(), g.Rect.Dy(), maphash.Bytes(cropSeed, g.Pix), maphash.Bytes(cropSeed2, g.Pix)}
}

// prepare prepares the lines of batch b and returns those to read: the
// ones whose crop is neither the same as an earlier line's nor read before.
func (r *lineRead) prepare(g *image.Gray, lay regions.Layout, b []int, o regions.Options) []int {
	var todo []int
	for _, i := range b {
		sh, ok := regions.PrepareLine(g, lay, i, o)
		if !ok {
			continue
		}
		r.sheets[i], r.first[i] = sh, i
		k := keyOf(sh.Image)
		r.keys[i] = k
		dup := false
		for _, j := range r.seen[k.a] {
			if o := r.sheets[j].Image; o.Rect == sh.Image.Rect && bytes.Equal(o.Pix, sh.Image.Pix) {
				r.first[i], dup = j, true
				break
			}
		}
		if dup {
			continue
		}
		r.seen[k.a] = append(r.seen[k.a], i)
		if rows, ok := r.cache.get(k); ok {
			r.mu.Lock()
			r.rows[i] = rows
			r.mu.Unlock()
			continue
		}
		todo = append(todo, i)
	}
	return todo
}

// read reads the sheets of lines todo with one process.
func (r *lineRead) read(ctx context.Context, e *Engine, todo []int) error {
	imgs := make([]image.Image, len(todo))
	for k, i := range todo {
		imgs[k] = r.sheets[i].Image
	}
	pages, err := e.recognize(ctx, imgs)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, i := range todo {
		r.rows[i] = pages[k]
		r.cache.put(r.keys[i], pages[k])
	}
	return nil
}

// lineCache remembers the rows read of prepared crops, at most about max
// of them (two generations of max/2: a crop used again moves to the newer).
type lineCache struct {
	max       int
	mu        sync.Mutex
	cur, prev map[cropKey][][]string
	hits      int // crops found, for tests
}

func (c *lineCache) get(k cropKey) ([][]string, bool) {
	if c.max <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rows, ok := c.cur[k]
	if !ok {
		if rows, ok = c.prev[k]; ok {
			c.add(k, rows)
		}
	}
	if ok {
		c.hits++
	}
	return rows, ok
}

func (c *lineCache) put(k cropKey, rows [][]string) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.add(k, rows)
}

func (c *lineCache) add(k cropKey, rows [][]string) {
	if c.cur == nil || len(c.cur) >= max(c.max/2, 1) {
		c.prev, c.cur = c.cur, map[cropKey][][]string{}
	}
	c.cur[k] = rows
}

// planBatches orders the lines by their cost to read, the costliest first,
// and cuts them into batches for workers processes: each batch about half
// of what remains shared among the workers, so that the first batches are
// large (few round trips) and the last small (the processes end together).
func planBatches(lines []geom.ImageRect, workers int) [][]int {
	// Tesseract scales each line to a fixed height: its cost is the line's
	// length in heights, and some for the line itself.
	cost := func(r geom.ImageRect) float64 { return float64(r.W)/float64(max(r.H, 1)) + 4 }
	order := make([]int, len(lines))
	remaining := 0.0
	for i, l := range lines {
		order[i] = i
		remaining += cost(l)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost(lines[b]), cost(lines[a])) })
	var batches [][]int
	for start := 0; start < len(order); {
		want := max(remaining/float64(2*workers), minBatchCost)
		end, c := start, 0.0
		for end < len(order) && (end == start || c < want) {
			c += cost(lines[order[end]])
			end++
		}
		batches = append(batches, order[start:end])
		remaining -= c
		start = end
	}
	return batches
}

// minBatchCost is the least cost of a batch (see planBatches): a few short
// lines, below which a round trip costs more than it balances.
const minBatchCost = 40
