package darwin

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/geom"
)

// maxDisplays bounds CGGetActiveDisplayList.
const maxDisplays = 32

// rawDisplays reads the active displays from CoreGraphics. Caller holds mu or
// otherwise knows the API is loaded.
func (b *Backend) rawDisplays() ([]rawDisplay, error) {
	a := b.sys.api
	var ids [maxDisplays]uint32
	var n uint32
	if e := a.CGGetActiveDisplayList(maxDisplays, &ids[0], &n); e != 0 {
		return nil, fmt.Errorf("macOS: CGGetActiveDisplayList failed with CGError %d: make sure a GUI session is active and the displays are awake", e)
	}
	main := a.CGMainDisplayID()
	out := make([]rawDisplay, 0, n)
	for _, id := range ids[:min(n, maxDisplays)] {
		r := rawDisplay{id: id, bounds: a.CGDisplayBounds(id), main: id == main, builtin: a.CGDisplayIsBuiltin(id) != 0}
		if mode := a.CGDisplayCopyDisplayMode(id); mode != 0 {
			r.pixelWidth = int(a.CGDisplayModeGetPixelWidth(mode))
			r.pixelHeight = int(a.CGDisplayModeGetPixelHeight(mode))
			a.CGDisplayModeRelease(mode)
		}
		out = append(out, r)
	}
	return out, nil
}

// layout returns the displays and their raw data in the same order.
func (b *Backend) layout() ([]geom.Display, []rawDisplay, error) {
	if _, err := b.apiReady(); err != nil {
		return nil, nil, err
	}
	raws, err := b.rawDisplays()
	if err != nil {
		return nil, nil, err
	}
	if len(raws) == 0 {
		return nil, nil, fmt.Errorf("macOS: no active display: wake the Mac or connect a display")
	}
	ds, sorted := layoutDisplays(raws)
	return ds, sorted, nil
}

// Displays lists the active displays ordered left to right, then top to
// bottom, with ids "0", "1", ... Bounds are global points with the main
// display (the one with the menu bar) at (0,0); Scale is device pixels per
// point (2 on Retina).
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ds, _, err := b.layout()
	return ds, err
}
