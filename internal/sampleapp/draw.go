package sampleapp

import (
	"image"
	"math"
	"unicode/utf8"

	"github.com/jezek/xgb/xproto"
)

func (u *ui) fill(r image.Rectangle, c Color) {
	r = r.Canon()
	if r.Empty() {
		return
	}
	xproto.ChangeGC(u.c, u.gc, xproto.GcForeground, []uint32{u.pixel(c)})
	xproto.PolyFillRectangle(u.c, xproto.Drawable(u.buf), u.gc, []xproto.Rectangle{{
		X: int16(r.Min.X), Y: int16(r.Min.Y), Width: uint16(r.Dx()), Height: uint16(r.Dy())}})
}

// text draws s with its baseline at (x, y) in fg on bg; it returns the width drawn.
func (u *ui) text(x, y int, s string, fg, bg Color) int {
	if !u.hasFont || s == "" {
		return 0
	}
	xproto.ChangeGC(u.c, u.gc, xproto.GcForeground|xproto.GcBackground, []uint32{u.pixel(fg), u.pixel(bg)})
	chars := make([]xproto.Char2b, 0, utf8.RuneCountInString(s))
	for _, r := range s {
		if r > 0xffff || r < 0x20 {
			r = '?'
		}
		chars = append(chars, xproto.Char2b{Byte1: byte(r >> 8), Byte2: byte(r)})
	}
	if len(chars) > 255 {
		chars = chars[len(chars)-255:]
	}
	xproto.ImageText16(u.c, byte(len(chars)), xproto.Drawable(u.buf), u.gc, int16(x), int16(y), chars)
	return len(chars) * u.charW
}

// fit returns the tail of s that fits in width pixels.
func (u *ui) fit(s string, width int) string {
	if u.charW <= 0 {
		return s
	}
	n := max(width/u.charW, 0)
	if c := utf8.RuneCountInString(s); c > n {
		r := []rune(s)
		return string(r[c-n:])
	}
	return s
}

// redraw paints the whole window: into the back buffer, then one copy to the
// window, so a screenshot never sees a half-drawn frame.
func (u *ui) redraw() {
	if !u.mapped {
		return
	}
	if u.buf == 0 || u.bufSize != image.Pt(u.w, u.h) {
		if u.buf != 0 {
			xproto.FreePixmap(u.c, u.buf)
		}
		pid, err := xproto.NewPixmapId(u.c)
		if err != nil {
			return
		}
		xproto.CreatePixmap(u.c, u.screen.RootDepth, pid, xproto.Drawable(u.win), uint16(u.w), uint16(u.h))
		u.buf, u.bufSize = pid, image.Pt(u.w, u.h)
	}
	defer xproto.CopyArea(u.c, xproto.Drawable(u.buf), xproto.Drawable(u.win), u.gc, 0, 0, 0, 0, uint16(u.w), uint16(u.h))
	sx := float64(u.w) / float64(DesignSize.X)
	sy := float64(u.h) / float64(DesignSize.Y)
	px := func(v int, s float64) int { return int(math.Round(float64(v) * s)) }
	u.fill(image.Rect(0, 0, u.w, u.h), BackgroundColor)
	title := "guiagent sample: " + u.scene
	switch u.scene {
	case SceneForm:
		title += " - fill in the fields and press Submit"
	case SceneDialog:
		if u.dialogScreen == 1 {
			title += " - step 1 of 2: press Next"
		} else {
			title += " - step 2 of 2: press OK to confirm"
		}
	case SceneButtons:
		title += " - click a coloured button"
	case SceneTyping:
		title += " - type a line and press Return"
	}
	u.text(px(40, sx), px(60, sy), title, TextColor, BackgroundColor)
	if u.status != "" {
		u.text(px(40, sx), px(640, sy), u.status, TextColor, BackgroundColor)
	}
	for _, w := range u.visible() {
		r := w.Rect
		midY := (r.Min.Y+r.Max.Y)/2 + (u.ascent-u.descent)/2
		switch w.Kind {
		case KindField:
			u.text(r.Min.X-px(140, sx), midY, w.Label+":", TextColor, BackgroundColor)
			if u.focus == w.Name {
				u.fill(r.Inset(-3), FocusBorderColor)
			}
			u.fill(r, w.Color)
			v := u.fit(u.values[w.Name], r.Dx()-24)
			fg, bg := TextColor, w.Color
			if u.selected && u.focus == w.Name {
				fg, bg = w.Color, TextColor
			}
			tw := u.text(r.Min.X+10, midY, v, fg, bg)
			if u.focus == w.Name {
				u.fill(image.Rect(r.Min.X+11+tw, r.Min.Y+8, r.Min.X+13+tw, r.Max.Y-8), TextColor)
			}
		case KindButton:
			u.fill(r, w.Color)
			fg := TextColor
			if w.Color.dark() {
				fg = 0xFFFFFF
			}
			tw := utf8.RuneCountInString(w.Label) * u.charW
			u.text((r.Min.X+r.Max.X-tw)/2, midY, w.Label, fg, w.Color)
		}
	}
}
