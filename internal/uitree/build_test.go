package uitree

import (
	"context"
	"fmt"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// tree is a fake platform tree: node name -> children.
type fakeTree struct {
	kids    map[*Node][]*Node
	calls   int
	block   chan struct{} // when set, Children blocks until it is closed
	blocked chan struct{} // closed when Children first blocks
}

func (f *fakeTree) children(ctx context.Context, n *Node, limit int) ([]*Node, error) {
	f.calls++
	if f.block != nil {
		if f.blocked != nil {
			close(f.blocked)
			f.blocked = nil
		}
		<-f.block
	}
	k := f.kids[n]
	if len(k) > limit {
		k = k[:limit]
	}
	return k, nil
}

func norm(t *testing.T, q desktop.ElementQuery) desktop.ElementQuery {
	t.Helper()
	q, err := q.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func node(role desktop.Role, name string, x, y, w, h int) *Node {
	return &Node{Role: role, PlatformRole: string(role), Name: name, Box: geom.Rect{X: x, Y: y, W: w, H: h}, Handle: name}
}

func TestBuilderRefsParentsClipping(t *testing.T) {
	win := node(desktop.RoleWindow, "Form", 0, 0, 800, 600)
	pane := &Node{Role: desktop.RoleGeneric, Box: geom.Rect{X: 0, Y: 100, W: 800, H: 200}, Clips: true}
	ok := node(desktop.RoleButton, "OK", 10, 10, 80, 30)
	okText := node(desktop.RoleText, "OK", 12, 12, 70, 20)
	label := node(desktop.RoleText, "Name", 10, 120, 60, 20)
	field := &Node{Role: desktop.RoleTextbox, Box: geom.Rect{X: 80, Y: 120, W: 200, H: 20}, Value: "Ada"}
	below := node(desktop.RoleButton, "Scrolled away", 10, 400, 80, 30) // outside the pane
	half := node(desktop.RoleButton, "Half", 10, 290, 80, 30)           // half inside the pane
	hidden := node(desktop.RoleButton, "Offscreen", 10, 50, 80, 30)
	hidden.Hidden = true
	pw := &Node{Role: desktop.RoleTextbox, Name: "Password", Value: "secret", States: desktop.States{Protected: true}, Box: geom.Rect{X: 300, Y: 10, W: 100, H: 20}}
	offDisplay := node(desktop.RoleButton, "Far", 5000, 10, 80, 30)
	f := &fakeTree{kids: map[*Node][]*Node{
		win: {ok, pane, hidden, pw, offDisplay}, ok: {okText}, pane: {label, field, below, half},
	}}
	q := norm(t, desktop.ElementQuery{Bounds: []geom.Rect{{W: 1920, H: 1080}}})
	b := NewBuilder("test", q)
	if !b.Window(context.Background(), "app", win, f.children) {
		t.Fatal("Window reported the walk over")
	}
	s := b.Snapshot()
	var got []string
	for _, e := range s.Elements {
		got = append(got, fmt.Sprintf("%s %s %q<-%s d%d %v v=%q %s", e.Ref, e.Role, e.Name, e.Parent, e.Depth, e.Box, e.Value, e.NameFrom))
	}
	want := []string{
		`e1 window "Form"<- d0 800x600+0+0 v="" `,
		`e2 button "OK"<-e1 d1 80x30+10+10 v="" `,
		`e3 text "Name"<-e1 d1 60x20+10+120 v="" `,
		`e4 textbox "Name"<-e1 d1 200x20+80+120 v="Ada" label`,
		`e5 button "Half"<-e1 d1 80x10+10+290 v="" `,
		`e6 textbox "Password"<-e1 d1 100x20+300+10 v="" `,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("elements:\n%s\nwant:\n%s", join(got), join(want))
	}
	if s.Truncated || s.Source != "test" || len(s.Apps) != 1 || s.Apps[0] != "app" {
		t.Errorf("snapshot: truncated %v source %q apps %v", s.Truncated, s.Source, s.Apps)
	}
}

func join(s []string) string {
	out := ""
	for _, l := range s {
		out += "  " + l + "\n"
	}
	return out
}

// wide is a window with one list of n items.
func wide(n int) (*Node, *fakeTree) {
	win := node(desktop.RoleWindow, "W", 0, 0, 800, 600)
	list := node(desktop.RoleList, "L", 0, 0, 800, 600)
	f := &fakeTree{kids: map[*Node][]*Node{win: {list}}}
	for i := range n {
		f.kids[list] = append(f.kids[list], node(desktop.RoleListItem, fmt.Sprintf("row %d", i), 0, i%600, 800, 1))
	}
	return win, f
}

func TestBuilderMaxElements(t *testing.T) {
	win, f := wide(10000)
	q := norm(t, desktop.ElementQuery{MaxElements: 50})
	b := NewBuilder("test", q)
	if b.Window(context.Background(), "app", win, f.children) {
		t.Error("Window reported more to walk after the cap")
	}
	s := b.Snapshot()
	if len(s.Elements) != 50 || !s.Truncated || s.TruncatedBy != "max_elements" {
		t.Errorf("%d elements, truncated %v by %q; want 50, max_elements", len(s.Elements), s.Truncated, s.TruncatedBy)
	}
}

func TestBuilderChildrenAskedForNoMoreThanTheCandidateCap(t *testing.T) {
	win, f := wide(10000)
	var asked []int
	q := norm(t, desktop.ElementQuery{MaxElements: 10})
	b := NewBuilder("test", q)
	b.Window(context.Background(), "app", win, func(ctx context.Context, n *Node, limit int) ([]*Node, error) {
		asked = append(asked, limit)
		return f.children(ctx, n, limit)
	})
	for _, l := range asked {
		if l > 40 {
			t.Errorf("children asked for with limit %d; the candidate cap is 4*10", l)
		}
	}
}

func TestBuilderDepth(t *testing.T) {
	win := node(desktop.RoleWindow, "W", 0, 0, 800, 600)
	f := &fakeTree{kids: map[*Node][]*Node{}}
	n := win
	for i := range 10 {
		k := node(desktop.RoleGroup, fmt.Sprintf("g%d", i), 0, 0, 800, 600)
		f.kids[n] = []*Node{k}
		n = k
	}
	b := NewBuilder("test", norm(t, desktop.ElementQuery{MaxDepth: 4}))
	b.Window(context.Background(), "app", win, f.children)
	s := b.Snapshot()
	if len(s.Elements) != 4 || s.TruncatedBy != "depth" {
		t.Errorf("%d elements truncated by %q; want 4 (depths 0-3), depth", len(s.Elements), s.TruncatedBy)
	}
	if d := s.Elements[3].Depth; d != 3 {
		t.Errorf("deepest element at depth %d, want 3", d)
	}
}

func TestBuilderBudgetAndAbandon(t *testing.T) {
	win, f := wide(100)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := NewBuilder("test", norm(t, desktop.ElementQuery{}))
	b.Window(ctx, "app", win, f.children)
	if s := b.Snapshot(); s.TruncatedBy != "budget" {
		t.Errorf("a cancelled walk is truncated by %q, want budget", s.TruncatedBy)
	}

	// A walk blocked in a hung application: the caller abandons it and
	// returns what it has; the walk stops when the call returns.
	win, f = wide(100)
	f.block, f.blocked = make(chan struct{}), make(chan struct{})
	blocked := f.blocked
	b = NewBuilder("test", norm(t, desktop.ElementQuery{}))
	done := make(chan bool)
	go func() { done <- b.Window(context.Background(), "app", win, f.children) }()
	<-blocked
	b.Abandon("unresponsive")
	s := b.Snapshot()
	if len(s.Elements) != 1 || s.TruncatedBy != "unresponsive" {
		t.Errorf("abandoned: %d elements truncated by %q; want the window only, unresponsive", len(s.Elements), s.TruncatedBy)
	}
	close(f.block)
	if <-done {
		t.Error("an abandoned walk went on")
	}
	if n := len(b.Snapshot().Elements); n > 2 {
		t.Errorf("an abandoned walk added %d elements after it was abandoned", n-1)
	}
}
