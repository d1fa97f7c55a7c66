package desktop

import (
	"context"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

// ElementSource reads the UI as elements: the platform's accessibility tree
// (AT-SPI2 on Linux), bounded by an ElementQuery. It is an optional capability
// of a backend: find it with ElementsOf, which also sees through wrappers.
//
// Elements must return within the query's budget (plus a small margin) even
// when an application hangs: what it has by then comes back marked Truncated.
type ElementSource interface {
	Elements(ctx context.Context, q ElementQuery) (*ElementSnapshot, error)
}

// ElementGate is implemented by a backend that has the Elements method but
// may have no element source attached at run time (the X11 backend with
// GUI_AGENT_ACCESSIBILITY=off): ElementsOf asks it before answering.
type ElementGate interface {
	ElementsAvailable() bool
}

// Unwrapper is implemented by a Screen that wraps another one in a field
// rather than by embedding it. ElementsOf follows Unwrap to find the element
// source of the wrapped backend. (A wrapper that embeds the backend's
// concrete type forwards every optional capability by method promotion and
// needs nothing more.)
type Unwrapper interface {
	Unwrap() Screen
}

// ElementsOf returns s's element source: s itself when it implements
// ElementSource (and, when it is an ElementGate, has one attached), else the
// element source of what s unwraps to.
func ElementsOf(s Screen) (ElementSource, bool) {
	for i := 0; s != nil && i < 16; i++ {
		if src, ok := s.(ElementSource); ok {
			if g, ok := s.(ElementGate); !ok || g.ElementsAvailable() {
				return src, true
			}
		}
		u, ok := s.(Unwrapper)
		if !ok {
			return nil, false
		}
		s = u.Unwrap()
	}
	return nil, false
}

// Role is a normalized, ARIA-like role: the same word for the same kind of
// control on every platform. Element.PlatformRole keeps the platform's own.
type Role string

// Normalized roles.
const (
	RoleButton       Role = "button"
	RoleTextbox      Role = "textbox"
	RoleCheckbox     Role = "checkbox"
	RoleRadio        Role = "radio"
	RoleCombobox     Role = "combobox"
	RoleLink         Role = "link"
	RoleMenu         Role = "menu"
	RoleMenuBar      Role = "menubar"
	RoleMenuItem     Role = "menuitem"
	RoleTab          Role = "tab"
	RoleTabList      Role = "tablist"
	RoleTabPanel     Role = "tabpanel"
	RoleList         Role = "list"
	RoleListItem     Role = "listitem"
	RoleTree         Role = "tree"
	RoleTreeItem     Role = "treeitem"
	RoleTable        Role = "table"
	RoleRow          Role = "row"
	RoleCell         Role = "cell"
	RoleColumnHeader Role = "columnheader"
	RoleSlider       Role = "slider"
	RoleSpinButton   Role = "spinbutton"
	RoleScrollBar    Role = "scrollbar"
	RoleProgressBar  Role = "progressbar"
	RoleHeading      Role = "heading"
	RoleText         Role = "text"
	RoleImage        Role = "image"
	RoleDialog       Role = "dialog"
	RoleAlert        Role = "alert"
	RoleWindow       Role = "window"
	RoleToolbar      Role = "toolbar"
	RoleStatus       Role = "status"
	RoleTooltip      Role = "tooltip"
	RoleGroup        Role = "group"
	RoleDocument     Role = "document"
	RoleSeparator    Role = "separator"
	RoleApplication  Role = "application"
	// RoleGeneric is a container with no meaning of its own (panel, filler,
	// viewport...). Snapshots leave unnamed generic elements out unless
	// ElementQuery.Generic asks for them.
	RoleGeneric Role = "generic"
)

// NameFrom says where an element's name came from.
type NameFrom string

// Sources of a name.
const (
	NameFromAccessible NameFrom = ""         // the accessible name the application gave
	NameFromRelation   NameFrom = "relation" // the element its labelled-by relation points to
	NameFromLabel      NameFrom = "label"    // a label that sits next to the field (left of it or above it)
)

// States are the states of an element that matter to an agent.
type States struct {
	Focused   bool `json:"focused,omitempty"`
	Enabled   bool `json:"enabled,omitempty"`
	Checked   bool `json:"checked,omitempty"`
	Selected  bool `json:"selected,omitempty"`
	Expanded  bool `json:"expanded,omitempty"`
	Editable  bool `json:"editable,omitempty"`
	Protected bool `json:"protected,omitempty"` // a password field: its value is never read
}

// List returns the set states by name, in the order of the struct.
func (s States) List() []string {
	var out []string
	for _, st := range []struct {
		on   bool
		name string
	}{{s.Focused, "focused"}, {s.Enabled, "enabled"}, {s.Checked, "checked"}, {s.Selected, "selected"},
		{s.Expanded, "expanded"}, {s.Editable, "editable"}, {s.Protected, "protected"}} {
		if st.on {
			out = append(out, st.name)
		}
	}
	return out
}

// Element is one element of a snapshot.
type Element struct {
	// Ref names the element within its snapshot: "e1", "e2", ... in tree order.
	Ref string `json:"ref"`
	// Role is the normalized role; PlatformRole the platform's own ("push button").
	Role         Role   `json:"role"`
	PlatformRole string `json:"platform_role"`
	// Name is the accessible name, else the labelled-by relation's, else a
	// neighbouring label's; NameFrom says which.
	Name     string   `json:"name,omitempty"`
	NameFrom NameFrom `json:"name_from,omitempty"`
	// Value is the text of a text field (never of a protected one), or the
	// current value of a slider or spin button.
	Value  string `json:"value,omitempty"`
	States States `json:"states"`
	// Box is the element's extent in global logical pixels, clipped to the
	// screen.
	Box geom.Rect `json:"box"`
	// Depth is 0 for a window and grows by one per returned ancestor; Parent
	// is the ref of the nearest returned ancestor ("" for a window).
	Depth  int    `json:"depth"`
	Parent string `json:"parent,omitempty"`
	// App is the name of the application the element belongs to.
	App string `json:"app,omitempty"`
	// Handle is the source's own address of the element (AT-SPI: bus name and
	// object path), for acting on it through the platform later. Opaque.
	Handle string `json:"-"`
}

// Scope chooses which part of the desktop a snapshot covers.
type Scope string

// Scopes.
const (
	ScopeFocused Scope = "focused" // the focused (active) window; the default
	ScopeAll     Scope = "all"     // every window of every application
	ScopeApp     Scope = "app"     // every window of the application named ElementQuery.App
)

// Limits of a snapshot: defaults when a query leaves them zero, and the caps
// no query may exceed.
const (
	DefaultMaxElements = 500
	MaxElementsCap     = 5000
	DefaultBudget      = 2 * time.Second
	BudgetCap          = 10 * time.Second
	DefaultMaxDepth    = 40
	MaxDepthCap        = 200
)

// ElementQuery bounds and scopes a snapshot. The zero value asks for the
// focused window with the default limits.
type ElementQuery struct {
	Scope Scope `json:"scope,omitempty"`
	// App names the application for ScopeApp (case-insensitive).
	App string `json:"app,omitempty"`
	// MaxElements stops the walk after this many returned elements (0: DefaultMaxElements).
	MaxElements int `json:"max_elements,omitempty"`
	// Budget is the time the walk may take (0: DefaultBudget).
	Budget time.Duration `json:"budget,omitempty"`
	// MaxDepth stops the walk below this depth of the platform tree (0: DefaultMaxDepth).
	MaxDepth int `json:"max_depth,omitempty"`
	// Generic also returns unnamed generic containers.
	Generic bool `json:"generic,omitempty"`
	// ActiveWindow is the title of the focused window as the backend knows it
	// (X11: _NET_ACTIVE_WINDOW or the input focus), a hint for ScopeFocused
	// when no window reports itself active. Backends fill it.
	ActiveWindow string `json:"-"`
	// Bounds are the visible areas (the displays) in the source's own
	// coordinates; elements outside all of them are left out. Backends fill
	// it; nil means no clipping.
	Bounds []geom.Rect `json:"-"`
}

// Normalize checks q and fills its defaults. An error names the bad field and
// the accepted range.
func (q ElementQuery) Normalize() (ElementQuery, error) {
	switch q.Scope {
	case "":
		q.Scope = ScopeFocused
	case ScopeFocused, ScopeAll:
	case ScopeApp:
		if q.App == "" {
			return q, fmt.Errorf("scope %q needs the application's name: set app (see the snapshot's apps for the names)", ScopeApp)
		}
	default:
		return q, fmt.Errorf("unknown scope %q: use focused, all or app", q.Scope)
	}
	var err error
	if q.MaxElements, err = limit("max_elements", q.MaxElements, DefaultMaxElements, MaxElementsCap); err != nil {
		return q, err
	}
	if q.MaxDepth, err = limit("max_depth", q.MaxDepth, DefaultMaxDepth, MaxDepthCap); err != nil {
		return q, err
	}
	b, err := limit("budget", int(q.Budget/time.Millisecond), int(DefaultBudget/time.Millisecond), int(BudgetCap/time.Millisecond))
	if err != nil {
		return q, fmt.Errorf("%w (milliseconds)", err)
	}
	q.Budget = time.Duration(b) * time.Millisecond
	return q, nil
}

func limit(name string, v, def, max int) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0:
		return 0, fmt.Errorf("%s %d is negative: use 1 to %d, or leave it out for %d", name, v, max, def)
	case v > max:
		return 0, fmt.Errorf("%s %d is over the cap %d: use 1 to %d", name, v, max, max)
	}
	return v, nil
}

// ElementSnapshot is what one walk returned.
type ElementSnapshot struct {
	// Source names the element source ("atspi", "fake").
	Source   string    `json:"source"`
	Elements []Element `json:"elements"`
	// Truncated is set when the walk stopped early (TruncatedBy says why:
	// "max_elements", "budget", "depth", or "unresponsive" when an
	// application did not answer in time); what it has is returned.
	Truncated   bool   `json:"truncated"`
	TruncatedBy string `json:"truncated_by,omitempty"`
	// Query is the query as run, with its defaults filled.
	Query ElementQuery `json:"query"`
	// Window is the title of the focused window for ScopeFocused.
	Window string `json:"window,omitempty"`
	// Apps lists the applications the walk visited.
	Apps []string `json:"apps,omitempty"`
	// Took is how long the walk took.
	Took time.Duration `json:"took"`
}

// Lookup returns the element with the given ref.
func (s *ElementSnapshot) Lookup(ref string) (Element, bool) {
	for _, e := range s.Elements {
		if e.Ref == ref {
			return e, true
		}
	}
	return Element{}, false
}

// ElementActor acts on the elements of a snapshot through the platform's
// accessibility interfaces rather than through input (AT-SPI2: EditableText,
// Text and Action; UI Automation: ValuePattern and InvokePattern; AX: AXValue
// and AXPress). It is an optional capability of an element source: find it
// with ActorOf. Each method takes an Element.Handle of a snapshot of the same
// backend; an element that does not offer the interface a method needs gives
// an error wrapping ErrUnsupported (the caller falls back to input), one that
// is gone another error.
type ElementActor interface {
	// SetText replaces the whole text of an editable element (UIA and AX
	// read it back and fail when another value stayed).
	SetText(ctx context.Context, handle, text string) error
	// Text reads the whole text of an element.
	Text(ctx context.Context, handle string) (string, error)
	// Press performs the element's first action (press, click, activate).
	Press(ctx context.Context, handle string) error
}

// MoveRects returns a copy of rs with each rectangle moved by (dx, dy);
// never nil.
func MoveRects(rs []geom.Rect, dx, dy int) []geom.Rect {
	out := make([]geom.Rect, len(rs))
	for i, r := range rs {
		r.X += dx
		r.Y += dy
		out[i] = r
	}
	return out
}

// Move moves the element boxes and the query's bounds of s by (dx, dy): a
// backend whose element source works in a space of its own (X root-window
// pixels, a compositor's layout) moves what the source returns into global
// logical pixels.
func (s *ElementSnapshot) Move(dx, dy int) {
	for i := range s.Elements {
		s.Elements[i].Box.X += dx
		s.Elements[i].Box.Y += dy
	}
	s.Query.Bounds = MoveRects(s.Query.Bounds, dx, dy)
}

// SourceActor is the ElementActor of a backend whose element source is
// attached from outside (X11 and Wayland, over AT-SPI2): it acts through
// Source's own actor. A Source with no actor, or none, gives errors
// wrapping ErrUnsupported. Such a backend embeds one.
type SourceActor struct{ Source ElementSource }

func (s SourceActor) actor() (ElementActor, error) {
	if a, ok := s.Source.(ElementActor); ok {
		return a, nil
	}
	return nil, fmt.Errorf("acting on an element: %w: the element source cannot", ErrUnsupported)
}

// SetText sets an element's text through the attached element source.
func (s SourceActor) SetText(ctx context.Context, handle, text string) error {
	a, err := s.actor()
	if err != nil {
		return err
	}
	return a.SetText(ctx, handle, text)
}

// Text reads an element's text through the attached element source.
func (s SourceActor) Text(ctx context.Context, handle string) (string, error) {
	a, err := s.actor()
	if err != nil {
		return "", err
	}
	return a.Text(ctx, handle)
}

// Press performs an element's action through the attached element source.
func (s SourceActor) Press(ctx context.Context, handle string) error {
	a, err := s.actor()
	if err != nil {
		return err
	}
	return a.Press(ctx, handle)
}

// ActorOf returns s's element actor, found as ElementsOf finds its element
// source (through wrappers, and only while an element source is attached).
func ActorOf(s Screen) (ElementActor, bool) {
	for i := 0; s != nil && i < 16; i++ {
		if a, ok := s.(ElementActor); ok {
			if g, ok := s.(ElementGate); !ok || g.ElementsAvailable() {
				return a, true
			}
		}
		u, ok := s.(Unwrapper)
		if !ok {
			return nil, false
		}
		s = u.Unwrap()
	}
	return nil, false
}
