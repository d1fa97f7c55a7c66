package imaging

import (
	"errors"
	"image"
	"image/color"
	"image/draw"
	"math/rand/v2"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

func TestThumbDiff(t *testing.T) {
	white := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	draw.Draw(white, white.Rect, image.NewUniform(color.White), image.Point{}, draw.Src)
	black := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	draw.Draw(black, black.Rect, image.NewUniform(color.Black), image.Point{}, draw.Src)
	tw, tb := ThumbOf(white), ThumbOf(black)
	if d := Diff(tw, tw); d != 0 {
		t.Errorf("Diff of identical thumbs = %v", d)
	}
	if d := Diff(tw, tb); d != 1 {
		t.Errorf("Diff white/black = %v, want 1", d)
	}
	// A small dialog appearing changes the thumb a little; a different screen a lot.
	busy := busyScreen(1280, 720, 1)
	dialog := image.NewRGBA(busy.Rect)
	copy(dialog.Pix, busy.Pix)
	fillLogical(dialog, geom.Display{Bounds: geom.Rect{W: 1280, H: 720}}, geom.Rect{X: 500, Y: 300, W: 160, H: 90}, color.RGBA{20, 20, 120, 255})
	small := Diff(ThumbOf(busy), ThumbOf(dialog))
	other := Diff(ThumbOf(busy), ThumbOf(busyScreen(1280, 720, 2)))
	if small <= 0 || small > 0.05 {
		t.Errorf("a 160x90 dialog gave Diff %.4f, want small but non-zero", small)
	}
	if Diff(ThumbOf(busy), tb) < 0.5 {
		t.Errorf("busy vs black Diff too small")
	}
	if other >= small*3 && other > 0.02 {
		// fine: unrelated screens differ more
	} else if other < small {
		t.Errorf("unrelated screens Diff %.4f smaller than a dialog's %.4f", other, small)
	}
	// The generic path (any image.Image) agrees with the RGBA fast path.
	nrgba := image.NewNRGBA(busy.Rect)
	draw.Draw(nrgba, nrgba.Rect, busy, image.Point{}, draw.Src)
	if d := Diff(ThumbOf(busy), ThumbOf(nrgba)); d > 0.005 {
		t.Errorf("generic and RGBA thumbs differ by %.4f", d)
	}
	// Tiny images still give a full thumb.
	tiny := image.NewRGBA(image.Rect(0, 0, 5, 3))
	draw.Draw(tiny, tiny.Rect, image.NewUniform(color.White), image.Point{}, draw.Src)
	if d := Diff(ThumbOf(tiny), tw); d != 0 {
		t.Errorf("5x3 white thumb differs from white by %v", d)
	}
}

func TestFindTemplateFindsPastedIcon(t *testing.T) {
	screen := busyScreen(1280, 720, 4)
	r := rand.New(rand.NewPCG(1, 1))
	icon := image.NewRGBA(image.Rect(0, 0, 48, 40))
	for y := range 40 {
		for x := range 48 {
			v := uint8(0)
			if (x/6+y/5)%2 == 0 {
				v = 255
			}
			icon.SetRGBA(x, y, color.RGBA{v, uint8(r.IntN(60)), 255 - v, 255})
		}
	}
	at := []image.Point{{900, 100}, {37, 613}}
	for _, p := range at {
		draw.Draw(screen, image.Rectangle{p, p.Add(icon.Rect.Size())}, icon, image.Point{}, draw.Src)
	}
	got := FindTemplate(screen, icon, 0.9, 5)
	if len(got) != 2 {
		t.Fatalf("found %d matches %v, want 2", len(got), got)
	}
	for _, p := range at {
		want := image.Rectangle{p, p.Add(icon.Rect.Size())}
		ok := false
		for _, m := range got {
			if m.Rect == want && m.Score > 0.99 {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no exact match at %v in %v", want, got)
		}
	}
	if m := FindTemplate(screen, icon, 0.9, 1); len(m) != 1 {
		t.Errorf("maxResults=1 returned %d matches", len(m))
	}
	// A template that is not on screen is not found.
	absent := image.NewRGBA(image.Rect(0, 0, 48, 40))
	for y := range 40 {
		for x := range 48 {
			absent.SetRGBA(x, y, color.RGBA{uint8(x * 5), uint8(y * 6), uint8(r.IntN(255)), 255})
		}
	}
	if m := FindTemplate(screen, absent, 0.9, 5); len(m) != 0 {
		t.Errorf("absent template matched: %v", m)
	}
	// A sub-image screen reports rects in its own coordinates.
	sub := screen.SubImage(image.Rect(800, 50, 1100, 300)).(*image.RGBA)
	if m := FindTemplate(sub, icon, 0.9, 5); len(m) != 1 || m[0].Rect.Min != at[0] {
		t.Errorf("sub-image search = %v, want one match at %v", m, at[0])
	}
}

func TestDecodeRejectsGarbage(t *testing.T) {
	_, err := Decode([]byte("not an image"))
	if err == nil || errors.Unwrap(err) == nil {
		t.Fatalf("err = %v, want a wrapped decode error", err)
	}
}
