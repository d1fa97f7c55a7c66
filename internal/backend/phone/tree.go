package phone

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/uitree"
)

// Node is one view of a phone's view tree as uiautomator (and its
// relatives: WebDriverAgent's source, HarmonyOS's uitest dump) describe
// it. Bounds are in the device's pixels (in points for WebDriverAgent,
// whose Tree has Scale 1).
type Node struct {
	Class      string // "android.widget.Button"
	Text       string
	Desc       string // content-desc (accessibility label)
	ResourceID string // "com.example:id/name"
	Package    string
	Bounds     image.Rectangle
	Checkable, Checked, Clickable, Enabled, Focusable, Focused,
	Scrollable, LongClickable, Password, Selected bool
	Hint     string
	Children []*Node
	// Path is the node's place in the tree ("0.2.1"), set by ParseUIAutomator.
	Path string
}

// ParseUIAutomator parses the XML `uiautomator dump` writes. It returns
// the hierarchy's top nodes (one per window) and the rotation it states.
func ParseUIAutomator(data []byte) ([]*Node, int, error) {
	var h struct {
		Rotation int     `xml:"rotation,attr"`
		Nodes    []xnode `xml:"node"`
	}
	if err := xml.Unmarshal(data, &h); err != nil {
		return nil, 0, fmt.Errorf("reading the uiautomator dump: %w", err)
	}
	var out []*Node
	for i := range h.Nodes {
		out = append(out, h.Nodes[i].node(strconv.Itoa(i)))
	}
	return out, h.Rotation, nil
}

type xnode struct {
	Text          string  `xml:"text,attr"`
	ResourceID    string  `xml:"resource-id,attr"`
	Class         string  `xml:"class,attr"`
	Package       string  `xml:"package,attr"`
	Desc          string  `xml:"content-desc,attr"`
	Hint          string  `xml:"hint,attr"`
	Checkable     string  `xml:"checkable,attr"`
	Checked       string  `xml:"checked,attr"`
	Clickable     string  `xml:"clickable,attr"`
	Enabled       string  `xml:"enabled,attr"`
	Focusable     string  `xml:"focusable,attr"`
	Focused       string  `xml:"focused,attr"`
	Scrollable    string  `xml:"scrollable,attr"`
	LongClickable string  `xml:"long-clickable,attr"`
	Password      string  `xml:"password,attr"`
	Selected      string  `xml:"selected,attr"`
	Bounds        string  `xml:"bounds,attr"`
	Nodes         []xnode `xml:"node"`
}

func (x *xnode) node(path string) *Node {
	n := &Node{Class: x.Class, Text: x.Text, Desc: x.Desc, ResourceID: x.ResourceID, Package: x.Package, Hint: x.Hint,
		Checkable: x.Checkable == "true", Checked: x.Checked == "true", Clickable: x.Clickable == "true",
		Enabled: x.Enabled != "false", Focusable: x.Focusable == "true", Focused: x.Focused == "true",
		Scrollable: x.Scrollable == "true", LongClickable: x.LongClickable == "true", Password: x.Password == "true",
		Selected: x.Selected == "true", Bounds: ParseBounds(x.Bounds), Path: path}
	for i := range x.Nodes {
		n.Children = append(n.Children, x.Nodes[i].node(path+"."+strconv.Itoa(i)))
	}
	return n
}

// ParseBounds parses uiautomator's "[x1,y1][x2,y2]".
func ParseBounds(s string) image.Rectangle {
	var r image.Rectangle
	if _, err := fmt.Sscanf(s, "[%d,%d][%d,%d]", &r.Min.X, &r.Min.Y, &r.Max.X, &r.Max.Y); err != nil {
		return image.Rectangle{}
	}
	return r.Canon()
}

// roles maps a view class's simple name to a role.
var roles = map[string]desktop.Role{
	"Button": desktop.RoleButton, "ImageButton": desktop.RoleButton, "MaterialButton": desktop.RoleButton,
	"FloatingActionButton": desktop.RoleButton, "ExtendedFloatingActionButton": desktop.RoleButton,
	"EditText": desktop.RoleTextbox, "AutoCompleteTextView": desktop.RoleTextbox, "TextInputEditText": desktop.RoleTextbox,
	"MultiAutoCompleteTextView": desktop.RoleTextbox, "SearchView": desktop.RoleTextbox,
	"CheckBox": desktop.RoleCheckbox, "CheckedTextView": desktop.RoleCheckbox, "Switch": desktop.RoleCheckbox,
	"SwitchCompat": desktop.RoleCheckbox, "SwitchMaterial": desktop.RoleCheckbox, "MaterialSwitch": desktop.RoleCheckbox,
	"ToggleButton": desktop.RoleCheckbox, "MaterialCheckBox": desktop.RoleCheckbox,
	"RadioButton": desktop.RoleRadio, "MaterialRadioButton": desktop.RoleRadio, "RadioGroup": desktop.RoleGroup,
	"ImageView": desktop.RoleImage, "AppCompatImageView": desktop.RoleImage,
	"TextView": desktop.RoleText, "AppCompatTextView": desktop.RoleText, "MaterialTextView": desktop.RoleText,
	"Spinner": desktop.RoleCombobox, "AppCompatSpinner": desktop.RoleCombobox,
	"SeekBar": desktop.RoleSlider, "RatingBar": desktop.RoleSlider, "Slider": desktop.RoleSlider,
	"ProgressBar": desktop.RoleProgressBar, "NumberPicker": desktop.RoleSpinButton,
	"ListView": desktop.RoleList, "RecyclerView": desktop.RoleList, "GridView": desktop.RoleList, "ExpandableListView": desktop.RoleList,
	"TabWidget": desktop.RoleTabList, "TabLayout": desktop.RoleTabList, "TabView": desktop.RoleTab,
	"WebView": desktop.RoleDocument, "Toolbar": desktop.RoleToolbar, "ActionBar": desktop.RoleToolbar,
	"ScrollView": desktop.RoleGroup, "HorizontalScrollView": desktop.RoleGroup, "NestedScrollView": desktop.RoleGroup, "ViewPager": desktop.RoleGroup,
}

// RoleOf returns a node's role: by its class, and for a class of no
// meaning of its own (a View of Compose, a layout) by what it does.
func RoleOf(n *Node) desktop.Role {
	simple := n.Class[strings.LastIndexByte(n.Class, '.')+1:]
	if r, ok := roles[simple]; ok {
		return r
	}
	switch {
	case n.Checkable:
		return desktop.RoleCheckbox
	case n.Clickable && (n.Text != "" || n.Desc != ""):
		return desktop.RoleButton
	case strings.HasSuffix(simple, "EditText"):
		return desktop.RoleTextbox
	case strings.HasSuffix(simple, "Button"):
		return desktop.RoleButton
	case strings.HasSuffix(simple, "TextView") || (n.Text != "" && len(n.Children) == 0):
		return desktop.RoleText
	case strings.HasSuffix(simple, "ImageView"):
		return desktop.RoleImage
	}
	return desktop.RoleGeneric
}

// Handle is the address of a node in a later dump: its resource id when
// it has one, its class and its bounds.
func Handle(n *Node) string {
	return fmt.Sprintf("%s|%s|%d,%d,%d,%d", n.ResourceID, n.Class, n.Bounds.Min.X, n.Bounds.Min.Y, n.Bounds.Max.X, n.Bounds.Max.Y)
}

// Find returns the node of roots a Handle names: the same resource id and
// class (the bounds decide between several, and name a node without an id).
func Find(roots []*Node, handle string) (*Node, bool) {
	b, ok := HandleBounds(handle)
	if !ok {
		return nil, false
	}
	parts := strings.SplitN(handle, "|", 3)
	var best *Node
	bestD := math.MaxInt
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Class == parts[1] && n.ResourceID == parts[0] {
			d := abs(n.Bounds.Min.X-b.Min.X) + abs(n.Bounds.Min.Y-b.Min.Y) + abs(n.Bounds.Max.X-b.Max.X) + abs(n.Bounds.Max.Y-b.Max.Y)
			if (parts[0] != "" || d == 0) && d < bestD {
				best, bestD = n, d
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return best, best != nil
}

// ErrGone is what Lookup returns for a handle whose node is gone.
var ErrGone = errors.New("the element is no longer on the screen (take a new snapshot)")

// Lookup is Find of a backend's element actor: a node no longer there is
// ErrGone.
func Lookup(roots []*Node, handle string) (*Node, error) {
	n, ok := Find(roots, handle)
	if !ok {
		return nil, ErrGone
	}
	return n, nil
}

// HandleBounds returns the bounds a Handle names (device pixels), and
// false when handle is not one.
func HandleBounds(handle string) (image.Rectangle, bool) {
	parts := strings.SplitN(handle, "|", 3)
	var r image.Rectangle
	if len(parts) != 3 {
		return r, false
	}
	if _, err := fmt.Sscanf(parts[2], "%d,%d,%d,%d", &r.Min.X, &r.Min.Y, &r.Max.X, &r.Max.Y); err != nil {
		return image.Rectangle{}, false
	}
	return r, true
}

// HandleCentre returns the centre of the bounds a Handle names (device
// pixels); system names the backend in the error of a string that is not
// a Handle.
func HandleCentre(handle, system string) (image.Point, error) {
	r, ok := HandleBounds(handle)
	if !ok {
		return image.Point{}, fmt.Errorf("not %s element handle: %q", system, handle)
	}
	return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2), nil
}

// textOf is what an element actor's Text gives for n: its text, never a
// password field's.
func textOf(n *Node) (string, error) {
	if n.Password {
		return "", fmt.Errorf("a password field's text is not read: %w", desktop.ErrUnsupported)
	}
	return n.Text, nil
}

// readBack checks, in a new tree read by find, that the field handle names
// holds text after a SetText.
func readBack(ctx context.Context, find func(context.Context, string) (*Node, error), handle, text string) error {
	after, err := find(ctx, handle)
	if err != nil {
		return fmt.Errorf("reading the field back: %w", err)
	}
	if after.Text != text {
		return fmt.Errorf("the field holds %q after setting %q", after.Text, text)
	}
	return nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// Tree is one dump to turn into a snapshot.
type Tree struct {
	Source string // "uiautomator"
	Roots  []*Node
	// Scale is device pixels per logical pixel: boxes are divided by it.
	Scale float64
	// Foreground is the package in front: the window's name for the focused scope.
	Foreground string
	// Keep are the packages whose windows the focused scope keeps beside
	// the foreground's (the status bar, the keyboard); nil means Android's
	// com.android.systemui.
	Keep []string
	// Role names a node's role; nil means RoleOf (uiautomator's classes).
	// WebDriverAgent's element types and ArkUI's component types have
	// roles of their own.
	Role func(*Node) desktop.Role
}

// Snapshot builds the snapshot of t under q (normalized here): roles,
// names (text, else content-desc, else hint), values of text fields
// (never of a password field: Protected), states, boxes in logical
// pixels, the handle for acting on a node later. The focused scope is
// the foreground package's windows; app scope the named package's.
func Snapshot(ctx context.Context, t Tree, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	s := t.Scale
	if s <= 0 {
		s = 1
	}
	box := func(r image.Rectangle) geom.Rect {
		x0, y0 := int(math.Round(float64(r.Min.X)/s)), int(math.Round(float64(r.Min.Y)/s))
		x1, y1 := int(math.Round(float64(r.Max.X)/s)), int(math.Round(float64(r.Max.Y)/s))
		return geom.Rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
	}
	roleOf := t.Role
	if roleOf == nil {
		roleOf = RoleOf
	}
	keep := t.Keep
	if keep == nil {
		keep = []string{"com.android.systemui"}
	}
	conv := func(n *Node) *uitree.Node {
		role := roleOf(n)
		name := n.Text
		value := ""
		editable := role == desktop.RoleTextbox
		if editable {
			name, value = n.Desc, n.Text
			if name == "" {
				name = n.Hint
			}
		} else if name == "" {
			name = n.Desc
		}
		if n.Password {
			value = ""
		}
		plat := n.Class
		if i := strings.Index(n.ResourceID, ":id/"); i >= 0 {
			plat += "#" + n.ResourceID[i+4:]
		} else if n.ResourceID != "" {
			plat += "#" + n.ResourceID
		}
		return &uitree.Node{PlatformRole: plat, Role: role, Name: name, Value: value,
			States: desktop.States{Focused: n.Focused, Enabled: n.Enabled, Checked: n.Checked, Selected: n.Selected,
				Editable: editable, Protected: n.Password},
			Box: box(n.Bounds), Clips: n.Scrollable, Handle: Handle(n), Data: n}
	}
	children := func(_ context.Context, un *uitree.Node, limit int) ([]*uitree.Node, error) {
		n := un.Data.(*Node)
		var out []*uitree.Node
		for _, c := range n.Children {
			if len(out) >= limit {
				break
			}
			out = append(out, conv(c))
		}
		return out, nil
	}
	b := uitree.NewBuilder(t.Source, q)
	b.SetWindow(t.Foreground)
	for _, r := range t.Roots {
		switch q.Scope {
		case desktop.ScopeFocused:
			if t.Foreground != "" && r.Package != t.Foreground && !slices.Contains(keep, r.Package) {
				continue
			}
		case desktop.ScopeApp:
			if !strings.EqualFold(r.Package, q.App) {
				continue
			}
		}
		if !b.Window(ctx, r.Package, conv(r), children) {
			break
		}
	}
	snap := b.Snapshot()
	snap.Took = time.Since(start)
	return snap, nil
}
