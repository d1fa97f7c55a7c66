package fake

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/uitree"
)

// OpElements names Elements for FailNext / FailAfter.
const OpElements = "elements"

var _ desktop.ElementSource = (*Backend)(nil)

// SetElements sets the element tree Elements returns: elements in depth-first
// order with Depth set (0 for a window), Role (or PlatformRole, normalized
// when Role is empty), Name, Box in global pixels, States and App. Refs and
// parents are numbered by Elements; fields are named from their labels as
// every element source does.
func (b *Backend) SetElements(els []desktop.Element) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.elements = slices.Clone(els)
}

// Elements returns the tree SetElements set, scoped and bounded as q asks:
// ScopeFocused keeps the window whose name is the active window title (the
// first window when none is), ScopeApp the windows of q.App; elements
// outside every display (or q.Bounds) are left out; MaxElements and MaxDepth
// truncate.
func (b *Backend) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	start := time.Now()
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if err := b.check(ctx, OpElements); err != nil {
		b.mu.Unlock()
		return nil, err
	}
	src, title := slices.Clone(b.elements), b.title
	bounds := q.Bounds
	if bounds == nil {
		for _, d := range b.displays {
			bounds = append(bounds, d.Bounds)
		}
	}
	b.mu.Unlock()
	snap := &desktop.ElementSnapshot{Source: "fake", Query: q}
	win := focusedWindow(src, title)
	keep, apps := true, map[string]bool{}
	var kept []int // platform depths of the returned ancestors of the element at hand
	for i, e := range src {
		if e.Role == "" {
			e.Role = uitree.NormalizeRole(e.PlatformRole, e.States)
		}
		for len(kept) > 0 && kept[len(kept)-1] >= e.Depth {
			kept = kept[:len(kept)-1]
		}
		if e.Depth == 0 {
			switch q.Scope {
			case desktop.ScopeFocused:
				keep = i == win
				if keep {
					snap.Window = e.Name
				}
			case desktop.ScopeApp:
				keep = strings.EqualFold(e.App, q.App)
			}
		}
		box, on := uitree.Clip(e.Box, bounds)
		if !keep || !on || (!q.Generic && e.Role == desktop.RoleGeneric && e.Name == "") {
			continue
		}
		if e.Depth >= q.MaxDepth {
			snap.Truncated, snap.TruncatedBy = true, "depth"
			continue
		}
		if len(snap.Elements) == q.MaxElements {
			snap.Truncated, snap.TruncatedBy = true, "max_elements"
			break
		}
		e.Box = box
		kept = append(kept, e.Depth)
		e.Depth = len(kept) - 1
		if !apps[e.App] {
			apps[e.App] = true
			snap.Apps = append(snap.Apps, e.App)
		}
		snap.Elements = append(snap.Elements, e)
	}
	uitree.Number(snap.Elements)
	uitree.NameFromLabels(snap.Elements)
	snap.Took = time.Since(start)
	return snap, nil
}

// focusedWindow returns the index of the window named title, else of the first window.
func focusedWindow(els []desktop.Element, title string) int {
	first := -1
	for i, e := range els {
		if e.Depth != 0 {
			continue
		}
		if e.Name == title {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return first
}
