package ios

import (
	"context"
	"encoding/json"
	"image"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/backend/phone"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// SourceNode is one element of GET /source?format=json, as WDA's
// dictionaryForElement (XCUIApplication+FBHelpers.m) writes it: the short
// XCUIElementType name, identifiers, a rect in points, and its attributes
// as "1"/"0" strings under an "is" prefix.
type SourceNode struct {
	Type             string  `json:"type"`
	RawIdentifier    *string `json:"rawIdentifier"`
	Name             *string `json:"name"`
	Value            any     `json:"value"`
	Label            *string `json:"label"`
	PlaceholderValue *string `json:"placeholderValue"`
	Rect             struct {
		X      float64 `json:"x"`
		Y      float64 `json:"y"`
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
	} `json:"rect"`
	IsEnabled  string        `json:"isEnabled"`
	IsVisible  string        `json:"isVisible"`
	IsFocused  string        `json:"isFocused"`
	IsSelected string        `json:"isSelected"`
	Children   []*SourceNode `json:"children"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func valueString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// textTypes are the element types whose value is the text they hold.
var textTypes = map[string]bool{"TextField": true, "SecureTextField": true, "SearchField": true, "TextView": true}

// Nodes turns WDA's tree into phone nodes (bounds in points). An element
// WDA calls invisible is left out, its visible descendants kept.
func Nodes(root *SourceNode, bundle string) []*phone.Node {
	var conv func(s *SourceNode, path string) []*phone.Node
	conv = func(s *SourceNode, path string) []*phone.Node {
		var kids []*phone.Node
		for i, c := range s.Children {
			kids = append(kids, conv(c, path+"."+strconv.Itoa(i))...)
		}
		if s.IsVisible == "0" && s.Type != "Application" {
			return kids
		}
		r := image.Rect(int(math.Round(s.Rect.X)), int(math.Round(s.Rect.Y)),
			int(math.Round(s.Rect.X+s.Rect.Width)), int(math.Round(s.Rect.Y+s.Rect.Height)))
		n := &phone.Node{Class: s.Type, ResourceID: str(s.RawIdentifier), Package: bundle, Bounds: r,
			Enabled: s.IsEnabled != "0", Focused: s.IsFocused == "1", Selected: s.IsSelected == "1",
			Hint: str(s.PlaceholderValue), Password: s.Type == "SecureTextField", Children: kids, Path: path}
		val := valueString(s.Value)
		label := str(s.Label)
		switch {
		case textTypes[s.Type]:
			n.Text, n.Desc = val, label
			if n.Desc == "" {
				n.Desc = str(s.Name)
			}
			if n.Password || val == n.Hint {
				n.Text = "" // a placeholder shown as the value is no text
			}
		case s.Type == "Switch" || s.Type == "Toggle":
			n.Checkable, n.Checked, n.Text = true, val == "1", label
		default:
			n.Text = label
			if n.Text == "" {
				n.Text = str(s.Name)
			}
		}
		n.Clickable = s.Type == "Button" || s.Type == "Cell" || s.Type == "Link" || s.Type == "Key"
		return []*phone.Node{n}
	}
	return conv(root, "0")
}

// roles maps XCUIElementType short names to roles.
var roles = map[string]desktop.Role{
	"Application": desktop.RoleApplication, "Window": desktop.RoleWindow, "Button": desktop.RoleButton,
	"StaticText": desktop.RoleText, "TextField": desktop.RoleTextbox, "SecureTextField": desktop.RoleTextbox,
	"SearchField": desktop.RoleTextbox, "TextView": desktop.RoleTextbox, "Switch": desktop.RoleCheckbox,
	"Toggle": desktop.RoleCheckbox, "Image": desktop.RoleImage, "Icon": desktop.RoleButton, "Link": desktop.RoleLink,
	"Cell": desktop.RoleListItem, "Table": desktop.RoleList, "CollectionView": desktop.RoleList,
	"NavigationBar": desktop.RoleToolbar, "Toolbar": desktop.RoleToolbar, "TabBar": desktop.RoleTabList,
	"Slider": desktop.RoleSlider, "ProgressIndicator": desktop.RoleProgressBar, "ActivityIndicator": desktop.RoleProgressBar,
	"Alert": desktop.RoleDialog, "Sheet": desktop.RoleDialog, "ScrollView": desktop.RoleGroup, "WebView": desktop.RoleDocument,
	"SegmentedControl": desktop.RoleTabList, "Picker": desktop.RoleCombobox, "PickerWheel": desktop.RoleCombobox,
	"Stepper": desktop.RoleSpinButton, "Key": desktop.RoleButton, "Keyboard": desktop.RoleGroup, "MenuItem": desktop.RoleMenuItem,
}

// RoleOf is the role of an XCUITest element type.
func RoleOf(n *phone.Node) desktop.Role {
	if r, ok := roles[n.Class]; ok {
		return r
	}
	if n.Text != "" && len(n.Children) == 0 {
		return desktop.RoleText
	}
	return desktop.RoleGeneric
}

// source reads the foreground app's tree.
func (b *Backend) source(ctx context.Context) ([]*phone.Node, error) {
	var root SourceNode
	if err := b.c.inSession(ctx, http.MethodGet, "/source?format=json", nil, &root); err != nil {
		return nil, err
	}
	var app struct {
		BundleID string `json:"bundleId"`
	}
	_ = b.c.do(ctx, http.MethodGet, "/wda/activeAppInfo", nil, &app)
	return Nodes(&root, app.BundleID), nil
}

// Elements reads the foreground app's UI as elements.
func (b *Backend) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	roots, err := b.source(ctx)
	if err != nil {
		return nil, err
	}
	if len(q.Bounds) == 0 {
		if s, err := b.screenNow(ctx); err == nil {
			q.Bounds = append(q.Bounds, s.bounds())
		}
	}
	return phone.Snapshot(ctx, phone.Tree{Source: "webdriveragent", Roots: roots, Scale: 1, Role: RoleOf}, q)
}

// actor is the backend's element actor: its source, and its taps and keys.
func (b *Backend) actor() phone.Actor {
	return phone.Actor{System: "an ios", Read: b.source, Role: RoleOf,
		Tap: func(ctx context.Context, p image.Point) error {
			return finger{b}.Tap(ctx, geom.GlobalPoint{X: p.X, Y: p.Y})
		},
		Replace: b.replace}
}

// Press taps the element's centre.
func (b *Backend) Press(ctx context.Context, handle string) error {
	return b.actor().Press(ctx, handle)
}

// Text reads an element's text from a new tree; a secure field's is never read.
func (b *Backend) Text(ctx context.Context, handle string) (string, error) {
	return b.actor().Text(ctx, handle)
}

// SetText replaces a text field's text: it taps the field, deletes what it
// holds (a BackSpace a character), types text, and reads the field back.
func (b *Backend) SetText(ctx context.Context, handle, text string) error {
	return b.actor().SetText(ctx, handle, text)
}

// replace is the actor's Replace: a tap, a BackSpace a character (128 for
// a secure field, whose text is hidden), and the text through /wda/keys.
func (b *Backend) replace(ctx context.Context, at image.Point, n *phone.Node, text string) error {
	c := geom.GlobalPoint{X: at.X, Y: at.Y}
	if err := (finger{b}).Tap(ctx, c); err != nil {
		return err
	}
	dels := utf8.RuneCountInString(n.Text)
	if n.Password {
		dels = 128
	}
	if dels > 0 {
		if err := b.keys(ctx, strings.Repeat("\b", dels)); err != nil {
			return err
		}
	}
	return b.keys(ctx, text)
}
