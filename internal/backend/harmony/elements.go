package harmony

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/backend/phone"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// LayoutNode is one node of `uitest dumpLayout`: its attributes (every
// value a string) and children (Widget::WrapperWidgetToJson and
// DumpHandler's DFSMarshalWidget).
type LayoutNode struct {
	Attributes map[string]string `json:"attributes"`
	Children   []*LayoutNode     `json:"children"`
}

// Nodes turns a dump into phone nodes: the root's children are the
// windows, each carrying its bundleName.
func Nodes(root *LayoutNode) []*phone.Node {
	var conv func(l *LayoutNode, bundle, path string) *phone.Node
	conv = func(l *LayoutNode, bundle, path string) *phone.Node {
		a := l.Attributes
		if b := a["bundleName"]; b != "" {
			bundle = b
		}
		n := &phone.Node{Class: a["type"], Text: a["text"], Desc: a["description"], ResourceID: a["id"], Package: bundle,
			Bounds: phone.ParseBounds(a["bounds"]), Hint: a["hint"], Path: path,
			Checkable: a["checkable"] == "true", Checked: a["checked"] == "true", Clickable: a["clickable"] == "true",
			Enabled: a["enabled"] != "false", Focused: a["focused"] == "true", Scrollable: a["scrollable"] == "true",
			LongClickable: a["longClickable"] == "true", Selected: a["selected"] == "true"}
		if n.ResourceID == "" {
			n.ResourceID = a["key"]
		}
		for i, c := range l.Children {
			if c.Attributes["visible"] == "false" {
				continue
			}
			n.Children = append(n.Children, conv(c, bundle, path+"."+strconv.Itoa(i)))
		}
		return n
	}
	var out []*phone.Node
	for i, w := range root.Children {
		out = append(out, conv(w, "", strconv.Itoa(i)))
	}
	return out
}

// roles maps ArkUI component types to roles.
var roles = map[string]desktop.Role{
	"Button": desktop.RoleButton, "TextInput": desktop.RoleTextbox, "TextArea": desktop.RoleTextbox, "Search": desktop.RoleTextbox,
	"RichEditor": desktop.RoleTextbox, "Text": desktop.RoleText, "Span": desktop.RoleText, "Toggle": desktop.RoleCheckbox,
	"Checkbox": desktop.RoleCheckbox, "Radio": desktop.RoleRadio, "Image": desktop.RoleImage, "List": desktop.RoleList,
	"ListItem": desktop.RoleListItem, "Grid": desktop.RoleList, "GridItem": desktop.RoleListItem, "Slider": desktop.RoleSlider,
	"Progress": desktop.RoleProgressBar, "Select": desktop.RoleCombobox, "TextPicker": desktop.RoleCombobox,
	"Tabs": desktop.RoleTabList, "TabBar": desktop.RoleTabList, "TabContent": desktop.RoleTabPanel, "Web": desktop.RoleDocument,
	"Dialog": desktop.RoleDialog, "AlertDialog": desktop.RoleDialog, "Menu": desktop.RoleMenu, "MenuItem": desktop.RoleMenuItem,
	"Scroll": desktop.RoleGroup, "Column": desktop.RoleGroup, "Row": desktop.RoleGroup, "Stack": desktop.RoleGroup,
	"Counter": desktop.RoleSpinButton, "Rating": desktop.RoleSlider,
}

// RoleOf is the role of an ArkUI component.
func RoleOf(n *phone.Node) desktop.Role {
	if r, ok := roles[n.Class]; ok {
		if r == desktop.RoleGroup && n.Clickable && (n.Text != "" || n.Desc != "") {
			return desktop.RoleButton
		}
		return r
	}
	switch {
	case n.Checkable:
		return desktop.RoleCheckbox
	case n.Clickable && (n.Text != "" || n.Desc != ""):
		return desktop.RoleButton
	case n.Text != "" && len(n.Children) == 0:
		return desktop.RoleText
	}
	return desktop.RoleGeneric
}

// Dump reads the UI with `uitest dumpLayout`.
func (b *Backend) Dump(ctx context.Context) ([]*phone.Node, error) {
	out, err := b.shell(ctx, "uitest dumpLayout -p "+layoutPath)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(out, "DumpLayout saved to:") {
		msg := firstLine(out)
		if strings.Contains(out, "Get windows failed") || strings.Contains(out, "GetRootByWindow failed") {
			msg += ": turn on ArkUI's test mode (`hdc shell param set persist.ace.testmode.enabled 1`, then restart the device)"
		}
		return nil, fmt.Errorf("HarmonyOS device %s: uitest dumpLayout failed: %s", b.target, msg)
	}
	data, err := b.shell(ctx, "cat "+layoutPath)
	if err != nil {
		return nil, err
	}
	var root LayoutNode
	if err := json.Unmarshal([]byte(data), &root); err != nil {
		return nil, fmt.Errorf("HarmonyOS device %s: reading uitest's layout: %w", b.target, err)
	}
	return Nodes(&root), nil
}

// Elements reads the UI as elements from a layout dump.
func (b *Backend) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	roots, err := b.Dump(ctx)
	if err != nil {
		return nil, err
	}
	fg := ""
	for _, r := range roots {
		if !systemBundle(r.Package) {
			fg = r.Package
			break
		}
	}
	if len(q.Bounds) == 0 {
		if s, err := b.screenSize(ctx); err == nil {
			q.Bounds = append(q.Bounds, geom.Rect{W: s.X, H: s.Y})
		}
	}
	return phone.Snapshot(ctx, phone.Tree{Source: "uitest", Roots: roots, Scale: 1, Foreground: fg,
		Keep: []string{"com.ohos.systemui", "com.ohos.sceneboard", "com.huawei.hmos.inputmethod"}, Role: RoleOf}, q)
}

// systemBundle reports the system's own windows (status bar, launcher scene).
func systemBundle(b string) bool {
	return b == "" || b == "com.ohos.systemui" || b == "com.ohos.sceneboard"
}

// actor is the backend's element actor: its layout dumps, and uitest's
// clicks and keys (device pixels are global pixels here: scale 1).
func (b *Backend) actor() phone.Actor {
	return phone.Actor{System: "a harmony", Read: b.Dump, Role: RoleOf,
		Tap: func(ctx context.Context, p image.Point) error {
			return finger{b}.Tap(ctx, geom.GlobalPoint{X: p.X, Y: p.Y})
		},
		Replace: b.replace}
}

// Press clicks the element's centre.
func (b *Backend) Press(ctx context.Context, handle string) error {
	return b.actor().Press(ctx, handle)
}

// Text reads an element's text from a new dump (uitest's dump marks no
// field as a password's: see phone.Actor).
func (b *Backend) Text(ctx context.Context, handle string) (string, error) {
	return b.actor().Text(ctx, handle)
}

// SetText replaces a text field's text: it clicks the field, moves to the
// end and deletes what it holds (a BackSpace a character), types text,
// and reads the field back.
func (b *Backend) SetText(ctx context.Context, handle, text string) error {
	return b.actor().SetText(ctx, handle, text)
}

// replace is the actor's Replace.
func (b *Backend) replace(ctx context.Context, at image.Point, n *phone.Node, text string) error {
	c := geom.GlobalPoint{X: at.X, Y: at.Y}
	if err := (finger{b}).Tap(ctx, c); err != nil {
		return err
	}
	b.Gesture.MoveTo(ctx, c) //nolint:errcheck // a move without a finger down sends nothing
	if err := b.uiInput(ctx, "keyEvent", "2082"); err != nil {
		return err
	}
	for range utf8.RuneCountInString(n.Text) {
		if err := b.uiInput(ctx, "keyEvent", "2055"); err != nil {
			return err
		}
	}
	return b.TypeText(ctx, text)
}
