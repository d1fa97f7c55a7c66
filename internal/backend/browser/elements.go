package browser

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/target"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/uitree"
)

// chromeRoles maps Chromium's accessibility roles to desktop's; ARIA role
// names map to themselves through uitree.NormalizeRole.
var chromeRoles = map[string]desktop.Role{
	"RootWebArea": desktop.RoleDocument, "WebArea": desktop.RoleDocument, "document": desktop.RoleDocument, "article": desktop.RoleDocument,
	"StaticText": desktop.RoleText, "paragraph": desktop.RoleText, "LabelText": desktop.RoleText, "label": desktop.RoleText,
	"caption": desktop.RoleText, "code": desktop.RoleText, "emphasis": desktop.RoleText, "strong": desktop.RoleText,
	"searchbox": desktop.RoleTextbox, "textbox": desktop.RoleTextbox,
	"switch": desktop.RoleCheckbox, "checkbox": desktop.RoleCheckbox, "menuitemcheckbox": desktop.RoleMenuItem, "menuitemradio": desktop.RoleMenuItem,
	"radio": desktop.RoleRadio, "combobox": desktop.RoleCombobox, "ComboBoxSelect": desktop.RoleCombobox, "ComboBoxMenuButton": desktop.RoleCombobox,
	"listbox": desktop.RoleList, "option": desktop.RoleListItem, "MenuListOption": desktop.RoleListItem, "MenuListPopup": desktop.RoleMenu,
	"img": desktop.RoleImage, "image": desktop.RoleImage, "figure": desktop.RoleImage, "svg": desktop.RoleImage, "canvas": desktop.RoleImage,
	"grid": desktop.RoleTable, "treegrid": desktop.RoleTable, "LayoutTable": desktop.RoleTable,
	"gridcell": desktop.RoleCell, "rowheader": desktop.RoleCell, "LayoutTableCell": desktop.RoleCell, "LayoutTableRow": desktop.RoleRow,
	"alertdialog": desktop.RoleDialog, "log": desktop.RoleStatus, "timer": desktop.RoleStatus, "marquee": desktop.RoleStatus,
	"navigation": desktop.RoleGroup, "main": desktop.RoleGroup, "banner": desktop.RoleGroup, "contentinfo": desktop.RoleGroup,
	"complementary": desktop.RoleGroup, "region": desktop.RoleGroup, "search": desktop.RoleGroup, "form": desktop.RoleGroup,
	"section": desktop.RoleGroup, "Section": desktop.RoleGroup, "radiogroup": desktop.RoleGroup, "DescriptionList": desktop.RoleList,
	"Iframe": desktop.RoleGeneric, "IframePresentational": desktop.RoleGeneric, "PluginObject": desktop.RoleGeneric,
	"ToggleButton": desktop.RoleButton, "PopUpButton": desktop.RoleButton, "DisclosureTriangle": desktop.RoleButton,
	"meter": desktop.RoleProgressBar, "progressbar": desktop.RoleProgressBar,
}

func roleOf(chrome string, st desktop.States) desktop.Role {
	if r, ok := chromeRoles[chrome]; ok {
		return r
	}
	return uitree.NormalizeRole(chrome, st)
}

// leafRoles have no children worth reading (their text says their name again).
var leafRoles = map[string]bool{"StaticText": true, "button": true, "link": false, "textbox": true, "searchbox": true,
	"checkbox": true, "radio": true, "img": true, "image": true, "InlineTextBox": true, "ListMarker": true}

// prunable roles keep their content inside their box: one off the viewport
// takes its subtree with it.
var prunable = map[string]bool{"row": true, "LayoutTableRow": true, "cell": true, "gridcell": true, "LayoutTableCell": true,
	"listitem": true, "option": true, "treeitem": true, "paragraph": true, "StaticText": true, "button": true,
	"textbox": true, "link": true, "checkbox": true, "radio": true, "heading": true, "img": true, "image": true}

// doc is one document of a session's DOM snapshot, placed in the viewport.
type doc struct {
	frame      cdp.FrameID
	dx, dy     float64 // add to the document's layout coordinates for viewport CSS pixels
	ax         map[accessibility.NodeID]*accessibility.Node
	axRoot     *accessibility.Node
	sess       *sessData
	childOwner map[cdp.BackendNodeID]*doc // iframe element -> its document (this session, or another)
}

// sessData is what a snapshot read on one session (a tab, an
// out-of-process iframe).
type sessData struct {
	target   target.ID
	s        *session
	rects    map[cdp.BackendNodeID]geom.Rect // viewport CSS pixels (float rounded)
	password map[cdp.BackendNodeID]bool
	docs     []*doc
}

// readSession takes the DOM snapshot and accessibility trees of session s,
// whose top document's origin sits at (ox, oy) in the viewport.
func readSession(ctx context.Context, id target.ID, s *session, ox, oy float64) (*sessData, error) {
	var snap domsnapshot.CaptureSnapshotResult
	if err := s.call(ctx, domsnapshot.CommandCaptureSnapshot, map[string]any{"computedStyles": []string{}}, &snap); err != nil {
		return nil, err
	}
	sd := &sessData{target: id, s: s, rects: map[cdp.BackendNodeID]geom.Rect{}, password: map[cdp.BackendNodeID]bool{}}
	str := func(i domsnapshot.StringIndex) string {
		if i >= 0 && int(i) < len(snap.Strings) {
			return snap.Strings[i]
		}
		return ""
	}
	sd.docs = make([]*doc, len(snap.Documents))
	for i, d := range snap.Documents {
		sd.docs[i] = &doc{frame: cdp.FrameID(str(d.FrameID)), sess: sd, childOwner: map[cdp.BackendNodeID]*doc{}}
	}
	placed := make([]bool, len(snap.Documents))
	if len(sd.docs) > 0 {
		sd.docs[0].dx, sd.docs[0].dy = ox-snap.Documents[0].ScrollOffsetX, oy-snap.Documents[0].ScrollOffsetY
		placed[0] = true
	}
	// Documents come parents first; an iframe's document sits at its
	// element's box plus its border (the client rect's origin).
	for i, d := range snap.Documents {
		n, l := d.Nodes, d.Layout
		if n == nil || l == nil {
			continue
		}
		dd := sd.docs[i]
		layoutOf := map[int64]int{}
		for li, ni := range l.NodeIndex {
			layoutOf[ni] = li
		}
		for li, ni := range l.NodeIndex {
			if int(ni) >= len(n.BackendNodeID) || li >= len(l.Bounds) || len(l.Bounds[li]) < 4 {
				continue
			}
			r := l.Bounds[li]
			sd.rects[n.BackendNodeID[ni]] = geom.Rect{X: int(r[0] + dd.dx + 0.5), Y: int(r[1] + dd.dy + 0.5), W: int(r[2] + 0.5), H: int(r[3] + 0.5)}
		}
		for ni, attrs := range n.Attributes {
			if ni >= len(n.NodeName) || !strings.EqualFold(str(n.NodeName[ni]), "input") {
				continue
			}
			for k := 0; k+1 < len(attrs); k += 2 {
				if strings.EqualFold(str(domsnapshot.StringIndex(attrs[k])), "type") && strings.EqualFold(str(domsnapshot.StringIndex(attrs[k+1])), "password") {
					sd.password[n.BackendNodeID[ni]] = true
				}
			}
		}
		if cd := n.ContentDocumentIndex; cd != nil {
			for k, ni := range cd.Index {
				ci := int(cd.Value[k])
				if ci <= 0 || ci >= len(sd.docs) || placed[ci] {
					continue
				}
				li, ok := layoutOf[ni]
				if !ok {
					continue
				}
				r := l.Bounds[li]
				x, y := r[0]+dd.dx, r[1]+dd.dy
				if cx, cy, err := clientOrigin(ctx, s, n.BackendNodeID[ni]); err == nil && i == 0 && ox == 0 && oy == 0 {
					x, y = cx, cy // the content box, borders and padding left out
				}
				sd.docs[ci].dx = x - snap.Documents[ci].ScrollOffsetX
				sd.docs[ci].dy = y - snap.Documents[ci].ScrollOffsetY
				placed[ci] = true
				dd.childOwner[n.BackendNodeID[ni]] = sd.docs[ci]
			}
		}
	}
	// The accessibility tree is read as the walk reaches each node
	// (getChildAXNodes): a page of thousands of rows costs what its
	// viewport shows, not the whole tree.
	for _, d := range sd.docs {
		var r struct {
			Node *accessibility.Node `json:"node"`
		}
		if err := s.call(ctx, accessibility.CommandGetRootAXNode, map[string]any{"frameId": d.frame}, &r); err != nil {
			return nil, err
		}
		d.ax = map[accessibility.NodeID]*accessibility.Node{}
		if r.Node != nil {
			d.ax[r.Node.NodeID] = r.Node
			d.axRoot = r.Node
		}
	}
	return sd, nil
}

// clientOrigin is where the content of iframe element owner (of session s)
// begins in the viewport: its box plus its border.
func clientOrigin(ctx context.Context, s *session, owner cdp.BackendNodeID) (float64, float64, error) {
	var bm struct {
		Model struct {
			Content []float64 `json:"content"`
		} `json:"model"`
	}
	if err := s.call(ctx, "DOM.getBoxModel", map[string]any{"backendNodeId": owner}, &bm); err != nil {
		return 0, 0, err
	}
	if len(bm.Model.Content) < 2 {
		return 0, 0, fmt.Errorf("iframe has no box")
	}
	return bm.Model.Content[0], bm.Model.Content[1], nil
}

// axNode is the Data of a uitree.Node: an accessibility node of a document.
type axNode struct {
	d *doc
	n *accessibility.Node
}

func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if jsonv2.Unmarshal(v.Value, &s) == nil {
		return s
	}
	var f float64
	if jsonv2.Unmarshal(v.Value, &f) == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}

func axProp(n *accessibility.Node, name string) string {
	for _, p := range n.Properties {
		if string(p.Name) == name {
			if p.Value == nil {
				return ""
			}
			var b bool
			if jsonv2.Unmarshal(p.Value.Value, &b) == nil {
				return strconv.FormatBool(b)
			}
			return axString(p.Value)
		}
	}
	return ""
}

// handle names an element: the target of its document and its DOM node.
func handle(id target.ID, n cdp.BackendNodeID) string {
	return fmt.Sprintf("%s/%d", id, n)
}

func parseHandle(h string) (target.ID, cdp.BackendNodeID, error) {
	i := strings.LastIndexByte(h, '/')
	if i <= 0 {
		return "", 0, fmt.Errorf("element handle %q is not the browser's", h)
	}
	n, err := strconv.ParseInt(h[i+1:], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("element handle %q is not the browser's", h)
	}
	return target.ID(h[:i]), cdp.BackendNodeID(n), nil
}

// node turns an accessibility node into the builder's node.
func (x axNode) node(view geom.Rect) *uitree.Node {
	n := x.n
	role := axString(n.Role)
	st := desktop.States{
		Focused:  axProp(n, "focused") == "true",
		Enabled:  axProp(n, "disabled") != "true",
		Checked:  axProp(n, "checked") == "true" || axProp(n, "checked") == "mixed" || axProp(n, "pressed") == "true",
		Selected: axProp(n, "selected") == "true",
		Expanded: axProp(n, "expanded") == "true",
		Editable: axProp(n, "editable") != "" && axProp(n, "readonly") != "true",
	}
	if x.d.sess.password[n.BackendDOMNodeID] {
		st.Protected = true
	}
	un := &uitree.Node{PlatformRole: role, Role: roleOf(role, st), Name: strings.TrimSpace(axString(n.Name)), States: st, Data: x}
	if !st.Protected {
		un.Value = axString(n.Value)
	}
	if n.BackendDOMNodeID != 0 {
		un.Handle = handle(x.d.sess.target, n.BackendDOMNodeID)
		if r, ok := x.d.sess.rects[n.BackendDOMNodeID]; ok {
			un.Box = r
		}
	}
	un.Leaf = leafRoles[role]
	if prunable[role] && !un.Box.Empty() && un.Box.Intersect(view).Empty() {
		un.Hidden = true
	}
	return un
}

// fetchChildren reads the children of x that are not read yet.
func (x axNode) fetchChildren(ctx context.Context) error {
	for _, id := range x.n.ChildIDs {
		if _, ok := x.d.ax[id]; !ok {
			var r struct {
				Nodes []*accessibility.Node `json:"nodes"`
			}
			if err := x.d.sess.s.call(ctx, accessibility.CommandGetChildAXNodes, map[string]any{"id": x.n.NodeID, "frameId": x.d.frame}, &r); err != nil {
				return err
			}
			for _, n := range r.Nodes {
				x.d.ax[n.NodeID] = n
			}
			return nil
		}
	}
	return nil
}

// children lists the accessibility children of x, ignored nodes replaced by
// their own children, an iframe followed by its document.
func (x axNode) children(ctx context.Context, view geom.Rect, out []*uitree.Node, depth int) ([]*uitree.Node, error) {
	if depth > 64 {
		return out, nil
	}
	if err := x.fetchChildren(ctx); err != nil {
		return out, err
	}
	for _, id := range x.n.ChildIDs {
		c, ok := x.d.ax[id]
		if !ok {
			continue
		}
		cx := axNode{d: x.d, n: c}
		if c.Ignored || axString(c.Role) == "none" {
			if r, ok := x.d.sess.rects[c.BackendDOMNodeID]; ok && c.BackendDOMNodeID != 0 && prunable[axString(c.Role)] && r.Intersect(view).Empty() {
				continue
			}
			var err error
			if out, err = cx.children(ctx, view, out, depth+1); err != nil {
				return out, err
			}
			continue
		}
		un := cx.node(view)
		if un.Hidden {
			continue
		}
		out = append(out, un)
	}
	if sub, ok := x.d.childOwner[x.n.BackendDOMNodeID]; ok && x.n.BackendDOMNodeID != 0 && sub.axRoot != nil {
		out = append(out, axNode{d: sub, n: sub.axRoot}.node(view))
	}
	return out, nil
}

// Elements implements desktop.ElementSource: the active tab's elements
// (every frame, out-of-process iframes and open shadow roots included)
// that are in the viewport, boxes in viewport CSS pixels.
func (b *Backend) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	start := time.Now()
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	t, err := b.current(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, q.Budget)
	defer cancel()
	size, _, err := b.viewport(ctx, t)
	if err != nil {
		return nil, err
	}
	view := geom.Rect{W: size.W, H: size.H}
	q.Bounds = []geom.Rect{view}
	info, err := b.targetInfo(ctx, t.id)
	if err != nil {
		return nil, b.explain(err)
	}
	top, err := b.readFrames(ctx, t)
	if err != nil {
		return nil, b.explain(err)
	}
	bld := uitree.NewBuilder("browser", q)
	bld.SetWindow(info.Title)
	app := info.URL
	if u, err := url.Parse(info.URL); err == nil && u.Host != "" {
		app = u.Host
	}
	if len(top.docs) > 0 && top.docs[0].axRoot != nil {
		root := axNode{d: top.docs[0], n: top.docs[0].axRoot}.node(view)
		if root.Name == "" {
			root.Name = info.Title
		}
		bld.Window(ctx, app, root, func(ctx context.Context, n *uitree.Node, limit int) ([]*uitree.Node, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			kids, err := n.Data.(axNode).children(ctx, view, nil, 0)
			if err != nil {
				return nil, err
			}
			if len(kids) > limit {
				kids = kids[:limit]
			}
			return kids, nil
		})
	}
	snap := bld.Snapshot()
	snap.Took = time.Since(start)
	return snap, nil
}

// readFrames reads the tab's session and those of its out-of-process
// iframes, each placed at its iframe element, and links every iframe
// element to its document.
func (b *Backend) readFrames(ctx context.Context, t *tab) (*sessData, error) {
	top, err := readSession(ctx, t.id, t.s, 0, 0)
	if err != nil {
		return nil, err
	}
	byTarget := map[target.ID]*sessData{t.id: top}
	t.fmu.Lock()
	frames := make([]*frame, 0, len(t.frames))
	for _, f := range t.frames {
		frames = append(frames, f)
	}
	t.fmu.Unlock()
	// Parents before children: repeat until no frame can be placed.
	for progress := true; progress && len(frames) > 0; {
		progress = false
		rest := frames[:0]
		for _, f := range frames {
			parent, ok := byTarget[f.parent]
			if !ok {
				rest = append(rest, f)
				continue
			}
			progress = true
			var owner struct {
				BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
			}
			if err := parent.s.call(ctx, "DOM.getFrameOwner", map[string]any{"frameId": f.id}, &owner); err != nil {
				continue // gone meanwhile
			}
			r, ok := parent.rects[owner.BackendNodeID]
			if !ok {
				continue // not laid out: not shown
			}
			ox, oy := float64(r.X), float64(r.Y)
			if x, y, err := clientOrigin(ctx, parent.s, owner.BackendNodeID); err == nil && f.parent == t.id {
				ox, oy = x, y
			}
			sd, err := readSession(ctx, f.id, f.s, ox, oy)
			if err != nil {
				continue
			}
			byTarget[f.id] = sd
			if len(sd.docs) > 0 {
				for _, pd := range parent.docs {
					pd.childOwner[owner.BackendNodeID] = sd.docs[0]
				}
			}
		}
		frames = rest
	}
	return top, nil
}

var _ desktop.ElementSource = (*Backend)(nil)
