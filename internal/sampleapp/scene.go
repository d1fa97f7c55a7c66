package sampleapp

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
)

// Color is a flat 0xRRGGBB colour. Every widget has its own, so a scripted
// model can find it in a screenshot by colour alone.
type Color uint32

// ToRGBA returns c as an opaque color.RGBA.
func (c Color) ToRGBA() color.RGBA {
	return color.RGBA{R: uint8(c >> 16), G: uint8(c >> 8), B: uint8(c), A: 255}
}

// dark reports whether labels on c should be white.
func (c Color) dark() bool {
	r, g, b := float64(uint8(c>>16)), float64(uint8(c>>8)), float64(uint8(c))
	return 0.299*r+0.587*g+0.114*b < 140
}

// Widget colours, one per widget.
const (
	BackgroundColor  Color = 0xDCDCDC
	TextColor        Color = 0x000000
	FocusBorderColor Color = 0x202020

	NameFieldColor   Color = 0xFFF2CC // form: Name field
	EmailFieldColor  Color = 0xD9EAD3 // form: Email field
	CityFieldColor   Color = 0xCFE2F3 // form: City field
	SubmitColor      Color = 0x3C78D8 // form: Submit button
	NextColor        Color = 0xE69138 // dialog screen 1: Next button
	OKColor          Color = 0x6AA84F // dialog screen 2: OK button
	CancelColor      Color = 0xCC4125 // dialog screen 2: Cancel button
	RedButtonColor   Color = 0xFF0000 // buttons: red
	GreenButtonColor Color = 0x00C000 // buttons: green
	BlueButtonColor  Color = 0x0000FF // buttons: blue
	YellowColor      Color = 0xFFD700 // buttons: yellow
	PurpleColor      Color = 0x8000C0 // buttons: purple
	TypingFieldColor Color = 0xFFFFFF // typing: the text field
)

// Scene names.
const (
	SceneForm    = "form"
	SceneDialog  = "dialog"
	SceneButtons = "buttons"
	SceneTyping  = "typing"
)

// Scenes lists the scene names Run accepts.
var Scenes = []string{SceneForm, SceneDialog, SceneButtons, SceneTyping}

// Widget kinds.
const (
	KindField  = "field"
	KindButton = "button"
)

// DesignSize is the window size the layouts are drawn for; other sizes scale them.
var DesignSize = image.Pt(1280, 800)

// Widget is one rectangle of a scene.
type Widget struct {
	// Name is what events call it ("name", "submit", "red", "ok", ...).
	Name string `json:"name"`
	// Label is the text drawn next to or on it.
	Label string `json:"label"`
	// Kind is KindField or KindButton.
	Kind string `json:"kind"`
	// Rect is its place in window pixels.
	Rect image.Rectangle `json:"rect"`
	// Color is its flat fill colour.
	Color Color `json:"color"`
	// Screen is the dialog screen (1 or 2) that shows it; 0 means always shown.
	Screen int `json:"screen,omitempty"`
}

// Center returns the middle of the widget in window pixels.
func (w Widget) Center() image.Point {
	return image.Pt((w.Rect.Min.X+w.Rect.Max.X)/2, (w.Rect.Min.Y+w.Rect.Max.Y)/2)
}

type design struct {
	name, label, kind string
	x, y, w, h        int
	color             Color
	screen            int
}

var layouts = map[string][]design{
	SceneForm: {
		{"name", "Name", KindField, 360, 160, 560, 56, NameFieldColor, 0},
		{"email", "Email", KindField, 360, 260, 560, 56, EmailFieldColor, 0},
		{"city", "City", KindField, 360, 360, 560, 56, CityFieldColor, 0},
		{"submit", "Submit", KindButton, 360, 470, 200, 64, SubmitColor, 0},
	},
	SceneDialog: {
		{"next", "Next", KindButton, 540, 360, 200, 72, NextColor, 1},
		{"ok", "OK", KindButton, 420, 360, 180, 72, OKColor, 2},
		{"cancel", "Cancel", KindButton, 680, 360, 180, 72, CancelColor, 2},
	},
	SceneButtons: {
		{"red", "Red", KindButton, 90, 340, 180, 120, RedButtonColor, 0},
		{"green", "Green", KindButton, 320, 340, 180, 120, GreenButtonColor, 0},
		{"blue", "Blue", KindButton, 550, 340, 180, 120, BlueButtonColor, 0},
		{"yellow", "Yellow", KindButton, 780, 340, 180, 120, YellowColor, 0},
		{"purple", "Purple", KindButton, 1010, 340, 180, 120, PurpleColor, 0},
	},
	SceneTyping: {
		{"text", "Text", KindField, 140, 340, 1000, 64, TypingFieldColor, 0},
	},
}

// Layout returns the widgets of scene for a window of the given size (pixels),
// every screen included (see Widget.Screen).
func Layout(scene string, width, height int) ([]Widget, error) {
	ds, ok := layouts[scene]
	if !ok {
		return nil, fmt.Errorf("unknown sample scene %q: use one of %v", scene, Scenes)
	}
	if width <= 0 || height <= 0 {
		return nil, fmt.Errorf("window size %dx%d: give a positive width and height", width, height)
	}
	sx := float64(width) / float64(DesignSize.X)
	sy := float64(height) / float64(DesignSize.Y)
	sc := func(v int, s float64) int { return int(math.Round(float64(v) * s)) }
	out := make([]Widget, 0, len(ds))
	for _, d := range ds {
		r := image.Rect(sc(d.x, sx), sc(d.y, sy), sc(d.x+d.w, sx), sc(d.y+d.h, sy))
		out = append(out, Widget{Name: d.name, Label: d.label, Kind: d.kind, Rect: r, Color: d.color, Screen: d.screen})
	}
	return out, nil
}

// validScene reports whether s names a scene.
func validScene(s string) bool { return slices.Contains(Scenes, s) }

// relabel replaces the labels of ws named in labels.
func relabel(ws []Widget, labels map[string]string) error {
	for name, label := range labels {
		i := slices.IndexFunc(ws, func(w Widget) bool { return w.Name == name })
		if i < 0 {
			return fmt.Errorf("sample app: Labels names %q, which is not a widget of this scene", name)
		}
		ws[i].Label = label
	}
	return nil
}
