package scripted

import (
	"fmt"
	"image"
	"image/color"

	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// DemoForm is what DemoFormBrain enters into the sample application's form.
type DemoForm struct {
	Name, Email, City string
}

// DefaultDemoForm is the form content of `guiagent demo`.
var DefaultDemoForm = DemoForm{Name: "Ada Lovelace", Email: "ada@example.org", City: "London"}

// ColorTol is how far (per channel) a screenshot pixel may be from a
// widget's flat colour: enough for JPEG and scaling, less than the 14 units
// that separate the email field from the background.
const ColorTol = 10

// DemoFormBrain returns a Brain that completes the sample application's form
// scene (sampleapp.SceneForm) by looking at each screenshot, the way a vision
// model would: it finds the Name, Email and City fields and the Submit button
// by their colours, and
//   - when the fields are not all filled, answers ONE batch: for each field a
//     click, ctrl+a and the text, then a click on Submit;
//   - when the fields are filled and the "Submitted." status line shows under
//     the button, answers done with the entered values as the result;
//   - when the fields are filled but nothing was submitted, clicks Submit;
//   - when the form is not on screen, answers blocked.
//
// So a run takes two model calls: one to act, one to confirm.
func DemoFormBrain(f DemoForm) Brain {
	return func(t Turn) Reply {
		if t.Image == nil {
			return Reply{Status: llm.Failed, Result: "the request carried no screenshot"}
		}
		fields := []struct {
			c     sampleapp.Color
			label string
			value string
		}{
			{sampleapp.NameFieldColor, "Name", f.Name},
			{sampleapp.EmailFieldColor, "Email", f.Email},
			{sampleapp.CityFieldColor, "City", f.City},
		}
		submit, ok := BlobBox(t.Image, sampleapp.SubmitColor.ToRGBA(), ColorTol)
		if !ok {
			return Reply{Status: llm.Blocked, Result: "the sample form (Name, Email, City, Submit) is not on the screen"}
		}
		boxes := make([]image.Rectangle, len(fields))
		filled := true
		for i, fl := range fields {
			b, ok := BlobBox(t.Image, fl.c.ToRGBA(), ColorTol)
			if !ok {
				return Reply{Status: llm.Blocked, Result: fmt.Sprintf("the %s field of the sample form is not on the screen", fl.label)}
			}
			boxes[i] = b
			filled = filled && hasText(t.Image, b, fl.c.ToRGBA())
		}
		switch {
		case filled && StatusBelow(t.Image, submit):
			return Reply{Status: llm.Done, Observation: "the form shows Submitted.",
				Result: fmt.Sprintf("submitted name=%q email=%q city=%q", f.Name, f.Email, f.City)}
		case filled:
			return Reply{Observation: "the fields are filled", Actions: []BrainAction{ClickAt(center(submit))}}
		}
		var acts []BrainAction
		for i, fl := range fields {
			acts = append(acts, ClickAt(center(boxes[i])), PressKeys("ctrl", "a"), TypeText(fl.value))
		}
		acts = append(acts, ClickAt(center(submit)))
		return Reply{Observation: "an empty form with Name, Email and City fields and a Submit button",
			Memory: []string{"the form has the fields Name, Email, City and a Submit button"}, Actions: acts}
	}
}

// DemoDialogBrain returns a Brain that completes the sample application's
// two-screen dialog (sampleapp.SceneDialog): it clicks Next on the first
// screen, OK on the second, and answers done once the "Confirmed." status line
// shows under the buttons.
func DemoDialogBrain() Brain {
	return func(t Turn) Reply {
		if t.Image == nil {
			return Reply{Status: llm.Failed, Result: "the request carried no screenshot"}
		}
		if next, ok := BlobBox(t.Image, sampleapp.NextColor.ToRGBA(), ColorTol); ok {
			return Reply{Observation: "dialog screen 1 with a Next button", Actions: []BrainAction{ClickAt(center(next))}}
		}
		okBox, ok := BlobBox(t.Image, sampleapp.OKColor.ToRGBA(), ColorTol)
		if !ok {
			return Reply{Status: llm.Blocked, Result: "the sample dialog is not on the screen"}
		}
		if StatusBelow(t.Image, okBox) {
			return Reply{Status: llm.Done, Observation: "the dialog shows Confirmed.", Result: "confirmed"}
		}
		return Reply{Observation: "dialog screen 2 with OK and Cancel", Actions: []BrainAction{ClickAt(center(okBox))}}
	}
}

func center(r image.Rectangle) image.Point {
	return image.Point{X: (r.Min.X + r.Max.X - 1) / 2, Y: (r.Min.Y + r.Max.Y - 1) / 2}
}

// textContrast is how much darker (on every channel) than the surface under
// it a pixel must be to count as text: scaling and JPEG turn thin black
// strokes into greys, so "black" would miss text on a downscaled screenshot.
const textContrast = 50

// isText reports whether the pixel at x,y is text on a surface of colour bg.
func isText(img image.Image, x, y int, bg color.RGBA) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	return int(r>>8) < int(bg.R)-textContrast && int(g>>8) < int(bg.G)-textContrast && int(b>>8) < int(bg.B)-textContrast
}

// hasText reports whether field box r (of colour bg) holds typed text: text
// pixels in more columns than the caret of an empty focused field covers.
func hasText(img image.Image, r image.Rectangle, bg color.RGBA) bool {
	in := image.Rect(r.Min.X+2, r.Min.Y+r.Dy()/6, r.Max.X-2, r.Max.Y-r.Dy()/6).Intersect(img.Bounds())
	cols := 0
	for x := in.Min.X; x < in.Max.X; x++ {
		for y := in.Min.Y; y < in.Max.Y; y++ {
			if isText(img, x, y, bg) {
				cols++
				break
			}
		}
	}
	return cols >= 6
}

// StatusBelow reports whether a status line shows under widget r.
func StatusBelow(img image.Image, r image.Rectangle) bool {
	b := img.Bounds()
	band := image.Rect(b.Min.X, r.Max.Y+r.Dy()/3, b.Max.X, b.Max.Y)
	return countText(img, band, sampleapp.BackgroundColor.ToRGBA()) >= 8
}

func countText(img image.Image, r image.Rectangle, bg color.RGBA) int {
	r = r.Intersect(img.Bounds())
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if isText(img, x, y, bg) {
				n++
			}
		}
	}
	return n
}

// BlobBox returns the bounding box of a widget of flat colour c: the largest
// 4-connected blob of pixels within tol of c, joined with the blobs beside it
// on the same rows that a caret or text splits off (image pixels); ok is false
// when there is none worth the name (fewer than 50 pixels).
func BlobBox(img image.Image, c color.RGBA, tol int) (image.Rectangle, bool) {
	blobs := colorBlobs(img, c, tol)
	best := largest(blobs)
	if best.n < 50 {
		return image.Rectangle{}, false
	}
	union := best.box
	for _, bl := range blobs {
		sameRows := bl.box.Min.Y >= best.box.Min.Y-2 && bl.box.Max.Y <= best.box.Max.Y+2
		if bl.n >= best.n/50 && sameRows && bl.box.Min.X <= best.box.Max.X+6 && bl.box.Max.X >= best.box.Min.X-6 {
			union = union.Union(bl.box)
		}
	}
	return union.Add(img.Bounds().Min), true
}

// BlobBoxes returns the bounding boxes (relative to img's bounds origin) of
// the 4-connected blobs of pixels within tol of c, in the scan order of their
// first pixel.
func BlobBoxes(img image.Image, c color.RGBA, tol int) []image.Rectangle {
	blobs := colorBlobs(img, c, tol)
	boxes := make([]image.Rectangle, len(blobs))
	for i, bl := range blobs {
		boxes[i] = bl.box
	}
	return boxes
}
