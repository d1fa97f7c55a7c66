// Package flowtest holds the tests' vision model: ColorSeer finds the sample
// app's widgets by their flat colours in the screenshot it is sent.
package flowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/vision"
)

// ColorSeer is the tests' vision model: it decodes the screenshot it is given
// and finds an element by the flat colour of the sample app's widget that the
// description names ("the Submit button" -> the Submit colour). It can fail:
// a colour that is not on the screen is "not found". latency stands in for a
// real model's answer time.
type ColorSeer struct {
	// Latency stands in for a real model's answer time.
	Latency time.Duration

	mu      sync.Mutex
	locates []string // descriptions asked, in order
	asserts int
}

// widgetColors names the sample app's widgets by the words a flow uses.
var widgetColors = map[string]sampleapp.Color{
	"name field": sampleapp.NameFieldColor, "email field": sampleapp.EmailFieldColor,
	"city field": sampleapp.CityFieldColor, "submit button": sampleapp.SubmitColor,
	"next button": sampleapp.NextColor, "ok button": sampleapp.OKColor, "cancel button": sampleapp.CancelColor,
	"red button": sampleapp.RedButtonColor, "blue button": sampleapp.BlueButtonColor,
}

func colorFor(desc string) (sampleapp.Color, bool) {
	d := strings.ToLower(desc)
	for words, c := range widgetColors {
		if strings.Contains(d, words) {
			return c, true
		}
	}
	return 0, false
}

// findColor returns the box of the pixels of colour c in img: the rows and
// columns where at least half as many pixels have the colour as in the
// fullest row or column, so that stray pixels of a lossy encoding (edges of
// other widgets blended with the background) do not widen it.
func findColor(img image.Image, c sampleapp.Color) (vision.Box, bool) {
	want := c.ToRGBA()
	b := img.Bounds()
	rows, cols := make([]int, b.Dy()), make([]int, b.Dx())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, want.R) && near(g>>8, want.G) && near(bl>>8, want.B) {
				rows[y-b.Min.Y]++
				cols[x-b.Min.X]++
			}
		}
	}
	y1, y2, ok := span(rows)
	x1, x2, _ := span(cols)
	if !ok {
		return vision.Box{}, false
	}
	return vision.Box{X1: float64(b.Min.X + x1), Y1: float64(b.Min.Y + y1), X2: float64(b.Min.X + x2), Y2: float64(b.Min.Y + y2)}, true
}

// span returns the first and past-the-last index whose count is at least half
// the largest; false when all are zero.
func span(counts []int) (int, int, bool) {
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	if top == 0 {
		return 0, 0, false
	}
	lo, hi := -1, -1
	for i, n := range counts {
		if 2*n >= top {
			if lo < 0 {
				lo = i
			}
			hi = i + 1
		}
	}
	return lo, hi, true
}

func near(v uint32, w uint8) bool { return v+6 >= uint32(w) && v <= uint32(w)+6 }

func (s *ColorSeer) decode(ctx context.Context, img llm.Image) (image.Image, error) {
	if s.Latency > 0 {
		select {
		case <-time.After(s.Latency):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	m, _, err := image.Decode(bytes.NewReader(img.Data))
	return m, err
}

// Locate finds the widget target names by its colour; not found is a normal answer.
func (s *ColorSeer) Locate(ctx context.Context, img llm.Image, target string) (vision.Location, llm.Usage, error) {
	s.mu.Lock()
	s.locates = append(s.locates, target)
	s.mu.Unlock()
	m, err := s.decode(ctx, img)
	if err != nil {
		return vision.Location{}, llm.Usage{}, err
	}
	u := llm.Usage{InputTokens: 1000, OutputTokens: 20}
	c, ok := colorFor(target)
	if !ok {
		return vision.Location{Found: false, Reason: "I do not know " + target, Frame: img.Frame.ID}, u, nil
	}
	box, ok := findColor(m, c)
	if !ok {
		return vision.Location{Found: false, Reason: target + " is not on the screen", Frame: img.Frame.ID}, u, nil
	}
	return vision.Location{Found: true, Box: box, Reason: "found by colour", Frame: img.Frame.ID}, u, nil
}

// Asserts counts Assert calls.
func (s *ColorSeer) Asserts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asserts
}

// Assert passes when the element the assertion names is on the screen.
func (s *ColorSeer) Assert(ctx context.Context, img llm.Image, assertion string) (vision.Verdict, llm.Usage, error) {
	s.mu.Lock()
	s.asserts++
	s.mu.Unlock()
	m, err := s.decode(ctx, img)
	if err != nil {
		return vision.Verdict{}, llm.Usage{}, err
	}
	c, ok := colorFor(assertion)
	if !ok {
		return vision.Verdict{Pass: false, Reason: "cannot tell"}, llm.Usage{}, nil
	}
	if _, ok := findColor(m, c); ok {
		return vision.Verdict{Pass: true, Reason: "it is visible"}, llm.Usage{}, nil
	}
	return vision.Verdict{Pass: false, Reason: "it is not visible"}, llm.Usage{}, nil
}

// Query answers with the size ("WxH" image pixels) of the element the question names.
func (s *ColorSeer) Query(ctx context.Context, img llm.Image, question string, _ json.RawMessage) (vision.Answer, llm.Usage, error) {
	m, err := s.decode(ctx, img)
	if err != nil {
		return vision.Answer{}, llm.Usage{}, err
	}
	c, ok := colorFor(question)
	if !ok {
		return vision.Answer{}, llm.Usage{}, fmt.Errorf("cannot answer %q", question)
	}
	box, ok := findColor(m, c)
	if !ok {
		return vision.Answer{Data: json.RawMessage(`"none"`), Reason: "not visible"}, llm.Usage{}, nil
	}
	d, _ := json.Marshal(fmt.Sprintf("%.0fx%.0f", box.X2-box.X1, box.Y2-box.Y1))
	return vision.Answer{Data: d, Reason: "measured"}, llm.Usage{}, nil
}

// Locates returns the descriptions Locate was asked for, in order.
func (s *ColorSeer) Locates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.locates...)
}
