package uitree

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Node is one element of a platform tree as an element source read it: the
// input of a Builder. Box is already in global logical pixels (the source
// maps its own coordinates: UIA's physical pixels, AX's points).
type Node struct {
	PlatformRole string
	Role         desktop.Role
	Name, Value  string
	States       desktop.States
	Box          geom.Rect // empty: the element reports no extent
	// Hidden leaves the node and its subtree out (UIA IsOffscreen, a window
	// that is minimized).
	Hidden bool
	// Clips marks a scroll container: its box clips its descendants'.
	Clips bool
	// Leaf says the node has no children worth reading (a UIA button's text
	// child says its name again): the walk does not ask for them.
	Leaf bool
	// Handle is the source's address of the element (Element.Handle).
	Handle string
	// Data is the source's own, for fetching the children.
	Data any
}

// Children fetches the children of a node, at most limit of them. It is
// called as the walk reaches the node, so the walk's bounds stop the
// fetching as well. An error stops the walk (context errors read as
// "budget"; ErrUnresponsive as "unresponsive").
type Children func(ctx context.Context, n *Node, limit int) ([]*Node, error)

// ErrUnresponsive is what a Children function returns when the application
// did not answer.
var ErrUnresponsive = errors.New("the application did not answer")

// Builder turns platform trees into a snapshot under a query's bounds: the
// element and candidate caps, the depth cap, the budget (the context's
// deadline), clipping to the query's Bounds and to scroll containers, refs
// and parents in tree order. It is safe to read (Snapshot, Abandon) from
// another goroutine while a walk runs: a source whose walk blocks in a hung
// application returns what the builder has when its budget is up.
type Builder struct {
	q     desktop.ElementQuery
	mu    sync.Mutex
	snap  *desktop.ElementSnapshot
	cands int
	gone  bool // abandoned: the walk stops at its next step
}

// errStop ends a walk early: full, or abandoned.
var errStop = errors.New("stop")

// NewBuilder starts a snapshot of source for q (q normalized already).
func NewBuilder(source string, q desktop.ElementQuery) *Builder {
	return &Builder{q: q, snap: &desktop.ElementSnapshot{Source: source, Query: q}}
}

// Window walks one window, win (depth 0), of application app. It returns
// false when the walk is over (a bound reached, the builder abandoned): the
// caller walks no further windows.
func (b *Builder) Window(ctx context.Context, app string, win *Node, children Children) bool {
	b.mu.Lock()
	if b.gone {
		b.mu.Unlock()
		return false
	}
	b.snap.Apps = appendOnce(b.snap.Apps, app)
	b.mu.Unlock()
	err := b.walk(ctx, app, win, children, 0, -1, geom.Rect{W: -1})
	if err == nil {
		return true
	}
	if !errors.Is(err, errStop) {
		b.truncate(truncation(err))
	}
	return false
}

// SetWindow records the focused window's title.
func (b *Builder) SetWindow(title string) {
	b.mu.Lock()
	b.snap.Window = title
	b.mu.Unlock()
}

// Truncate marks the snapshot truncated by why (the first reason stays).
func (b *Builder) Truncate(why string) { b.truncate(why) }

// Abandon stops the walk at its next step and marks the snapshot truncated
// by why; the snapshot keeps what it has.
func (b *Builder) Abandon(why string) {
	b.mu.Lock()
	b.gone = true
	b.mu.Unlock()
	b.truncate(why)
}

// Snapshot returns a copy of the snapshot as it is, with neighbouring
// labels naming unnamed fields.
func (b *Builder) Snapshot() *desktop.ElementSnapshot {
	b.mu.Lock()
	s := *b.snap
	s.Elements = append([]desktop.Element(nil), b.snap.Elements...)
	s.Apps = append([]string(nil), b.snap.Apps...)
	b.mu.Unlock()
	NameFromLabels(s.Elements)
	return &s
}

func (b *Builder) truncate(why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.snap.Truncated = true
	if b.snap.TruncatedBy == "" {
		b.snap.TruncatedBy = why
	}
}

func truncation(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "budget"
	case errors.Is(err, ErrUnresponsive):
		return "unresponsive"
	}
	return "error: " + err.Error()
}

// walk adds n (when it is returned) and its subtree. parent is the index of
// the nearest returned ancestor (-1: none); clip what the ancestors' scroll
// containers leave visible (W<0: unclipped).
func (b *Builder) walk(ctx context.Context, app string, n *Node, children Children, depth, parent int, clip geom.Rect) error {
	if n.Hidden {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	box, onScreen := n.Box, !n.Box.Empty()
	if onScreen && clip.W >= 0 {
		box = box.Intersect(clip)
		onScreen = !box.Empty()
	}
	if n.Clips && onScreen {
		clip = box
	}
	idx, err := b.add(app, n, box, onScreen, parent)
	if err != nil {
		return err
	}
	if idx >= 0 {
		parent = idx
	}
	if n.Leaf {
		return nil
	}
	if depth+1 >= b.q.MaxDepth {
		b.truncate("depth")
		return nil
	}
	b.mu.Lock()
	room := 4*b.q.MaxElements - b.cands
	b.mu.Unlock()
	if room <= 0 {
		b.truncate("max_elements") // the siblings fetched already are still walked
		return nil
	}
	kids, err := children(ctx, n, room)
	if err != nil {
		return fmt.Errorf("read the children of %q: %w", n.Name, err)
	}
	b.mu.Lock()
	b.cands += len(kids)
	b.mu.Unlock()
	for _, k := range kids {
		if err := b.walk(ctx, app, k, children, depth+1, parent, clip); err != nil {
			return err
		}
	}
	return nil
}

// add returns n's index in the snapshot, or -1 when it is not returned.
func (b *Builder) add(app string, n *Node, box geom.Rect, onScreen bool, parent int) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone {
		return -1, errStop
	}
	keep := b.q.Generic || n.Name != "" || (n.Role != desktop.RoleGeneric && n.Role != desktop.RoleText)
	if !keep || !onScreen {
		return -1, nil
	}
	box, ok := Clip(box, b.q.Bounds)
	if !ok {
		return -1, nil
	}
	els := b.snap.Elements
	if n.Role == desktop.RoleText && parent >= 0 && els[parent].Name == n.Name && !b.q.Generic {
		return -1, nil // the text inside a button or link that says the same
	}
	if len(els) == b.q.MaxElements {
		b.snap.Truncated = true
		if b.snap.TruncatedBy == "" {
			b.snap.TruncatedBy = "max_elements"
		}
		return -1, errStop
	}
	e := desktop.Element{Ref: fmt.Sprintf("e%d", len(els)+1), Role: n.Role, PlatformRole: n.PlatformRole,
		Name: n.Name, States: n.States, Box: box, App: app, Handle: n.Handle}
	if !n.States.Protected {
		e.Value = n.Value
	}
	if parent >= 0 {
		e.Parent, e.Depth = els[parent].Ref, els[parent].Depth+1
	}
	b.snap.Elements = append(els, e)
	return len(els), nil
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
