// The image budget of a Run: screenshots stored once per content, under the
// run's byte cap, and the recent ones kept for overlays.

package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm"
)

type shot struct {
	step int
	rec  ImageRecord
	img  *llm.Image
}

// keepShots is how many recent screenshots the writer keeps for overlays.
const keepShots = 4

func extFor(mime string) string {
	switch mime {
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/webp":
		return ".webp"
	}
	return ".img"
}

// storeImage writes img once per content and returns its record.
func (r *Run) storeImage(img *llm.Image, step int) ImageRecord {
	sum := sha256.Sum256(img.Data)
	rec := ImageRecord{MIME: img.MIME, Frame: img.Frame, Bytes: len(img.Data), SHA256: hex.EncodeToString(sum[:])}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(img.Data)); err == nil {
		rec.Width, rec.Height = cfg.Width, cfg.Height
	}
	if r.images {
		if ref, ok := r.hashes[sum]; ok {
			rec.Ref = ref
		} else if !r.fits(len(img.Data)) {
			rec.Omitted = r.budgetNote()
		} else {
			rec.Ref = r.imageName(img, step)
			err := os.WriteFile(filepath.Join(r.dir, filepath.FromSlash(rec.Ref)), img.Data, 0o600)
			if err != nil {
				r.fail("write image", err)
				rec.Ref = ""
			} else {
				r.hashes[sum] = rec.Ref
				r.imageBytes += int64(len(img.Data))
			}
		}
		if img.Ref != "" && img.Ref != rec.Ref {
			rec.SentAs = img.Ref
			if rec.Ref != "" {
				r.refs[img.Ref] = rec.Ref
			}
		}
	}
	r.shots = append(r.shots, shot{step: step, rec: rec, img: img})
	if len(r.shots) > keepShots {
		r.shots = r.shots[len(r.shots)-keepShots:]
	}
	return rec
}

// fits reports whether n more image bytes stay within the run's image budget.
func (r *Run) fits(n int) bool {
	return r.imageCap == 0 || r.imageBytes+int64(n) <= r.imageCap
}

// budgetNote explains an omitted image, and records a warning line the first time.
func (r *Run) budgetNote() string {
	msg := fmt.Sprintf("not stored: the run's image budget of %d MB is used up (raise it with trace.Options.MaxRunImageBytes)", r.imageCap>>20)
	if !r.capNoted {
		r.capNoted = true
		r.appendLine(Line{Time: time.Now(), RunID: r.id, Kind: string(agent.EvWarning), Message: "recorder: later images " + msg})
	}
	return msg
}

// imageName picks a new file name: the image's own Ref when it is a plain
// name under images/, else step-NNN, made unique.
func (r *Run) imageName(img *llm.Image, step int) string {
	ext := extFor(img.MIME)
	base := fmt.Sprintf("step-%03d", step)
	if r.kind == KindSession {
		base = fmt.Sprintf("call-%03d", step)
	}
	if dir, file := path.Split(img.Ref); dir == ImagesDir+"/" && file != "" && sanitizeID(file) == file {
		base, ext = strings.TrimSuffix(file, path.Ext(file)), path.Ext(file)
		if ext == "" {
			ext = extFor(img.MIME)
		}
	}
	name := ImagesDir + "/" + base + ext
	for i := 2; r.usedNames[name] || strings.HasPrefix(base, "overlay-"); i++ {
		name = fmt.Sprintf("%s/%s-%d%s", ImagesDir, base, i, ext)
		base = strings.TrimPrefix(base, "overlay-")
	}
	r.usedNames[name] = true
	return name
}

// hasShot reports whether a recent screenshot has frame id.
func (r *Run) hasShot(id string) bool {
	for _, s := range r.shots {
		if id != "" && s.img.Frame.ID == id {
			return true
		}
	}
	return false
}
