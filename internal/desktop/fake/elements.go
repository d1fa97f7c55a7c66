package fake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/uitree"
)

// OpElements names Elements for FailNext / FailAfter.
const OpElements = "elements"

var (
	_ desktop.ElementSource = (*Backend)(nil)
	_ desktop.ElementGate   = (*Backend)(nil)
	_ desktop.ElementActor  = (*Backend)(nil)
)

// OpSetText, OpText and OpPress name the element actor's methods for
// FailNext / FailAfter.
const (
	OpSetText = "set_text"
	OpText    = "text"
	OpPress   = "press"
)

// ElementsAvailable reports whether SetElements gave the fake a tree: a fake
// without one has no element source, as a backend with accessibility off.
func (b *Backend) ElementsAvailable() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.elements != nil
}

// element returns the index of the element with handle h ("fake/N").
func (b *Backend) element(h string) (int, error) {
	var i int
	if _, err := fmt.Sscanf(h, "fake/%d", &i); err != nil || i < 0 || i >= len(b.elements) {
		return 0, fmt.Errorf("fake: no element has handle %q", h)
	}
	return i, nil
}

// SetText replaces the text (Value) of an element whose States.Editable is
// set; another element offers no EditableText (ErrUnsupported).
func (b *Backend) SetText(ctx context.Context, handle, text string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(ctx, OpSetText); err != nil {
		return err
	}
	i, err := b.element(handle)
	if err != nil {
		return err
	}
	if !b.elements[i].States.Editable {
		return fmt.Errorf("fake: element %q offers no editable text: %w", b.elements[i].Name, desktop.ErrUnsupported)
	}
	b.elements[i].Value = text
	return nil
}

// Text returns the text (Value) of an element.
func (b *Backend) Text(ctx context.Context, handle string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(ctx, OpText); err != nil {
		return "", err
	}
	i, err := b.element(handle)
	if err != nil {
		return "", err
	}
	return b.elements[i].Value, nil
}

// Press notes the element's name (PressedElements lists them).
func (b *Backend) Press(ctx context.Context, handle string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(ctx, OpPress); err != nil {
		return err
	}
	i, err := b.element(handle)
	if err != nil {
		return err
	}
	b.pressed = append(b.pressed, b.elements[i].Name)
	return nil
}

// PressedElements lists the names of the elements Press pressed, in order.
func (b *Backend) PressedElements() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.pressed)
}

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
		if e.Handle == "" {
			e.Handle = fmt.Sprintf("fake/%d", i)
		}
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
