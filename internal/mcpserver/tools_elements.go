package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/uitree"
)

// gui_snapshot (observe group, offered only with an element source): the UI
// as elements, with refs the input tools take, and boxes in image pixels of
// a screenshot captured with it.

// SnapshotArgs are gui_snapshot's arguments.
type SnapshotArgs struct {
	Display           string `json:"display,omitempty"`
	Scope             string `json:"scope,omitempty"`
	App               string `json:"app,omitempty"`
	MaxElements       int    `json:"max_elements,omitempty"`
	IncludeScreenshot bool   `json:"include_screenshot,omitempty"`
}

// SnapElement is one element of gui_snapshot's result.
type SnapElement struct {
	Ref    string   `json:"ref"`
	Role   string   `json:"role"`
	Name   string   `json:"name,omitempty"`
	Value  string   `json:"value,omitempty"`
	States []string `json:"states,omitempty"`
	Box    ImageBox `json:"box"`
}

// SnapshotResult is gui_snapshot's structured content.
type SnapshotResult struct {
	FrameID     string        `json:"frame_id"`
	Display     string        `json:"display"`
	Source      string        `json:"source"`
	Window      string        `json:"window,omitempty"`
	Truncated   bool          `json:"truncated"`
	TruncatedBy string        `json:"truncated_by,omitempty"`
	Elements    []SnapElement `json:"elements"`
}

func (s *Server) snapshotTool() toolDef {
	return newTool(s, GroupObserve, "gui_snapshot", "Snapshot",
		fmt.Sprintf("The UI as elements (accessibility tree) with refs, boxes in pixels of frame_id. Default: the focused window, %d elements.", desktop.DefaultMaxElements),
		readOnly, func(sc *jsonschema.Schema) {
			enum(sc, "scope", string(desktop.ScopeFocused), string(desktop.ScopeAll), string(desktop.ScopeApp))
			between(sc, "max_elements", 1, desktop.MaxElementsCap)
		},
		func(ctx context.Context, c *call, in SnapshotArgs) (*mcp.CallToolResult, error) {
			return s.snapshot(ctx, c, in)
		})
}

func (s *Server) snapshot(ctx context.Context, c *call, in SnapshotArgs) (*mcp.CallToolResult, error) {
	if s.elements == nil {
		return nil, fmt.Errorf("this desktop has no element source: %w", desktop.ErrUnsupported)
	}
	d, _, err := s.display(ctx, in.Display)
	if err != nil {
		return nil, err
	}
	q, err := desktop.ElementQuery{Scope: desktop.Scope(in.Scope), App: in.App, MaxElements: in.MaxElements, Bounds: []geom.Rect{d.Bounds}}.Normalize()
	if err != nil {
		return nil, err
	}
	snap, shot, err := s.snapshotAndShot(ctx, c, d, q, in.IncludeScreenshot)
	if err != nil {
		return nil, err
	}
	h := s.snaps.put(c.ss, snap, shot.Frame)
	res, err := jsonResult(snapshotResult(h, d))
	if err != nil {
		return nil, err
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: snapshotText(h, d)}}
	if in.IncludeScreenshot {
		// The screenshot of frame_id with each element's ref number drawn
		// on its box (set-of-marks).
		res.Content = append(res.Content, &mcp.ImageContent{Data: shot.Data, MIMEType: shot.MIME})
	} else {
		c.img = nil // the screenshot was taken for its frame; the record keeps no image the client did not get
	}
	return res, nil
}

// snapshotAndShot reads the UI as elements and captures the screenshot its
// boxes are given in: both at once, or, when marks are asked for, the
// screenshot after the walk with each element's ref number drawn on its box.
func (s *Server) snapshotAndShot(ctx context.Context, c *call, d geom.Display, q desktop.ElementQuery, marks bool) (*desktop.ElementSnapshot, *imaging.Shot, error) {
	o := s.shotOptions(0, "", 0)
	if marks {
		snap, err := s.elements.Elements(ctx, q)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the UI as elements: %w", err)
		}
		for _, e := range snap.Elements {
			o.Marks = append(o.Marks, imaging.ScreenMark{Label: strings.TrimPrefix(e.Ref, "e"), Box: e.Box})
		}
		shot, err := s.capture(ctx, c, d, geom.Rect{}, o)
		return snap, shot, err
	}
	snap, f, ok, err := s.snapshotInSeenFrame(ctx, c, d, q)
	switch {
	case ok || err != nil:
		return snap, &imaging.Shot{Frame: f}, err
	case snap != nil: // the display changed during the walk: its frame is a screenshot of it as it is now
		ds, err := s.displays(ctx)
		if err != nil {
			return nil, nil, err
		}
		if d, err = geom.FindDisplay(ds, d.ID); err != nil {
			return nil, nil, err
		}
		shot, err := s.capture(ctx, c, d, geom.Rect{}, o)
		return snap, shot, err
	}
	type shotOrErr struct {
		shot *imaging.Shot
		err  error
	}
	shotc := make(chan shotOrErr, 1)
	go func() {
		shot, err := s.capture(ctx, c, d, geom.Rect{}, o)
		shotc <- shotOrErr{shot, err}
	}()
	snap, err = s.elements.Elements(ctx, q)
	sh := <-shotc
	if err != nil {
		return nil, nil, fmt.Errorf("reading the UI as elements: %w", err)
	}
	return snap, sh.shot, sh.err
}

func snapshotResult(h *heldSnap, d geom.Display) SnapshotResult {
	snap, f := h.snap, h.frame
	out := SnapshotResult{FrameID: f.ID, Display: d.ID, Source: snap.Source, Window: snap.Window,
		Truncated: snap.Truncated, TruncatedBy: snap.TruncatedBy, Elements: make([]SnapElement, len(snap.Elements))}
	for i, e := range snap.Elements {
		x1, y1, x2, y2 := imageBox(e.Box, f)
		out.Elements[i] = SnapElement{Ref: e.Ref, Role: string(e.Role), Name: e.Name, Value: e.Value, States: e.States.List(),
			Box: ImageBox{float64(x1), float64(y1), float64(x2), float64(y2)}}
	}
	return out
}

// snapshotText is the outline a model reads: a head line, then one line per
// element (uitree.Outline) with boxes in image pixels of the frame.
func snapshotText(h *heldSnap, d geom.Display) string {
	snap, f := h.snap, h.frame
	var b strings.Builder
	scope := string(snap.Query.Scope)
	if snap.Window != "" {
		scope = fmt.Sprintf("window %q", snap.Window)
	}
	fmt.Fprintf(&b, "%d elements of %s on display %s (%s), boxes [x1,y1,x2,y2] in pixels of frame %s", len(snap.Elements), scope, d.ID, snap.Source, f.ID)
	if snap.Truncated {
		fmt.Fprintf(&b, "; truncated by %s", snap.TruncatedBy)
	}
	b.WriteString("\n")
	b.WriteString(uitree.Outline(snap.Elements, func(r geom.Rect) (int, int, int, int) { return imageBox(r, f) }))
	return b.String()
}

// snapshotInSeenFrame reads the UI as elements and gives their boxes in the
// session's latest screenshot of the whole display d, when there is one and
// the display still has d's shape after the walk (a phone may turn): boxes
// are placed through a frame's geometry only, so no new capture is needed
// (on a phone or a browser a capture costs as much as the walk). ok is
// false when there is no such frame; with a snapshot, because the display
// changed during the walk.
func (s *Server) snapshotInSeenFrame(ctx context.Context, c *call, d geom.Display, q desktop.ElementQuery) (*desktop.ElementSnapshot, geom.Frame, bool, error) {
	h, ok := s.frames.sessionLatest(c.ss, d.ID)
	same := func(f geom.Frame, d geom.Display) bool {
		return f.Region == d.Bounds && f.Display.Bounds == d.Bounds && f.Display.ScaleFactor() == d.ScaleFactor()
	}
	if !ok || !same(h.frame, d) {
		return nil, geom.Frame{}, false, nil
	}
	snap, err := s.elements.Elements(ctx, q)
	if err != nil {
		return nil, geom.Frame{}, true, fmt.Errorf("reading the UI as elements: %w", err)
	}
	ds, err := s.displays(ctx)
	if err != nil {
		return nil, geom.Frame{}, true, err
	}
	if now, err := geom.FindDisplay(ds, d.ID); err != nil || !same(h.frame, now) {
		return snap, geom.Frame{}, false, nil // the walk stands; the frame is taken anew
	}
	return snap, h.frame, true, nil
}
