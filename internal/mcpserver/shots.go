package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // templates may be JPEG
	_ "image/png"
	"math"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
)

// ShotInfo is the metadata returned with every screenshot and zoom image.
type ShotInfo struct {
	FrameID string `json:"frame_id"`
	Display string `json:"display"`
	// ImageWidth and ImageHeight are the image's size in pixels (including padding).
	ImageWidth  int `json:"image_width"`
	ImageHeight int `json:"image_height"`
	// Scale is image pixels per logical screen pixel.
	Scale float64 `json:"scale"`
	// Region is the captured rectangle in global logical pixels.
	Region DisplayRect `json:"region"`
	// ContentWidth/Height differ from the image size only when the image is padded.
	ContentWidth  int    `json:"content_width,omitempty"`
	ContentHeight int    `json:"content_height,omitempty"`
	Format        string `json:"format"`
	Bytes         int    `json:"bytes"`
	Quality       int    `json:"quality,omitempty"`
}

// DisplayRect is a rectangle in global logical pixels.
type DisplayRect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

func infoOf(shot *imaging.Shot) ShotInfo {
	f := shot.Frame
	size := f.ImageSize()
	info := ShotInfo{
		FrameID: f.ID, Display: f.Display.ID, ImageWidth: size.W, ImageHeight: size.H,
		Scale:  math.Round(float64(f.Content.W)/float64(f.Region.W)*10000) / 10000,
		Region: DisplayRect{f.Region.X, f.Region.Y, f.Region.W, f.Region.H},
		Format: strings.TrimPrefix(shot.MIME, "image/"), Bytes: len(shot.Data),
	}
	if f.Content != size {
		info.ContentWidth, info.ContentHeight = f.Content.W, f.Content.H
	}
	if info.Format == "jpeg" {
		info.Quality = shot.Quality
	}
	return info
}

// capture takes a screenshot of region on d (zero = whole display) and makes
// it the session's latest frame of d.
func (s *Server) capture(ctx context.Context, c *call, d geom.Display, region geom.Rect, o imaging.Options) (*imaging.Shot, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	shot, err := s.shots.Shoot(ctx, s.screen, d, region, o, s.nextFrameID())
	if err != nil {
		return nil, fmt.Errorf("screenshot of display %s: %w", d.ID, err)
	}
	kept := *shot
	kept.Pixels = nil // the record keeps the encoded image only
	c.img = &kept
	s.frames.put(c.ss, shot.Frame, c.img)
	return shot, nil
}

// shoot returns a screenshot result: the image and its metadata as JSON.
func (s *Server) shoot(ctx context.Context, c *call, d geom.Display, region geom.Rect, o imaging.Options, note string) (*mcp.CallToolResult, error) {
	res, _, err := s.shootShot(ctx, c, d, region, o, note)
	return res, err
}

// shootShot is shoot, also returning the screenshot.
func (s *Server) shootShot(ctx context.Context, c *call, d geom.Display, region geom.Rect, o imaging.Options, note string) (*mcp.CallToolResult, *imaging.Shot, error) {
	shot, err := s.capture(ctx, c, d, region, o)
	if err != nil {
		return nil, nil, err
	}
	res, err := jsonResult(infoOf(shot))
	if err != nil {
		return nil, nil, err
	}
	if note != "" {
		res.Content = append([]mcp.Content{&mcp.TextContent{Text: note}}, res.Content...)
	}
	res.Content = append([]mcp.Content{&mcp.ImageContent{Data: shot.Data, MIMEType: shot.MIME}}, res.Content...)
	return res, shot, nil
}

// done finishes an input tool: the text of what happened, plus a fresh
// screenshot of d when ScreenshotAfterAction is on. out, when given, is the
// result's structured content (InputResult: where the tool acted and how the
// point was found), the screenshot's metadata in it as screenshot.
func (s *Server) done(ctx context.Context, c *call, d geom.Display, out *InputResult, format string, args ...any) (*mcp.CallToolResult, error) {
	text := fmt.Sprintf(format, args...)
	finish := func(res *mcp.CallToolResult, shot *imaging.Shot) (*mcp.CallToolResult, error) {
		if out == nil {
			return res, nil
		}
		if shot != nil {
			info := infoOf(shot)
			out.Screenshot = &info
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encoding result: %w", err)
		}
		res.StructuredContent = json.RawMessage(b)
		return res, nil
	}
	if !s.opts.ScreenshotAfterAction || d.ID == "" {
		return finish(textResult("%s", text), nil)
	}
	t := time.NewTimer(s.opts.AfterActionDelay)
	select {
	case <-ctx.Done():
		t.Stop()
		return finish(textResult("%s (no screenshot: %v)", text, ctx.Err()), nil)
	case <-t.C:
	}
	res, shot, err := s.shootShot(ctx, c, d, geom.Rect{}, s.shotOptions(0, "", 0), text)
	if err != nil {
		// The action happened; say so, and why the screenshot is missing.
		return finish(textResult("%s (screenshot after the action failed: %v)", text, err), nil)
	}
	return finish(res, shot)
}

// FindImageArgs are gui_find_image's arguments.
type FindImageArgs struct {
	Template  string  `json:"template" jsonschema:"base64 PNG or JPEG cut from a screenshot"`
	Threshold float64 `json:"threshold,omitempty" jsonschema:"minimum score; default 0.9"`
	Display   string  `json:"display,omitempty"`
}

// Match is one place gui_find_image found the template.
type Match struct {
	// X and Y are the match's centre in pixels of the returned frame's image.
	X float64 `json:"x"`
	Y float64 `json:"y"`
	// Width and Height are the match's size in image pixels.
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Score  float64 `json:"score"`
	// GlobalX and GlobalY are the centre in global logical pixels.
	GlobalX int `json:"global_x"`
	GlobalY int `json:"global_y"`
}

func (s *Server) findImageTool() toolDef {
	return newTool(s, GroupObserve, "gui_find_image", "Find an image",
		"Find a small image (icon, button) on a new screenshot, which becomes the latest: matches best first, centre x, y, size, score (1 = identical).",
		readOnly,
		func(sc *jsonschema.Schema) {
			between(sc, "threshold", 0, 1)
			prop(sc, "template").ContentEncoding = "base64"
		},
		func(ctx context.Context, c *call, in FindImageArgs) (*mcp.CallToolResult, error) {
			data, cfg, err := templateData(in.Template)
			if err != nil {
				return nil, err
			}
			threshold := in.Threshold
			if threshold == 0 {
				threshold = 0.9
			}
			d, _, err := s.display(ctx, in.Display)
			if err != nil {
				return nil, err
			}
			// Match at the scale of the latest image the caller saw.
			edge := s.defaultLongEdge()
			if h, _, ok := s.frames.current(c.ss, d.ID); ok && h.frame.Region == d.Bounds {
				edge = h.frame.Content.LongEdge()
			}
			if cfg.Width > edge || cfg.Height > edge { // before capturing: no side of the screenshot exceeds edge
				return nil, fmt.Errorf("template is %dx%d pixels, larger than the screenshot (%d pixels on its long side) it is matched against: crop it to the element you look for", cfg.Width, cfg.Height, edge)
			}
			o := s.shotOptions(edge, "png", 0)
			o.MaxBytes, o.KeepPixels = 64<<20, true
			shot, err := s.capture(ctx, c, d, geom.Rect{}, o)
			if err != nil {
				return nil, err
			}
			rgba := shot.Pixels // match on the pixels that were encoded, without decoding them again
			tmpl, err := imaging.DecodeLimited(data, rgba.Bounds().Dx(), rgba.Bounds().Dy())
			if errors.Is(err, imaging.ErrImageTooLarge) {
				return nil, fmt.Errorf("template %dx%d is larger than the %dx%d screenshot: crop it to the element you look for", cfg.Width, cfg.Height, rgba.Bounds().Dx(), rgba.Bounds().Dy())
			} else if err != nil {
				return nil, fmt.Errorf("template: %w", err)
			}
			found := imaging.FindTemplate(rgba, tmpl, threshold, 10)
			f := shot.Frame
			matches := make([]Match, 0, len(found))
			for _, m := range found {
				cx := float64(m.Rect.Min.X+m.Rect.Max.X-1) / 2
				cy := float64(m.Rect.Min.Y+m.Rect.Max.Y-1) / 2
				r, err := f.Resolve(geom.ImagePoint{X: cx, Y: cy}, false)
				if err != nil {
					continue
				}
				matches = append(matches, Match{X: cx, Y: cy, Width: m.Rect.Dx(), Height: m.Rect.Dy(),
					Score: math.Round(m.Score*1000) / 1000, GlobalX: r.Global.X, GlobalY: r.Global.Y})
			}
			return jsonResult(map[string]any{"frame_id": f.ID, "display": d.ID, "threshold": threshold, "matches": matches,
				"image_width": f.ImageSize().W, "image_height": f.ImageSize().H})
		})
}

// templateData decodes gui_find_image's base64 template (a data URL prefix is
// allowed) and reads its image header, refusing more than MaxTemplateBytes
// and anything but PNG or JPEG before decoding pixels.
func templateData(b64 string) ([]byte, image.Config, error) {
	raw := strings.TrimSpace(b64)
	if i := strings.Index(raw, ";base64,"); strings.HasPrefix(raw, "data:") && i >= 0 {
		raw = raw[i+len(";base64,"):]
	}
	if base64.StdEncoding.DecodedLen(len(raw)) > MaxTemplateBytes {
		return nil, image.Config{}, fmt.Errorf("template is larger than %d bytes: crop it to the element you look for", MaxTemplateBytes)
	}
	data, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, image.Config{}, fmt.Errorf("template is not valid base64: %v", err)
	}
	cfg, _, err := imaging.DecodeConfig(data)
	if err != nil {
		return nil, image.Config{}, fmt.Errorf("template is %w", err)
	}
	return data, cfg, nil
}
