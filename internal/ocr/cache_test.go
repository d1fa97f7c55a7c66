package ocr

import (
	"context"
	"errors"
	"image"
	"image/color"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

// countingEngine reads every image as one line "hello" and counts its reads.
type countingEngine struct {
	reads atomic.Int32
	fail  atomic.Bool
	gate  chan struct{} // when set, reads wait for it
}

func (e *countingEngine) ID() string { return "counting" }

func (e *countingEngine) Read(ctx context.Context, img image.Image, region geom.ImageRect) (Page, error) {
	e.reads.Add(1)
	if e.gate != nil {
		<-e.gate
	}
	if e.fail.Load() {
		return Page{}, errors.New("engine failed")
	}
	return Page{Region: region, Lines: []Line{NewLine([]Word{{Text: "hello", Box: region, Conf: 90}})}}, nil
}

func solid(c uint8) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 64, 32))
	for i := range img.Pix {
		img.Pix[i] = c
	}
	return img
}

func TestReaderCachesPerFrameAndRegion(t *testing.T) {
	e := &countingEngine{}
	r := NewReader(e, 3)
	ctx := context.Background()
	img := solid(200)
	for range 3 {
		if _, err := r.Read(ctx, "f1", img, geom.ImageRect{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.reads.Load(); n != 1 {
		t.Errorf("three reads of one frame ran the engine %d times, want 1", n)
	}
	// The whole image named as a region is the same read.
	r.Read(ctx, "f1", img, geom.ImageRect{W: 64, H: 32})
	r.Read(ctx, "f1", img, geom.ImageRect{X: 1, Y: 1, W: 10, H: 10})
	other := solid(10)
	other.Set(5, 5, color.RGBA{R: 255, A: 255})
	r.Read(ctx, "f1", other, geom.ImageRect{}) // the same ID with other pixels is another frame
	r.Read(ctx, "", img, geom.ImageRect{})     // no ID: never cached
	r.Read(ctx, "", img, geom.ImageRect{})
	if n := e.reads.Load(); n != 5 {
		t.Errorf("engine ran %d times, want 5 (whole, region, other pixels, twice uncached)", n)
	}
	if r.Len() != 3 {
		t.Errorf("cache holds %d pages, want 3", r.Len())
	}
	r.Read(ctx, "f2", img, geom.ImageRect{}) // a fourth key evicts the least recently used
	if r.Len() != 3 {
		t.Errorf("cache holds %d pages past its bound of 3", r.Len())
	}
	if _, err := r.Read(ctx, "f1", img, geom.ImageRect{X: 60, Y: 0, W: 10, H: 10}); !errors.Is(err, ErrRegion) {
		t.Errorf("region off the image: %v, want ErrRegion", err)
	}
}

func TestReaderDoesNotKeepFailuresAndSharesAConcurrentRead(t *testing.T) {
	e := &countingEngine{}
	r := NewReader(e, 0)
	ctx := context.Background()
	img := solid(100)
	e.fail.Store(true)
	if _, err := r.Read(ctx, "f", img, geom.ImageRect{}); err == nil {
		t.Fatal("want the engine's error")
	}
	e.fail.Store(false)
	if p, err := r.Read(ctx, "f", img, geom.ImageRect{}); err != nil || p.Text() != "hello" {
		t.Fatalf("after a failure: %v %v, want a fresh read", p, err)
	}
	e.reads.Store(0)
	e.gate = make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := r.Read(ctx, "g", img, geom.ImageRect{}); err != nil {
				t.Error(err)
			}
		})
	}
	for e.reads.Load() == 0 { // the first read has started
		runtime.Gosched()
	}
	close(e.gate)
	wg.Wait()
	if n := e.reads.Load(); n != 1 {
		t.Errorf("four concurrent reads of one key ran the engine %d times, want 1", n)
	}
}

func TestReaderFind(t *testing.T) {
	r := NewReader(&countingEngine{}, 0)
	ms, p, err := r.Find(context.Background(), "f", solid(1), Query{Text: "HELLO"})
	if err != nil || len(ms) != 1 || p.Text() != "hello" {
		t.Errorf("Find = %v %v %v", ms, p, err)
	}
	if _, _, err := r.Find(context.Background(), "f", solid(1), Query{Text: "(", Match: Regex}); !errors.Is(err, ErrQuery) {
		t.Errorf("bad regex: %v", err)
	}
}
