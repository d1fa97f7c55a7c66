package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

// The observe group: see the screen; changes nothing.

// DisplaysArgs are gui_list_displays' arguments (none).
type DisplaysArgs struct{}

// DisplayInfo is one display as gui_list_displays reports it.
type DisplayInfo struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	X           int     `json:"x"`
	Y           int     `json:"y"`
	Width       int     `json:"width"`
	Height      int     `json:"height"`
	ScaleFactor float64 `json:"scale_factor"`
	Primary     bool    `json:"primary"`
}

func displayInfos(ds []geom.Display) []DisplayInfo {
	out := make([]DisplayInfo, len(ds))
	for i, d := range ds {
		out[i] = DisplayInfo{d.ID, d.Name, d.Bounds.X, d.Bounds.Y, d.Bounds.W, d.Bounds.H, d.ScaleFactor(), d.Primary}
	}
	return out
}

func (s *Server) listDisplaysTool() toolDef {
	return newTool(s, GroupObserve, "gui_list_displays", "List displays",
		"List the monitors: id, name, x, y, width, height (screen pixels), scale_factor, primary.",
		readOnly, nil,
		func(ctx context.Context, c *call, _ DisplaysArgs) (*mcp.CallToolResult, error) {
			ds, err := s.displays(ctx)
			if err != nil {
				return nil, err
			}
			return jsonResult(map[string]any{"displays": displayInfos(ds)})
		})
}

// ScreenshotArgs are gui_screenshot's arguments.
type ScreenshotArgs struct {
	Display     string `json:"display,omitempty"`
	MaxLongEdge int    `json:"max_long_edge,omitempty" jsonschema:"longest side in pixels; default 1920"`
	Format      string `json:"format,omitempty" jsonschema:"default jpeg"`
	Quality     int    `json:"quality,omitempty" jsonschema:"default 75, lowered to fit the byte budget"`
}

func (s *Server) screenshotTool() toolDef {
	return newTool(s, GroupObserve, "gui_screenshot", "Screenshot",
		"Capture a display: the image, its frame_id, size and scale (image pixels per screen pixel). Later points are pixels of this image.",
		readOnly,
		func(sc *jsonschema.Schema) {
			between(sc, "max_long_edge", 64, 4096)
			enum(sc, "format", "jpeg", "png")
			between(sc, "quality", 1, 100)
		},
		func(ctx context.Context, c *call, in ScreenshotArgs) (*mcp.CallToolResult, error) {
			d, _, err := s.display(ctx, in.Display)
			if err != nil {
				return nil, err
			}
			return s.shoot(ctx, c, d, geom.Rect{}, s.shotOptions(in.MaxLongEdge, in.Format, in.Quality), "")
		})
}

// ZoomArgs are gui_zoom's arguments.
type ZoomArgs struct {
	X1 float64 `json:"x1"`
	Y1 float64 `json:"y1"`
	X2 float64 `json:"x2"`
	Y2 float64 `json:"y2"`
	Where
}

func (s *Server) zoomTool() toolDef {
	return newTool(s, GroupObserve, "gui_zoom", "Zoom",
		"Capture the region (x1,y1)-(x2,y2) at higher resolution, as gui_screenshot does; it becomes the latest.",
		readOnly, func(sc *jsonschema.Schema) { s.pointSchema(sc) },
		func(ctx context.Context, c *call, in ZoomArgs) (*mcp.CallToolResult, error) {
			z, err := s.parse(action.Raw{Kind: action.Zoom, At: []float64{in.X1, in.Y1}, To: []float64{in.X2, in.Y2}}, in.Space)
			if err != nil {
				return nil, err
			}
			a, err := s.resolve(ctx, c.ss, in.Where, *z.At)
			if err != nil {
				return nil, fmt.Errorf("zoom corner (x1,y1): %w", err)
			}
			b, err := s.resolve(ctx, c.ss, in.Where, *z.To)
			if err != nil {
				return nil, fmt.Errorf("zoom corner (x2,y2): %w", err)
			}
			if a.Display.ID != b.Display.ID {
				return nil, fmt.Errorf("the zoom region spans displays %s and %s: give a region on one display", a.Display.ID, b.Display.ID)
			}
			region, err := geom.ZoomRegion(a.Global, b.Global, a.Display)
			if err != nil {
				return nil, err
			}
			// A zoom is at most 4x the region's logical size and never larger than a screenshot.
			o := s.shotOptions(0, "", 0)
			o.MaxLongEdge = min(s.defaultLongEdge(), 4*region.Size().LongEdge())
			return s.shoot(ctx, c, a.Display, region, o, "")
		})
}

// CursorArgs are gui_cursor_position's arguments.
type CursorArgs struct {
	Display string `json:"display,omitempty" jsonschema:"default: the one under the pointer"`
	FrameID string `json:"frame_id,omitempty" jsonschema:"give x, y in this image"`
}

func (s *Server) cursorPositionTool() toolDef {
	return newTool(s, GroupObserve, "gui_cursor_position", "Pointer position",
		"The pointer position in the display's latest image (x, y) and in screen pixels (global_x, global_y).",
		readOnly, nil,
		func(ctx context.Context, c *call, in CursorArgs) (*mcp.CallToolResult, error) {
			g, err := s.input.CursorPosition(ctx)
			if err != nil {
				return nil, fmt.Errorf("reading the pointer position: %w", err)
			}
			ip, f, inside, err := s.imageOf(ctx, c.ss, in.Display, in.FrameID, g)
			if err != nil {
				return nil, err
			}
			return jsonResult(map[string]any{
				"x": round2(ip.X), "y": round2(ip.Y), "in_image": inside,
				"global_x": g.X, "global_y": g.Y, "display": f.Display.ID, "frame_id": f.ID,
			})
		})
}

// WaitArgs are gui_wait's arguments.
type WaitArgs struct {
	MS int `json:"ms" jsonschema:"milliseconds"`
}

func (s *Server) waitTool() toolDef {
	return newTool(s, GroupObserve, "gui_wait", "Wait",
		"Wait some milliseconds (at most 30000).",
		readOnly, func(sc *jsonschema.Schema) { between(sc, "ms", 0, float64(s.opts.MaxWait.Milliseconds())) },
		func(ctx context.Context, c *call, in WaitArgs) (*mcp.CallToolResult, error) {
			d := time.Duration(in.MS) * time.Millisecond
			if d < 0 {
				return nil, fmt.Errorf("ms must not be negative, got %d", in.MS)
			}
			capped := ""
			if d > s.opts.MaxWait {
				d, capped = s.opts.MaxWait, fmt.Sprintf(" (capped from %d ms)", in.MS)
			}
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("wait cancelled: %w", ctx.Err())
			case <-t.C:
			}
			return textResult("waited %d ms%s", d.Milliseconds(), capped), nil
		})
}
