package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/safety"
)

// toolList is every tool the server defines, in the order clients see them;
// OfferedTools decides which of them it registers.
func (s *Server) toolList() []toolDef {
	return []toolDef{
		s.listDisplaysTool(),
		s.screenshotTool(),
		s.zoomTool(),
		s.cursorPositionTool(),
		s.moveTool(),
		s.clickTool(),
		s.doubleClickTool(),
		s.mouseDownTool(),
		s.mouseUpTool(),
		s.dragTool(),
		s.scrollTool(),
		s.typeTool(),
		s.pressKeyTool(),
		s.hotkeyTool(),
		s.waitTool(),
		s.findImageTool(),
		s.clipboardTool(),
		s.locateTool(), s.queryTool(), s.assertTool(), s.waitForTool(),
		s.executeTaskTool(),
		s.runFlowTool(),
	}
}

// Shared argument fields.

// Where selects the display and the coordinate space of a tool's points.
type Where struct {
	Display string `json:"display,omitempty" jsonschema:"display id from gui_list_displays; default: the primary display"`
	Space   string `json:"space,omitempty" jsonschema:"how to read x/y: image (pixels of the latest screenshot/zoom image of the display), screen (global logical pixels), or a normalized mode over the latest image (normalized-1000, normalized-999, normalized-0-1, yx-normalized-1000). Default: image"`
	FrameID string `json:"frame_id,omitempty" jsonschema:"frame_id of the screenshot or zoom image x/y refer to, from any MCP session of this server (it keeps the 32 most recent); default: this session's latest image of the display, else the latest taken in any session"`
}

// spaceEnum lists the accepted spaces and states the server's default.
func (s *Server) spaceEnum(sc *jsonschema.Schema) {
	enum(sc, "space", geom.SpaceNames...)
	p := prop(sc, "space")
	p.Description = strings.TrimSuffix(p.Description, "image") + string(s.mode)
}

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
	return newTool(s, "gui_list_displays", "List displays",
		"List the monitors: id, name, position and size in global logical pixels (x, y, width, height), scale_factor (device pixels per logical pixel), primary.",
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
	Display     string `json:"display,omitempty" jsonschema:"display id from gui_list_displays; default: the primary display"`
	MaxLongEdge int    `json:"max_long_edge,omitempty" jsonschema:"longest side of the image in pixels (64-4096); default 1920. Later coordinates refer to this image"`
	Format      string `json:"format,omitempty" jsonschema:"jpeg (default) or png"`
	Quality     int    `json:"quality,omitempty" jsonschema:"JPEG quality 1-100; default 75 (lowered automatically to stay under the size budget)"`
}

func (s *Server) screenshotTool() toolDef {
	return newTool(s, "gui_screenshot", "Take a screenshot",
		"Capture a display. Returns the image and JSON metadata: frame_id, display, image_width, image_height, scale (image pixels per logical pixel). Coordinates you give other tools afterwards are pixels of this image.",
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
	X1 float64 `json:"x1" jsonschema:"left edge of the region"`
	Y1 float64 `json:"y1" jsonschema:"top edge of the region"`
	X2 float64 `json:"x2" jsonschema:"right edge of the region"`
	Y2 float64 `json:"y2" jsonschema:"bottom edge of the region"`
	Where
}

func (s *Server) zoomTool() toolDef {
	return newTool(s, "gui_zoom", "Zoom into a region",
		"Capture a region at higher resolution. Returns the image and metadata like gui_screenshot; the zoom image becomes the latest image of the display, so later coordinates are pixels of it."+coordinateDoc,
		readOnly, s.spaceEnum,
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
	Display string `json:"display,omitempty" jsonschema:"express the position in the latest image of this display; default: the display under the pointer"`
	FrameID string `json:"frame_id,omitempty" jsonschema:"express the position in this screenshot or zoom image (its frame_id, from any MCP session of this server); default: the latest image of the display"`
}

func (s *Server) cursorPositionTool() toolDef {
	return newTool(s, "gui_cursor_position", "Pointer position",
		"Report the mouse pointer position: x, y in pixels of the latest image of the display (in_image tells whether it lies inside that image), and global_x, global_y in global logical pixels.",
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

// MoveArgs are gui_move's arguments.
type MoveArgs struct {
	X      *float64 `json:"x,omitempty" jsonschema:"x of the target point"`
	Y      *float64 `json:"y,omitempty" jsonschema:"y of the target point"`
	Target string   `json:"target,omitempty" jsonschema:"the element to move to, in words, located by the vision model; instead of x and y"`
	Where
}

func (s *Server) moveTool() toolDef {
	return newTool(s, "gui_move", "Move the pointer",
		"Move the mouse pointer to a point without clicking."+coordinateDoc+targetDoc,
		changesDesk, func(sc *jsonschema.Schema) { s.spaceEnum(sc); singleXY(sc, "x", "y") },
		func(ctx context.Context, c *call, in MoveArgs) (*mcp.CallToolResult, error) {
			at, space, l, err := s.pointOrTarget(ctx, c, in.X, in.Y, in.Target, in.Space, in.Display, "target", false)
			if err != nil {
				return nil, err
			}
			a, err := s.parse(action.Raw{Kind: action.Move, At: at}, space)
			if err != nil {
				return nil, err
			}
			t, err := s.resolveAt(ctx, c, in.Where, *a.At, l)
			if err != nil {
				return nil, err
			}
			start := time.Now()
			err = s.input.Move(ctx, t.Global)
			s.noteAction(c, a, t.Display, &t, nil, start, err)
			if err != nil {
				return nil, inputError("move", err)
			}
			return s.done(ctx, c, t.Display, "%smoved the pointer to %s%s", locatedText(l), t, warn(t))
		})
}

// ClickArgs are gui_click's arguments.
type ClickArgs struct {
	X         *float64 `json:"x,omitempty" jsonschema:"x of the point to click"`
	Y         *float64 `json:"y,omitempty" jsonschema:"y of the point to click"`
	Target    string   `json:"target,omitempty" jsonschema:"the element to click, in words, located by the vision model; instead of x and y"`
	Button    string   `json:"button,omitempty" jsonschema:"left (default), right or middle"`
	Clicks    int      `json:"clicks,omitempty" jsonschema:"1 (default), 2 (double) or 3 (triple click)"`
	Modifiers []string `json:"modifiers,omitempty" jsonschema:"keys held during the click, e.g. [\"ctrl\"] or [\"shift\"]"`
	Where
}

func buttonEnum(sc *jsonschema.Schema) { enum(sc, "button", "left", "right", "middle") }

func (s *Server) clickTool() toolDef {
	return newTool(s, "gui_click", "Click",
		"Move to a point and click a mouse button, optionally several times and with modifier keys held."+coordinateDoc+targetDoc,
		changesDesk,
		func(sc *jsonschema.Schema) {
			s.spaceEnum(sc)
			singleXY(sc, "x", "y")
			buttonEnum(sc)
			between(sc, "clicks", 1, action.MaxClicks)
		},
		func(ctx context.Context, c *call, in ClickArgs) (*mcp.CallToolResult, error) {
			return s.click(ctx, c, in)
		})
}

func (s *Server) click(ctx context.Context, c *call, in ClickArgs) (*mcp.CallToolResult, error) {
	res, _, err := s.clickAt(ctx, c, in)
	return res, err
}

// clickAt clicks and also returns the display clicked on.
func (s *Server) clickAt(ctx context.Context, c *call, in ClickArgs) (*mcp.CallToolResult, geom.Display, error) {
	// Check what needs no model first: a blocked modifier must not cost a locate.
	pre, err := s.parse(action.Raw{Kind: action.Click, At: []float64{0, 0}, Button: in.Button, Clicks: in.Clicks, Keys: in.Modifiers}, "")
	if err == nil {
		err = s.checkKeys(ctx, c, pre.Keys)
	}
	if err != nil {
		return nil, geom.Display{}, err
	}
	at, space, l, err := s.pointOrTarget(ctx, c, in.X, in.Y, in.Target, in.Space, in.Display, "target", false)
	if err != nil {
		return nil, geom.Display{}, err
	}
	a, err := s.parse(action.Raw{Kind: action.Click, At: at, Button: in.Button, Clicks: in.Clicks, Keys: in.Modifiers}, space)
	if err != nil {
		return nil, geom.Display{}, err
	}
	if err := s.checkKeys(ctx, c, a.Keys); err != nil {
		return nil, geom.Display{}, err
	}
	t, err := s.resolveAt(ctx, c, in.Where, *a.At, l)
	if err != nil {
		return nil, geom.Display{}, err
	}
	b, n := a.ButtonOrLeft(), a.Clicks()
	start := time.Now()
	err = s.input.Click(ctx, &t.Global, b, n, a.Keys)
	s.noteAction(c, a, t.Display, &t, nil, start, err)
	if err != nil {
		return nil, t.Display, inputError("click", err)
	}
	what := map[int]string{1: "clicked", 2: "double-clicked", 3: "triple-clicked"}[n]
	res, err := s.done(ctx, c, t.Display, "%s%s %s%s at %s%s", locatedText(l), what, b, withMods(a.Keys), t, warn(t))
	return res, t.Display, err
}

// DoubleClickArgs are gui_double_click's arguments.
type DoubleClickArgs struct {
	X      *float64 `json:"x,omitempty" jsonschema:"x of the point to double-click"`
	Y      *float64 `json:"y,omitempty" jsonschema:"y of the point to double-click"`
	Target string   `json:"target,omitempty" jsonschema:"the element to double-click, in words, located by the vision model; instead of x and y"`
	Where
}

func (s *Server) doubleClickTool() toolDef {
	return newTool(s, "gui_double_click", "Double-click",
		"Double-click the left mouse button at a point."+coordinateDoc+targetDoc,
		changesDesk, func(sc *jsonschema.Schema) { s.spaceEnum(sc); singleXY(sc, "x", "y") },
		func(ctx context.Context, c *call, in DoubleClickArgs) (*mcp.CallToolResult, error) {
			return s.click(ctx, c, ClickArgs{X: in.X, Y: in.Y, Target: in.Target, Clicks: 2, Where: in.Where})
		})
}

// ButtonArgs are gui_mouse_down's and gui_mouse_up's arguments.
type ButtonArgs struct {
	X      *float64 `json:"x,omitempty" jsonschema:"x of the point; omit x and y to use the current pointer position"`
	Y      *float64 `json:"y,omitempty" jsonschema:"y of the point; omit x and y to use the current pointer position"`
	Button string   `json:"button,omitempty" jsonschema:"left (default), right or middle"`
	Where
}

// MouseDownArgs are gui_mouse_down's arguments.
type MouseDownArgs struct {
	X      *float64 `json:"x,omitempty" jsonschema:"x of the point; omit x and y (and target) to use the current pointer position"`
	Y      *float64 `json:"y,omitempty" jsonschema:"y of the point; omit x and y (and target) to use the current pointer position"`
	Target string   `json:"target,omitempty" jsonschema:"the element to press the button on, in words, located by the vision model; instead of x and y"`
	Button string   `json:"button,omitempty" jsonschema:"left (default), right or middle"`
	Where
}

func (s *Server) mouseDownTool() toolDef {
	return newTool(s, "gui_mouse_down", "Press a mouse button",
		"Press and hold a mouse button (optionally after moving to a point). Release it with gui_mouse_up."+coordinateDoc+targetDoc,
		changesDesk, func(sc *jsonschema.Schema) { s.spaceEnum(sc); buttonEnum(sc); singleXY(sc, "x", "y") },
		func(ctx context.Context, c *call, in MouseDownArgs) (*mcp.CallToolResult, error) {
			return s.button(ctx, c, ButtonArgs{X: in.X, Y: in.Y, Button: in.Button, Where: in.Where}, in.Target, true)
		})
}

func (s *Server) mouseUpTool() toolDef {
	return newTool(s, "gui_mouse_up", "Release a mouse button",
		"Release a mouse button (optionally after moving to a point)."+coordinateDoc,
		changesDesk, func(sc *jsonschema.Schema) { s.spaceEnum(sc); buttonEnum(sc); singleXY(sc, "x", "y") },
		func(ctx context.Context, c *call, in ButtonArgs) (*mcp.CallToolResult, error) {
			return s.button(ctx, c, in, "", false)
		})
}

func (s *Server) button(ctx context.Context, c *call, in ButtonArgs, words string, down bool) (*mcp.CallToolResult, error) {
	verb, op, kind := "released", s.input.MouseUp, action.MouseUp
	if down {
		verb, op, kind = "pressed", s.input.MouseDown, action.MouseDown
	}
	at, space, l, err := s.pointOrTarget(ctx, c, in.X, in.Y, words, in.Space, in.Display, "target", true)
	if err != nil {
		return nil, err
	}
	a, err := s.parse(action.Raw{Kind: kind, At: at, Button: in.Button}, space)
	if err != nil {
		return nil, err
	}
	var p actionPoint
	if l != nil {
		p = actionPoint{at: &l.t.Global, t: &l.t, where: "at " + l.t.String() + warn(l.t), display: l.t.Display}
	} else if p, err = s.optPoint(ctx, c.ss, in.Where, a.At); err != nil {
		return nil, err
	}
	b := a.ButtonOrLeft()
	start := time.Now()
	err = op(ctx, p.at, b)
	s.noteAction(c, a, p.display, p.t, nil, start, err)
	if err != nil {
		return nil, inputError("mouse "+map[bool]string{true: "down", false: "up"}[down], err)
	}
	return s.done(ctx, c, p.display, "%s%s the %s button %s", locatedText(l), verb, b, p.where)
}

// DragArgs are gui_drag's arguments.
type DragArgs struct {
	FromX      *float64 `json:"from_x,omitempty" jsonschema:"x where the drag starts"`
	FromY      *float64 `json:"from_y,omitempty" jsonschema:"y where the drag starts"`
	ToX        *float64 `json:"to_x,omitempty" jsonschema:"x where the drag ends"`
	ToY        *float64 `json:"to_y,omitempty" jsonschema:"y where the drag ends"`
	FromTarget string   `json:"from_target,omitempty" jsonschema:"the element where the drag starts, in words, located by the vision model; instead of from_x and from_y"`
	ToTarget   string   `json:"to_target,omitempty" jsonschema:"the element where the drag ends, in words, located by the vision model; instead of to_x and to_y"`
	Button     string   `json:"button,omitempty" jsonschema:"left (default), right or middle"`
	Where
}

func (s *Server) dragTool() toolDef {
	return newTool(s, "gui_drag", "Drag",
		"Press a mouse button at one point, move to another and release it (drag and drop, selections, sliders)."+coordinateDoc+
			" Either end may be given as an element in words instead (from_target, to_target), located by the vision model.",
		changesDesk, func(sc *jsonschema.Schema) {
			s.spaceEnum(sc)
			buttonEnum(sc)
			singleXY(sc, "from_x", "from_y", "to_x", "to_y")
		},
		func(ctx context.Context, c *call, in DragArgs) (*mcp.CallToolResult, error) {
			return s.drag(ctx, c, in)
		})
}

func (s *Server) drag(ctx context.Context, c *call, in DragArgs) (*mcp.CallToolResult, error) {
	a, err := s.parse(action.Raw{Kind: action.Drag, At: []float64{0, 0}, To: []float64{0, 0}, Button: in.Button}, string(geom.SpaceImage))
	if err != nil {
		return nil, err
	}
	from, err := s.dragEnd(ctx, c, in.FromX, in.FromY, in.FromTarget, in, "from_target")
	if err != nil {
		return nil, fmt.Errorf("drag start: %w", err)
	}
	to, err := s.dragEnd(ctx, c, in.ToX, in.ToY, in.ToTarget, in, "to_target")
	if err != nil {
		return nil, fmt.Errorf("drag end: %w", err)
	}
	a.At, a.To = &from.p, &to.p
	b := a.ButtonOrLeft()
	start := time.Now()
	err = s.input.Drag(ctx, from.t.Global, nil, to.t.Global, b)
	s.noteAction(c, a, from.t.Display, &from.t, &to.t, start, err)
	if err != nil {
		return nil, inputError("drag", err)
	}
	return s.done(ctx, c, to.t.Display, "%s%sdragged with the %s button from %s to %s%s%s",
		locatedText(from.l), locatedText(to.l), b, from.t, to.t, warn(from.t), warn(to.t))
}

// dragPoint is one end of a drag: the point as given (or located), resolved.
type dragPoint struct {
	p action.Point
	t target
	l *located
}

// dragEnd reads one end of a drag: coordinates in in.Space, or words to locate.
func (s *Server) dragEnd(ctx context.Context, c *call, x, y *float64, words string, in DragArgs, name string) (dragPoint, error) {
	nums, space, l, err := s.pointOrTarget(ctx, c, x, y, words, in.Space, in.Display, name, false)
	if err != nil {
		return dragPoint{}, err
	}
	mv, err := s.parse(action.Raw{Kind: action.Move, At: nums}, space)
	if err != nil {
		return dragPoint{}, err
	}
	t, err := s.resolveAt(ctx, c, in.Where, *mv.At, l)
	if err != nil {
		return dragPoint{}, err
	}
	return dragPoint{*mv.At, t, l}, nil
}

// ScrollArgs are gui_scroll's arguments.
type ScrollArgs struct {
	X         *float64 `json:"x,omitempty" jsonschema:"x of the point to scroll at; omit x and y (and target) to scroll at the current pointer position"`
	Y         *float64 `json:"y,omitempty" jsonschema:"y of the point to scroll at; omit x and y (and target) to scroll at the current pointer position"`
	Target    string   `json:"target,omitempty" jsonschema:"the element to scroll, in words, located by the vision model; instead of x and y"`
	Direction string   `json:"direction" jsonschema:"up, down, left or right"`
	Amount    int      `json:"amount,omitempty" jsonschema:"wheel notches, 1-50; default 3"`
	Modifiers []string `json:"modifiers,omitempty" jsonschema:"keys held while scrolling, e.g. [\"ctrl\"] to zoom"`
	Where
}

func (s *Server) scrollTool() toolDef {
	return newTool(s, "gui_scroll", "Scroll",
		"Turn the mouse wheel at a point (or at the pointer)."+coordinateDoc+targetDoc,
		changesDesk,
		func(sc *jsonschema.Schema) {
			s.spaceEnum(sc)
			singleXY(sc, "x", "y")
			enum(sc, "direction", "up", "down", "left", "right")
			between(sc, "amount", 1, action.MaxScrollNotches)
		},
		func(ctx context.Context, c *call, in ScrollArgs) (*mcp.CallToolResult, error) {
			if in.Amount < 0 || in.Amount > action.MaxScrollNotches {
				return nil, fmt.Errorf("amount must be 1 to %d wheel notches, got %d", action.MaxScrollNotches, in.Amount)
			}
			pre, err := s.parse(action.Raw{Kind: action.Scroll, Direction: in.Direction, Amount: in.Amount, Keys: in.Modifiers}, in.Space)
			if err == nil {
				err = s.checkKeys(ctx, c, pre.Keys)
			}
			if err != nil {
				return nil, err
			}
			at, space, l, err := s.pointOrTarget(ctx, c, in.X, in.Y, in.Target, in.Space, in.Display, "target", true)
			if err != nil {
				return nil, err
			}
			a, err := s.parse(action.Raw{Kind: action.Scroll, At: at, Direction: in.Direction, Amount: in.Amount, Keys: in.Modifiers}, space)
			if err != nil {
				return nil, err
			}
			var p actionPoint
			if l != nil {
				p = actionPoint{at: &l.t.Global, t: &l.t, where: "at " + l.t.String() + warn(l.t), display: l.t.Display}
			} else if p, err = s.optPoint(ctx, c.ss, in.Where, a.At); err != nil {
				return nil, err
			}
			n := a.Notches()
			start := time.Now()
			err = s.input.Scroll(ctx, p.at, a.Direction, n, a.Keys)
			s.noteAction(c, a, p.display, p.t, nil, start, err)
			if err != nil {
				return nil, inputError("scroll", err)
			}
			return s.done(ctx, c, p.display, "%sscrolled %s %d notches%s %s", locatedText(l), a.Direction, n, withMods(a.Keys), p.where)
		})
}

// TypeArgs are gui_type's arguments.
type TypeArgs struct {
	Text    string `json:"text" jsonschema:"the text to type exactly, any Unicode; use gui_press_key for Enter, Tab and shortcuts"`
	Target  string `json:"target,omitempty" jsonschema:"the field to type into, in words, located by the vision model and clicked first; default: the focused element"`
	Mode    string `json:"mode,omitempty" jsonschema:"replace (select all in the field, then type over it), append (go to its end, then type) or type (type at the caret; default)"`
	Display string `json:"display,omitempty" jsonschema:"display id of target from gui_list_displays; default: the primary display"`
}

func (s *Server) typeTool() toolDef {
	return newTool(s, "gui_type", "Type text",
		"Type text into the focused element, exactly as given (any language, symbols, emoji). Click the field first, or give target: the vision model locates it and it is clicked first. mode replace selects all before typing, append goes to the end.",
		changesDesk, func(sc *jsonschema.Schema) {
			prop(sc, "text").MinLength = new(1)
			enum(sc, "mode", "replace", "append", "type")
		},
		func(ctx context.Context, c *call, in TypeArgs) (*mcp.CallToolResult, error) {
			if in.Text == "" {
				return nil, fmt.Errorf("text is empty: give the text to type")
			}
			a, err := s.parse(action.Raw{Kind: action.TypeText, Text: in.Text}, "")
			if err != nil {
				return nil, err
			}
			keys, err := s.typeModeKeys(in.Mode)
			if err != nil {
				return nil, err
			}
			d, _, err := s.display(ctx, in.Display)
			if err != nil {
				return nil, err
			}
			var l *located
			if strings.TrimSpace(in.Target) != "" {
				if l, err = s.clickTarget(ctx, c, in.Display, in.Target); err != nil {
					return nil, err
				}
				d = l.t.Display
			}
			if keys != nil {
				if err := s.pressCombo(ctx, c, d, keys); err != nil {
					return nil, err
				}
			}
			start := time.Now()
			err = s.input.Type(ctx, a.Text)
			// The typed text may be a password: the record keeps its length only, as the audit does.
			a.Text = safety.MaskText(in.Text)
			s.noteAction(c, a, d, nil, nil, start, err)
			if err != nil {
				return nil, inputError("type", err)
			}
			how := map[string]string{"replace": "clicked it, selected all and ", "append": "clicked it, went to the end and ", "type": "clicked it and ", "": "clicked it and "}[in.Mode]
			if l == nil {
				how = map[string]string{"replace": "selected all and ", "append": "went to the end and "}[in.Mode]
			}
			// The keystrokes are queued, not necessarily consumed: a slow
			// application (notepad under Wine: 30 s for 1500 characters) may
			// still be taking them in, and typing them again would double them.
			return s.done(ctx, c, d, "%s%styped %d characters; %s", locatedText(l), how, len([]rune(in.Text)), typingMayLag)
		})
}

// typingMayLag is gui_type's note that the text may still be arriving.
const typingMayLag = "a slow application may still be receiving them: check the screen before acting on the text, and do not type it again"

// typeModeKeys returns the keys gui_type presses before typing in mode:
// select all for replace, go to the end for append, none for type.
func (s *Server) typeModeKeys(mode string) ([]string, error) {
	mod := "ctrl"
	if runtime.GOOS == "darwin" {
		mod = "cmd"
	}
	switch mode {
	case "", "type":
		return nil, nil
	case "replace":
		return []string{mod, "a"}, nil
	case "append":
		return []string{mod, "End"}, nil
	}
	return nil, fmt.Errorf("unknown mode %q: use replace, append or type", mode)
}

// clickTarget locates words and clicks its centre once with the left button.
func (s *Server) clickTarget(ctx context.Context, c *call, display, words string) (*located, error) {
	l, err := s.locateTarget(ctx, c, display, words)
	if err != nil {
		return nil, err
	}
	a, err := s.parse(action.Raw{Kind: action.Click, At: []float64{l.t.Image.X, l.t.Image.Y}}, string(geom.SpaceImage))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	err = s.input.Click(ctx, &l.t.Global, desktop.Left, 1, nil)
	s.noteAction(c, a, l.t.Display, &l.t, nil, start, err)
	if err != nil {
		return nil, inputError("click on "+strconv.Quote(words), err)
	}
	return &l, nil
}

// pressCombo presses one key combination, checked against the key policy.
func (s *Server) pressCombo(ctx context.Context, c *call, d geom.Display, keys []string) error {
	a, err := s.parse(action.Raw{Kind: action.KeyPress, Keys: keys}, "")
	if err != nil {
		return err
	}
	if err := s.checkKeys(ctx, c, a.Keys); err != nil {
		return err
	}
	start := time.Now()
	err = s.input.Hotkey(ctx, a.Keys)
	s.noteAction(c, a, d, nil, nil, start, err)
	if err != nil {
		return inputError("hotkey "+desktop.ComboString(a.Keys), err)
	}
	return nil
}

// PressKeyArgs are gui_press_key's arguments.
type PressKeyArgs struct {
	Key       string   `json:"key" jsonschema:"key name, e.g. Return, Tab, Escape, BackSpace, Delete, Up, Page_Down, F5, a; or a combination like ctrl+s"`
	Repeat    int      `json:"repeat,omitempty" jsonschema:"how many times to press it, 1-100; default 1"`
	Modifiers []string `json:"modifiers,omitempty" jsonschema:"keys held while pressing, e.g. [\"shift\"]"`
}

func (s *Server) pressKeyTool() toolDef {
	return newTool(s, "gui_press_key", "Press a key",
		"Press and release one key, optionally several times and with modifiers held. Dangerous combinations (alt+f4, ctrl+alt+delete, ...) are blocked by policy.",
		changesDesk, func(sc *jsonschema.Schema) { between(sc, "repeat", 1, action.MaxKeyRepeat) },
		func(ctx context.Context, c *call, in PressKeyArgs) (*mcp.CallToolResult, error) {
			if in.Repeat < 0 || in.Repeat > action.MaxKeyRepeat {
				return nil, fmt.Errorf("repeat must be 1 to %d, got %d", action.MaxKeyRepeat, in.Repeat)
			}
			a, err := s.parse(action.Raw{Kind: action.KeyPress, Keys: append(append([]string{}, in.Modifiers...), in.Key), Amount: in.Repeat}, "")
			if err != nil {
				return nil, err
			}
			if err := s.checkKeys(ctx, c, a.Keys); err != nil {
				return nil, err
			}
			mods, key, n := a.Keys[:len(a.Keys)-1], a.Keys[len(a.Keys)-1], a.Repeats()
			start := time.Now()
			err = s.input.PressKey(ctx, key, n, mods)
			d, _, _ := s.display(ctx, "")
			s.noteAction(c, a, d, nil, nil, start, err)
			if err != nil {
				return nil, inputError("key press", err)
			}
			return s.done(ctx, c, d, "pressed %s%s", desktop.ComboString(a.Keys), times(n))
		})
}

// HotkeyArgs are gui_hotkey's arguments.
type HotkeyArgs struct {
	Keys []string `json:"keys" jsonschema:"keys pressed together in order and released in reverse, e.g. [\"ctrl\",\"shift\",\"t\"]"`
}

func (s *Server) hotkeyTool() toolDef {
	return newTool(s, "gui_hotkey", "Press a key combination",
		"Press a keyboard shortcut: keys go down in order and up in reverse order. Dangerous combinations (alt+f4, ctrl+alt+delete, super+l, ...) are blocked by policy.",
		changesDesk, func(sc *jsonschema.Schema) { prop(sc, "keys").MinItems = new(1) },
		func(ctx context.Context, c *call, in HotkeyArgs) (*mcp.CallToolResult, error) {
			a, err := s.parse(action.Raw{Kind: action.KeyPress, Keys: in.Keys}, "")
			if err != nil {
				return nil, err
			}
			if err := s.checkKeys(ctx, c, a.Keys); err != nil {
				return nil, err
			}
			start := time.Now()
			err = s.input.Hotkey(ctx, a.Keys)
			d, _, _ := s.display(ctx, "")
			s.noteAction(c, a, d, nil, nil, start, err)
			if err != nil {
				return nil, inputError("hotkey", err)
			}
			return s.done(ctx, c, d, "pressed %s", desktop.ComboString(a.Keys))
		})
}

// WaitArgs are gui_wait's arguments.
type WaitArgs struct {
	MS int `json:"ms" jsonschema:"milliseconds to wait, 0-30000"`
}

func (s *Server) waitTool() toolDef {
	return newTool(s, "gui_wait", "Wait",
		"Wait a number of milliseconds (at most 30000) for the screen to change, e.g. while an application loads.",
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

// ClipboardArgs are gui_clipboard's arguments.
type ClipboardArgs struct {
	Action string `json:"action" jsonschema:"get (read the clipboard text) or set (replace it with text)"`
	Text   string `json:"text,omitempty" jsonschema:"the text to put on the clipboard (action set)"`
}

func (s *Server) clipboardTool() toolDef {
	return newTool(s, "gui_clipboard", "Clipboard",
		"Read the clipboard as text (action get) or replace it with text (action set).",
		writesState, func(sc *jsonschema.Schema) { enum(sc, "action", "get", "set") },
		func(ctx context.Context, c *call, in ClipboardArgs) (*mcp.CallToolResult, error) {
			cb, ok := s.screen.(desktop.Clipboard)
			if !ok {
				return nil, fmt.Errorf("clipboard: %w (backend %s)", desktop.ErrUnsupported, s.screen.Name())
			}
			switch in.Action {
			case "get":
				text, err := cb.ReadClipboard(ctx)
				if err != nil {
					return nil, fmt.Errorf("reading the clipboard: %w", err)
				}
				// The clipboard may hold a password: the audit and the record keep its length only.
				c.private = fmt.Sprintf("read the clipboard (%d characters)", len([]rune(text)))
				return textResult("%s", text), nil
			case "set":
				if s.kill != nil {
					if err := s.kill.Gate(ctx); err != nil {
						return nil, err
					}
				}
				if err := cb.WriteClipboard(ctx, in.Text); err != nil {
					return nil, fmt.Errorf("writing the clipboard: %w", err)
				}
				return textResult("clipboard set (%d characters)", len([]rune(in.Text))), nil
			}
			return nil, fmt.Errorf("unknown clipboard action %q: use get or set", in.Action)
		})
}

// parse reads a tool's action through action.Parse, the parser every model
// adapter uses too: its points are named x and y in the call's space (the
// server's default when space is empty).
func (s *Server) parse(r action.Raw, space string) (action.Action, error) {
	sp, err := s.space(space)
	if err != nil {
		return action.Action{}, err
	}
	return action.Parse(r, sp)
}

// optXY reads an optional point: both x and y, or neither (nil).
func optXY(x, y *float64) ([]float64, error) {
	switch {
	case x == nil && y == nil:
		return nil, nil
	case x == nil || y == nil:
		return nil, errors.New("give both x and y, or neither to act at the current pointer position")
	}
	return []float64{*x, *y}, nil
}

// inputError names the action that failed and, for missing input support, the fix.
func inputError(action string, err error) error {
	return fmt.Errorf("%s failed: %w", action, err)
}

func withMods(mods []desktop.Key) string {
	if len(mods) == 0 {
		return ""
	}
	return " with " + desktop.ComboString(mods) + " held"
}

func warn(t target) string {
	if t.Warning == "" {
		return ""
	}
	return " (warning: " + t.Warning + ")"
}

func times(n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(" %d times", n)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
