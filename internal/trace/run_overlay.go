// Overlays of a Run: a step's or tool call's actions drawn on the screenshot
// they were decided on (the drawing itself is overlay.go's DrawOverlay).

package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // decode PNG screenshots for overlays
	"os"
	"path/filepath"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
)

// Overlay encoding: JPEG at OverlayJPEGQuality with the long edge at most
// OverlayMaxLongEdge pixels; once a run has used 60% of its image budget,
// OverlaySmallQuality and OverlaySmallLongEdge.
const (
	OverlayJPEGQuality   = 70
	OverlayMaxLongEdge   = 1280
	OverlaySmallQuality  = 50
	OverlaySmallLongEdge = 960
)

// drawToolOverlay draws a session tool call's actions on the screenshot their
// image points refer to: it.frame (stored first unless a recent call already
// stored that frame; identical images share one file), else the call's own image.
func (r *Run) drawToolOverlay(ln Line, it item) {
	if !r.images || len(ln.Actions) == 0 || it.frame == nil && it.img == nil {
		return
	}
	var acts []action.Trace
	if json.Unmarshal(ln.Actions, &acts) != nil || !anyDrawn(acts) {
		return
	}
	if it.frame == nil {
		r.drawOverlay(ln.Step, acts)
		return
	}
	id := it.frame.Frame.ID
	if !r.hasShot(id) {
		r.storeImage(it.frame, ln.Step)
	}
	r.drawOverlay(ln.Step, acts, id)
}

// drawOverlayFor draws a task step's actions on the screenshot it was decided on.
func (r *Run) drawOverlayFor(st agent.StepTrace) {
	r.drawOverlay(st.Step, st.Actions, st.FrameID)
}

// drawOverlay draws acts on the screenshot of frameID (else the last one of
// step or before) and records it; nothing when no action would show (none,
// or only questions to a person).
func (r *Run) drawOverlay(step int, acts []action.Trace, frameID ...string) {
	if !r.images || !anyDrawn(acts) {
		return
	}
	var src *shot
	for i := len(r.shots) - 1; i >= 0; i-- {
		s := &r.shots[i]
		if len(frameID) > 0 && frameID[0] != "" && s.img.Frame.ID == frameID[0] {
			src = s
			break
		}
		if src == nil && s.step <= step {
			src = s
		}
	}
	if src == nil || src.img == nil || len(src.img.Data) == 0 {
		return
	}
	im, _, err := image.Decode(bytes.NewReader(src.img.Data))
	if err != nil {
		r.fail(fmt.Sprintf("decode screenshot %s for the overlay", src.rec.Ref), err)
		return
	}
	edge, quality := OverlayMaxLongEdge, OverlayJPEGQuality
	if r.imageCap > 0 && r.imageBytes > r.imageCap*6/10 {
		edge, quality = OverlaySmallLongEdge, OverlaySmallQuality
	}
	im, acts = shrinkForOverlay(im, acts, edge)
	ov := DrawOverlay(im, acts)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, ov, &jpeg.Options{Quality: quality}); err != nil {
		r.fail("encode overlay", err)
		return
	}
	if !r.fits(buf.Len()) {
		r.budgetNote()
		return
	}
	r.imageBytes += int64(buf.Len())
	ref := fmt.Sprintf("%s/overlay-%03d.jpg", ImagesDir, step)
	if err := os.WriteFile(filepath.Join(r.dir, filepath.FromSlash(ref)), buf.Bytes(), 0o600); err != nil {
		r.fail("write overlay", err)
		return
	}
	r.usedNames[ref] = true
	r.appendLine(Line{Time: time.Now(), RunID: r.id, Kind: KindOverlay, Step: step,
		Image: &ImageRecord{Ref: ref, MIME: "image/jpeg", Frame: src.img.Frame, Bytes: buf.Len(), SentAs: src.rec.Ref,
			Width: ov.Bounds().Dx(), Height: ov.Bounds().Dy()}})
}

// shrinkForOverlay scales im down so its long edge is at most edge pixels,
// and the actions' image points with it.
func shrinkForOverlay(im image.Image, acts []action.Trace, edge int) (image.Image, []action.Trace) {
	b := im.Bounds()
	long := max(b.Dx(), b.Dy())
	if long <= edge {
		return im, acts
	}
	f := float64(edge) / float64(long)
	dst := image.NewRGBA(image.Rect(0, 0, max(1, int(float64(b.Dx())*f+0.5)), max(1, int(float64(b.Dy())*f+0.5))))
	xdraw.ApproxBiLinear.Scale(dst, dst.Bounds(), im, b, xdraw.Src, nil)
	scale := func(p *geom.ImagePoint) *geom.ImagePoint {
		if p == nil {
			return nil
		}
		// Pixel centres map to pixel centres.
		return &geom.ImagePoint{X: (p.X+0.5)*f - 0.5, Y: (p.Y+0.5)*f - 0.5}
	}
	out := make([]action.Trace, len(acts))
	for i, a := range acts {
		a.Image, a.ImageTo = scale(a.Image), scale(a.ImageTo)
		out[i] = a
	}
	return dst, out
}
