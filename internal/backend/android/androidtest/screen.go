package androidtest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// widget is one view of the screen the phone shows.
type widget struct {
	class, text, desc, id, pkg string
	r                          image.Rectangle
	clickable, checkable       bool
	checked, focused, password bool
	scrollable                 bool
	bg                         color.RGBA
	onClick                    func()
	children                   []*widget
}

// Colours of the fake's screens.
var (
	ScreenBG  = color.RGBA{R: 250, G: 250, B: 250, A: 255}
	ButtonBG  = color.RGBA{R: 33, G: 150, B: 243, A: 255}
	FieldBG   = color.RGBA{R: 230, G: 230, B: 230, A: 255}
	StatusBG  = color.RGBA{R: 20, G: 20, B: 20, A: 255}
	textColor = color.RGBA{A: 255}
)

// frac returns the rectangle at fractions of the screen s.
func frac(s image.Point, x0, y0, x1, y1 float64) image.Rectangle {
	return image.Rect(int(x0*float64(s.X)), int(y0*float64(s.Y)), int(x1*float64(s.X)), int(y1*float64(s.Y)))
}

// Widget bounds of the counter app at fractions of the screen, for tests.
var (
	IncrementAt = [4]float64{0.05, 0.16, 0.47, 0.23}
	ResetAt     = [4]float64{0.53, 0.16, 0.95, 0.23}
	NameAt      = [4]float64{0.05, 0.27, 0.95, 0.33}
	PasswordAt  = [4]float64{0.05, 0.36, 0.95, 0.42}
	SubscribeAt = [4]float64{0.05, 0.46, 0.95, 0.51}
)

func at(s image.Point, f [4]float64) image.Rectangle { return frac(s, f[0], f[1], f[2], f[3]) }

// screen builds the views in front. Caller holds mu.
func (p *Phone) screen() *widget {
	s := p.size()
	root := &widget{class: "android.widget.FrameLayout", pkg: p.fg, r: image.Rectangle{Max: s}, bg: ScreenBG}
	add := func(w *widget) *widget {
		w.pkg = p.fg
		root.children = append(root.children, w)
		return w
	}
	switch p.fg {
	case CounterApp:
		add(&widget{class: "android.widget.TextView", text: fmt.Sprintf("Counter: %d", p.counter), id: CounterApp + ":id/count", r: frac(s, 0.05, 0.07, 0.95, 0.12)})
		add(&widget{class: "android.widget.Button", text: "Increment", id: CounterApp + ":id/increment", r: at(s, IncrementAt), clickable: true, bg: ButtonBG, onClick: func() { p.counter++ }})
		add(&widget{class: "android.widget.Button", text: "Reset", id: CounterApp + ":id/reset", r: at(s, ResetAt), clickable: true, bg: ButtonBG, onClick: func() { p.counter = 0 }})
		for _, f := range []struct {
			id string
			at [4]float64
		}{{"name", NameAt}, {"password", PasswordAt}} {
			fl := p.fields[f.id]
			txt := string(fl.text)
			if f.id == "password" {
				txt = strings.Repeat("•", len(fl.text))
			}
			id := f.id
			add(&widget{class: "android.widget.EditText", text: txt, id: CounterApp + ":id/" + f.id, r: at(s, f.at), clickable: true,
				focused: p.focus == f.id, password: f.id == "password", bg: FieldBG, onClick: func() { p.focus = id }})
		}
		add(&widget{class: "android.widget.CheckBox", text: "Subscribe", id: CounterApp + ":id/subscribe", r: at(s, SubscribeAt), clickable: true, checkable: true,
			checked: p.subscribed, onClick: func() { p.subscribed = !p.subscribed }})
		add(&widget{class: "android.widget.ImageView", desc: "Logo", id: CounterApp + ":id/logo", r: frac(s, 0.05, 0.55, 0.25, 0.64)})
	case ChromeApp:
		add(&widget{class: "android.widget.EditText", text: p.url, id: ChromeApp + ":id/url_bar", r: frac(s, 0.02, 0.03, 0.98, 0.08), clickable: true, bg: FieldBG})
		add(&widget{class: "android.webkit.WebView", text: "Example Domain", r: frac(s, 0, 0.1, 1, 1), scrollable: true})
	case SettingsApp:
		add(&widget{class: "android.widget.TextView", text: "Settings", r: frac(s, 0.05, 0.05, 0.95, 0.1)})
	default: // the launcher
		root.pkg = LauncherApp
		for i, app := range []struct{ label, pkg string }{{"Counter", CounterApp}, {"Chrome", ChromeApp}, {"Settings", SettingsApp}} {
			pkg := app.pkg
			add(&widget{class: "android.widget.TextView", text: app.label, desc: app.label, r: frac(s, 0.05+0.3*float64(i), 0.7, 0.3+0.3*float64(i), 0.78),
				clickable: true, bg: ButtonBG, onClick: func() { p.launch(pkg) }}).pkg = LauncherApp
		}
	}
	return root
}

// click performs a tap at (x, y) on the views in front. Caller holds mu.
func (p *Phone) click(x, y int) {
	pt := image.Pt(x, y)
	root := p.screen()
	for i := len(root.children) - 1; i >= 0; i-- {
		w := root.children[i]
		if pt.In(w.r) && w.clickable {
			if w.onClick != nil {
				w.onClick()
			}
			if w.class != "android.widget.EditText" {
				p.focus = ""
			}
			return
		}
	}
}

// Screenshot renders the screen as screencap would capture it: the
// current orientation's size, the views, and any test paint on top.
func (p *Phone) Screenshot() *image.RGBA {
	p.mu.Lock()
	root := p.screen()
	fills := append([]fill(nil), p.fills...)
	p.mu.Unlock()
	img := image.NewRGBA(root.r)
	draw.Draw(img, img.Rect, image.NewUniform(root.bg), image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(0, 0, root.r.Dx(), root.r.Dy()/40), image.NewUniform(StatusBG), image.Point{}, draw.Src)
	for _, w := range root.children {
		if w.bg.A != 0 {
			draw.Draw(img, w.r, image.NewUniform(w.bg), image.Point{}, draw.Src)
		}
		label := w.text
		if w.checkable {
			box := "[ ] "
			if w.checked {
				box = "[x] "
			}
			label = box + label
		}
		if label != "" {
			drawText(img, w.r.Min.X+16, (w.r.Min.Y+w.r.Max.Y)/2, label, 3)
		}
	}
	for _, f := range fills {
		draw.Draw(img, f.r, image.NewUniform(f.c), image.Point{}, draw.Src)
	}
	return img
}

// drawText writes s with the 7x13 bitmap font scaled by k, its middle at y.
func drawText(dst *image.RGBA, x, y int, s string, k int) {
	face := basicfont.Face7x13
	w := font.MeasureString(face, s).Ceil()
	small := image.NewAlpha(image.Rect(0, 0, w, 13))
	d := font.Drawer{Dst: small, Src: image.Opaque, Face: face, Dot: fixed.P(0, 11)}
	d.DrawString(s)
	y0 := y - 13*k/2
	for sy := 0; sy < 13; sy++ {
		for sx := 0; sx < w; sx++ {
			if small.AlphaAt(sx, sy).A < 128 {
				continue
			}
			r := image.Rect(x+sx*k, y0+sy*k, x+(sx+1)*k, y0+(sy+1)*k).Intersect(dst.Rect)
			draw.Draw(dst, r, image.NewUniform(textColor), image.Point{}, draw.Src)
		}
	}
}

func encodePNG(img image.Image) []byte {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	_ = enc.Encode(&b, img)
	return b.Bytes()
}

// xmlEscape escapes an attribute value as Android's XmlSerializer does.
func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}

// dumpXML is the window hierarchy as `uiautomator dump` writes it. Caller holds mu.
func (p *Phone) dumpXML() string {
	root := p.screen()
	var b strings.Builder
	b.WriteString("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>")
	fmt.Fprintf(&b, `<hierarchy rotation="%d">`, p.rotation)
	var node func(w *widget, index int)
	node = func(w *widget, index int) {
		fmt.Fprintf(&b, `<node index="%d" text="%s" resource-id="%s" class="%s" package="%s" content-desc="%s" checkable="%t" checked="%t" clickable="%t" enabled="true" focusable="%t" focused="%t" scrollable="%t" long-clickable="false" password="%t" selected="false" bounds="[%d,%d][%d,%d]"`,
			index, xmlEscape(w.text), xmlEscape(w.id), w.class, w.pkg, xmlEscape(w.desc), w.checkable, w.checked, w.clickable,
			w.clickable, w.focused, w.scrollable, w.password, w.r.Min.X, w.r.Min.Y, w.r.Max.X, w.r.Max.Y)
		if len(w.children) == 0 {
			b.WriteString(" />")
			return
		}
		b.WriteString(">")
		for i, c := range w.children {
			node(c, i)
		}
		b.WriteString("</node>")
	}
	node(root, 0)
	b.WriteString("</hierarchy>")
	return b.String()
}
