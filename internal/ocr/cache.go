package ocr

import (
	"container/list"
	"context"
	"errors"
	"hash/fnv"
	"image"
	"sync"

	"github.com/guiagent/guiagent/internal/geom"
)

// DefaultCacheSize is how many reads a Reader keeps when not told.
const DefaultCacheSize = 64

// Reader reads images through an engine and keeps the pages it read, keyed
// by frame identity (the frame's ID and a sample of its pixels), region and
// engine (languages included), so asking again about the same frame (a
// find after a read, a second find, a cache check) costs nothing. The cache
// is bounded (least recently used goes first); failed reads are not kept.
// Concurrent reads of one key run the engine once. Safe for concurrent use.
type Reader struct {
	engine Engine
	max    int

	mu      sync.Mutex
	entries map[cacheKey]*entry
	lru     *list.List // of cacheKey, most recent at the front
}

type cacheKey struct {
	frame  string
	pixels uint64 // fingerprint of a sample of the pixels
	region geom.ImageRect
	engine string
}

type entry struct {
	done chan struct{} // closed when page and err are set
	page Page
	err  error
	elem *list.Element // nil until the read succeeded
}

// NewReader returns a reader over e keeping at most size pages (size <= 0:
// DefaultCacheSize).
func NewReader(e Engine, size int) *Reader {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &Reader{engine: e, max: size, entries: map[cacheKey]*entry{}, lru: list.New()}
}

// Engine is the reader's engine.
func (r *Reader) Engine() Engine { return r.engine }

// Read returns the text in region of img (the zero ImageRect: all of it),
// the pixels of frame frameID. An empty frameID is never cached. A region
// not on the image is an error wrapping ErrRegion.
func (r *Reader) Read(ctx context.Context, frameID string, img image.Image, region geom.ImageRect) (Page, error) {
	region, err := ResolveRegion(SizeOf(img), region)
	if err != nil {
		return Page{}, err
	}
	if frameID == "" {
		return r.engine.Read(ctx, img, region)
	}
	k := cacheKey{frame: frameID, pixels: fingerprint(img), region: region, engine: r.engine.ID()}
	for {
		e, leader := r.claim(k)
		if leader {
			e.page, e.err = r.engine.Read(ctx, img, region)
			r.settle(k, e)
			return e.page, e.err
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return Page{}, ctx.Err()
		}
		if e.err != nil && isCancel(e.err) && ctx.Err() == nil {
			continue // the read this call waited for was cancelled by its own caller: read again
		}
		return e.page, e.err
	}
}

// Find reads q.Region of img (the pixels of frame frameID) and returns
// where q's text is, with the page read.
func (r *Reader) Find(ctx context.Context, frameID string, img image.Image, q Query) ([]Match, Page, error) {
	if err := q.Validate(); err != nil {
		return nil, Page{}, err
	}
	p, err := r.Read(ctx, frameID, img, q.Region)
	if err != nil {
		return nil, p, err
	}
	ms, err := Find(p, q)
	return ms, p, err
}

// claim returns k's entry, and whether the caller must do the read.
func (r *Reader) claim(k cacheKey) (*entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.entries[k]; ok {
		if e.elem != nil {
			r.lru.MoveToFront(e.elem)
		}
		return e, false
	}
	e := &entry{done: make(chan struct{})}
	r.entries[k] = e
	return e, true
}

// settle records the leader's read: kept when it succeeded (evicting the
// least recently used beyond the bound), forgotten when it failed.
func (r *Reader) settle(k cacheKey, e *entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer close(e.done)
	if e.err != nil {
		delete(r.entries, k)
		return
	}
	e.elem = r.lru.PushFront(k)
	for r.lru.Len() > r.max {
		old := r.lru.Remove(r.lru.Back()).(cacheKey)
		delete(r.entries, old)
	}
}

// Len is the number of pages kept.
func (r *Reader) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lru.Len()
}

func isCancel(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// fingerprint hashes a 16x16 grid of img's pixels and its size: two frames
// given one ID by mistake do not share a page.
func fingerprint(img image.Image) uint64 {
	h := fnv.New64a()
	b := img.Bounds()
	buf := make([]byte, 0, 16*16*4+16)
	buf = append(buf, byte(b.Dx()), byte(b.Dx()>>8), byte(b.Dy()), byte(b.Dy()>>8))
	for j := range 16 {
		for i := range 16 {
			x, y := b.Min.X+(2*i+1)*b.Dx()/32, b.Min.Y+(2*j+1)*b.Dy()/32
			cr, cg, cb, _ := img.At(x, y).RGBA()
			buf = append(buf, byte(cr>>8), byte(cg>>8), byte(cb>>8))
		}
	}
	h.Write(buf)
	return h.Sum64()
}
