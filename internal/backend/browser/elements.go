package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
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

// doc is one document of a snapshot, placed in the viewport.
type doc struct {
	frame      cdp.FrameID
	dx, dy     float64 // add to the document's viewport coordinates for the tab's viewport CSS pixels
	view       rectF   // what of the document is visible, in its own viewport coordinates
	ax         map[accessibility.NodeID]*accessibility.Node
	axRoot     *accessibility.Node
	sess       *sessData
	childOwner map[cdp.BackendNodeID]*doc     // iframe element -> its document (this session, or another)
	iframes    map[cdp.BackendNodeID]iframeAt // iframe elements in view: their content boxes
}

// rectF is a rectangle in CSS pixels, unrounded.
type rectF struct{ x, y, w, h float64 }

func (r rectF) intersect(o rectF) rectF {
	x1, y1 := max(r.x, o.x), max(r.y, o.y)
	x2, y2 := min(r.x+r.w, o.x+o.w), min(r.y+r.h, o.y+o.h)
	if x2 <= x1 || y2 <= y1 {
		return rectF{}
	}
	return rectF{x1, y1, x2 - x1, y2 - y1}
}

func (r rectF) empty() bool { return r.w <= 0 || r.h <= 0 }

// iframeAt is an iframe element's content box in its document's viewport
// coordinates.
type iframeAt struct{ box rectF }

// sessData is what a snapshot read on one session (a tab, an
// out-of-process iframe).
type sessData struct {
	target   target.ID
	s        *session
	rects    map[cdp.BackendNodeID]geom.Rect // the nodes in view: viewport CSS pixels (float rounded)
	password map[cdp.BackendNodeID]bool
	docs     []*doc
}

// visibleJS runs in an isolated world of a document (the page's scripts
// cannot see or change it): it finds the elements and text nodes that
// intersect the rectangle (vx, vy, vw, vh) of the document's viewport, and
// those holding one, without visiting the subtrees of rows, list items,
// paragraphs and controls that lie outside it, nor the content of buttons
// and text areas, which the walk does not read. It returns them as an array
// whose r holds five numbers a node (box and flags: 1 a password field) and
// f the content boxes of iframes (index, x, y, w, h).
const visibleJS = `function(vx, vy, vw, vh) {
  const x2 = vx + vw, y2 = vy + vh, out = [], r = [], f = [], range = document.createRange();
  const prune = /^(TR|LI|OPTION|P|BUTTON|INPUT|TEXTAREA|SELECT|A|IMG|H[1-6]|TD|TH|DT|DD|LABEL|SUMMARY)$/;
  const ws = /^[ \t\n\f\r]*$/;
  const inside = b => b.width > 0 && b.height > 0 && b.right > vx && b.left < x2 && b.bottom > vy && b.top < y2;
  function kids(p) {
    let any = false;
    for (let c = p.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 1) { if (visit(c)) any = true; }
      else if (c.nodeType === 3 && !ws.test(c.data)) {
        range.selectNodeContents(c);
        const b = range.getBoundingClientRect();
        if (inside(b)) { out.push(c); r.push(b.left, b.top, b.width, b.height, 0); any = true; }
      }
    }
    return any;
  }
  function visit(e) {
    const b = e.getBoundingClientRect();
    const own = inside(b);
    if (!own && b.width > 0 && b.height > 0 && prune.test(e.tagName)) return false;
    // A button's content is its name: the walk reads none of it.
    const leaf = (e.tagName === 'BUTTON' || e.tagName === 'TEXTAREA') && !e.hasAttribute('role');
    let any = !leaf && kids(e);
    if (!leaf && e.shadowRoot && kids(e.shadowRoot)) any = true;
    if (!own && !any) return false;
    const tag = e.tagName;
    if (tag === 'IFRAME' || tag === 'FRAME') {
      const cs = getComputedStyle(e), pl = parseFloat(cs.paddingLeft) || 0, pt = parseFloat(cs.paddingTop) || 0;
      f.push(out.length, b.left + e.clientLeft + pl, b.top + e.clientTop + pt,
        e.clientWidth - pl - (parseFloat(cs.paddingRight) || 0), e.clientHeight - pt - (parseFloat(cs.paddingBottom) || 0));
    }
    out.push(e);
    r.push(b.left, b.top, b.width, b.height, tag === 'INPUT' && e.type === 'password' ? 1 : 0);
    return true;
  }
  if (document.documentElement) visit(document.documentElement);
  out.r = r; out.f = f;
  return out;
}`

// snapGroup is the object group of the remote objects a snapshot holds.
const snapGroup = "guiagent-snapshot"

// world returns the execution context of guiagent's isolated world in
// frame of session s, made once per document.
func (b *Backend) world(ctx context.Context, s *session, frame cdp.FrameID, fresh bool) (int64, error) {
	key := string(s.sid) + "/" + string(frame)
	b.wmu.Lock()
	id, ok := b.worlds[key]
	b.wmu.Unlock()
	if ok && !fresh {
		return id, nil
	}
	var w struct {
		ID int64 `json:"executionContextId"`
	}
	if err := s.call(ctx, "Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": "guiagent"}, &w); err != nil {
		return 0, err
	}
	b.wmu.Lock()
	if b.worlds == nil || len(b.worlds) > 256 { // frames come and go: forget them now and then
		b.worlds = map[string]int64{}
	}
	b.worlds[key] = w.ID
	b.wmu.Unlock()
	return w.ID, nil
}

// forgetWorld drops the world of frame of session s, so the next use makes one.
func (b *Backend) forgetWorld(s *session, frame cdp.FrameID) {
	b.wmu.Lock()
	delete(b.worlds, string(s.sid)+"/"+string(frame))
	b.wmu.Unlock()
}

// visibleNode is one node visibleJS found.
type visibleNode struct {
	objectID string
	box      rectF
	password bool
}

// findVisible runs visibleJS in document d.
func (b *Backend) findVisible(ctx context.Context, s *session, d *doc) ([]visibleNode, []struct {
	i   int
	box rectF
}, error) {
	p := map[string]any{"functionDeclaration": visibleJS, "objectGroup": snapGroup,
		"arguments": []map[string]any{{"value": d.view.x}, {"value": d.view.y}, {"value": d.view.w}, {"value": d.view.h}}}
	var r evalResult
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var id int64
		if id, err = b.world(ctx, s, d.frame, attempt > 0); err != nil {
			return nil, nil, err
		}
		p["executionContextId"] = id
		r = evalResult{}
		if err = s.call(ctx, "Runtime.callFunctionOn", p, &r); err == nil {
			break // a context gone with its document fails: make a new world once
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if err := r.err(); err != nil {
		return nil, nil, err
	}
	arr := r.Result.ObjectID
	if arr == "" {
		return nil, nil, errors.New("the page's document gave no nodes")
	}
	var props struct {
		Result []struct {
			Name  string `json:"name"`
			Value *struct {
				ObjectID string `json:"objectId"`
			} `json:"value"`
		} `json:"result"`
	}
	var boxes struct {
		Result struct {
			Value struct {
				R []float64 `json:"r"`
				F []float64 `json:"f"`
			} `json:"value"`
		} `json:"result"`
	}
	var perr, berr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		berr = s.call(ctx, "Runtime.callFunctionOn", map[string]any{"objectId": arr, "returnByValue": true,
			"functionDeclaration": `function(){ return {r: this.r, f: this.f}; }`}, &boxes)
	}()
	perr = s.call(ctx, "Runtime.getProperties", map[string]any{"objectId": arr, "ownProperties": true}, &props)
	wg.Wait()
	if perr != nil {
		return nil, nil, perr
	}
	if berr != nil {
		return nil, nil, berr
	}
	rs := boxes.Result.Value.R
	out := make([]visibleNode, len(rs)/5)
	for _, pr := range props.Result {
		i, err := strconv.Atoi(pr.Name)
		if err != nil || i < 0 || i >= len(out) || pr.Value == nil {
			continue
		}
		k := rs[i*5 : i*5+5]
		out[i] = visibleNode{objectID: pr.Value.ObjectID, box: rectF{k[0], k[1], k[2], k[3]}, password: k[4] == 1}
	}
	var frames []struct {
		i   int
		box rectF
	}
	for fs := boxes.Result.Value.F; len(fs) >= 5; fs = fs[5:] {
		frames = append(frames, struct {
			i   int
			box rectF
		}{int(fs[0]), rectF{fs[1], fs[2], fs[3], fs[4]}})
	}
	return out, frames, nil
}

// readDoc reads the nodes of document d in view: their boxes and their
// accessibility nodes (one call each, in flight together), and the root of
// its accessibility tree.
func (b *Backend) readDoc(ctx context.Context, d *doc) error {
	sd := d.sess
	s := sd.s
	defer func() {
		go func() { // the snapshot does not wait for it
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = s.call(ctx, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": snapGroup}, nil)
		}()
	}()
	var root struct {
		Node *accessibility.Node `json:"node"`
	}
	var rootErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rootErr = s.call(ctx, accessibility.CommandGetRootAXNode, map[string]any{"frameId": d.frame}, &root)
	}()
	nodes, frames, err := b.findVisible(ctx, s, d)
	if err != nil {
		wg.Wait()
		return err
	}
	axOf := make([][]*accessibility.Node, len(nodes))
	sem := make(chan struct{}, 64)
	for i, n := range nodes {
		if n.objectID == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var r struct {
				Nodes []*accessibility.Node `json:"nodes"`
			}
			if s.call(ctx, accessibility.CommandGetPartialAXTree, map[string]any{"objectId": n.objectID, "fetchRelatives": false}, &r) == nil {
				axOf[i] = r.Nodes
			}
		}()
	}
	wg.Wait()
	if rootErr != nil {
		return rootErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	d.ax = map[accessibility.NodeID]*accessibility.Node{}
	d.iframes = map[cdp.BackendNodeID]iframeAt{}
	idOf := make([]cdp.BackendNodeID, len(nodes))
	for i, ns := range axOf {
		for k, an := range ns {
			d.ax[an.NodeID] = an
			if k == 0 && an.BackendDOMNodeID != 0 {
				idOf[i] = an.BackendDOMNodeID
				bx := nodes[i].box
				sd.rects[an.BackendDOMNodeID] = geom.Rect{X: int(bx.x + d.dx + 0.5), Y: int(bx.y + d.dy + 0.5), W: int(bx.w + 0.5), H: int(bx.h + 0.5)}
				if nodes[i].password {
					sd.password[an.BackendDOMNodeID] = true
				}
			}
		}
	}
	for _, f := range frames {
		if f.i >= 0 && f.i < len(idOf) && idOf[f.i] != 0 {
			d.iframes[idOf[f.i]] = iframeAt{box: f.box}
		}
	}
	if root.Node != nil {
		d.ax[root.Node.NodeID] = root.Node
		d.axRoot = root.Node
	}
	return nil
}

// readSession reads the documents of session s in view: its top document,
// which shows view (its own viewport coordinates) at (ox, oy) of the tab's
// viewport, and the iframes in process with it, each placed at its
// element. skip holds the frames of other sessions (out-of-process).
func (b *Backend) readSession(ctx context.Context, id target.ID, s *session, ox, oy float64, view rectF, skip map[target.ID]bool) (*sessData, error) {
	sd := &sessData{target: id, s: s, rects: map[cdp.BackendNodeID]geom.Rect{}, password: map[cdp.BackendNodeID]bool{}}
	var tree struct {
		FrameTree *frameTree `json:"frameTree"`
	}
	if err := s.call(ctx, "Page.getFrameTree", nil, &tree); err != nil {
		return nil, err
	}
	if tree.FrameTree == nil {
		return nil, errors.New("the page has no frame")
	}
	top := &doc{frame: tree.FrameTree.Frame.ID, sess: sd, dx: ox, dy: oy, view: view, childOwner: map[cdp.BackendNodeID]*doc{}}
	if err := b.readDoc(ctx, top); err != nil {
		return nil, err
	}
	sd.docs = append(sd.docs, top)
	// Frames in process, parents first; one out of view is left out with
	// its subtree.
	type item struct {
		parent *doc
		t      *frameTree
	}
	queue := []item{}
	for _, c := range tree.FrameTree.ChildFrames {
		queue = append(queue, item{top, c})
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if it.t == nil || skip[target.ID(it.t.Frame.ID)] || len(it.parent.iframes) == 0 {
			continue
		}
		var owner struct {
			BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
		}
		if err := s.call(ctx, "DOM.getFrameOwner", map[string]any{"frameId": it.t.Frame.ID}, &owner); err != nil {
			continue
		}
		fa, ok := it.parent.iframes[owner.BackendNodeID]
		if !ok {
			continue // not in view
		}
		d := childDoc(it.parent, it.t.Frame.ID, fa, sd)
		if d == nil {
			continue
		}
		if err := b.readDoc(ctx, d); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			continue
		}
		sd.docs = append(sd.docs, d)
		it.parent.childOwner[owner.BackendNodeID] = d
		for _, c := range it.t.ChildFrames {
			queue = append(queue, item{d, c})
		}
	}
	return sd, nil
}

// childDoc places the document of an iframe whose content box in parent's
// viewport is fa: nil when none of it is in view.
func childDoc(parent *doc, frame cdp.FrameID, fa iframeAt, sd *sessData) *doc {
	vis := fa.box.intersect(parent.view)
	if vis.empty() {
		return nil
	}
	return &doc{frame: frame, sess: sd, dx: parent.dx + fa.box.x, dy: parent.dy + fa.box.y,
		view:       rectF{vis.x - fa.box.x, vis.y - fa.box.y, vis.w, vis.h},
		childOwner: map[cdp.BackendNodeID]*doc{}}
}

// frameTree is Page.getFrameTree's tree, only what is read of it.
type frameTree struct {
	Frame struct {
		ID cdp.FrameID `json:"id"`
	} `json:"frame"`
	ChildFrames []*frameTree `json:"childFrames"`
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

// bigNode is the number of children above which a node's children are not
// all read: only those in view are (a table of thousands of rows costs
// what its viewport shows).
const bigNode = 64

// fetchChildren reads the children of x that are not read yet, unless x
// has more than bigNode: then the ones in view, read with the nodes in
// view, are all it has.
func (x axNode) fetchChildren(ctx context.Context) error {
	if len(x.n.ChildIDs) > bigNode {
		return nil
	}
	for _, id := range x.n.ChildIDs {
		if _, ok := x.d.ax[id]; !ok {
			var r struct {
				Nodes []*accessibility.Node `json:"nodes"`
			}
			if err := x.d.sess.s.call(ctx, accessibility.CommandGetChildAXNodes, map[string]any{"id": x.n.NodeID, "frameId": x.d.frame}, &r); err != nil {
				return err
			}
			for _, n := range r.Nodes {
				if _, ok := x.d.ax[n.NodeID]; !ok {
					x.d.ax[n.NodeID] = n
				}
			}
			return nil
		}
	}
	return nil
}

// outOfView reports whether accessibility node c is known not to be in
// view: a row, cell, paragraph, control... (prunable) that the pass over
// the document did not find in view, or whose box lies outside.
func (x axNode) outOfView(c *accessibility.Node, view geom.Rect) bool {
	if c.BackendDOMNodeID == 0 || !prunable[axString(c.Role)] {
		return false
	}
	r, ok := x.d.sess.rects[c.BackendDOMNodeID]
	return !ok || r.Intersect(view).Empty()
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
		if !ok || x.outOfView(c, view) {
			continue
		}
		cx := axNode{d: x.d, n: c}
		if c.Ignored || axString(c.Role) == "none" {
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
	top, err := b.readFrames(ctx, t, size)
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
// iframes in view, each placed at its iframe element, and links every
// iframe element to its document.
func (b *Backend) readFrames(ctx context.Context, t *tab, size geom.Size) (*sessData, error) {
	t.fmu.Lock()
	frames := make([]*frame, 0, len(t.frames))
	oop := map[target.ID]bool{}
	for _, f := range t.frames {
		frames = append(frames, f)
		oop[f.id] = true
	}
	t.fmu.Unlock()
	top, err := b.readSession(ctx, t.id, t.s, 0, 0, rectF{0, 0, float64(size.W), float64(size.H)}, oop)
	if err != nil {
		return nil, err
	}
	byTarget := map[target.ID]*sessData{t.id: top}
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
			var pd *doc
			var fa iframeAt
			for _, d := range parent.docs {
				if a, ok := d.iframes[owner.BackendNodeID]; ok {
					pd, fa = d, a
					break
				}
			}
			if pd == nil {
				continue // not in view
			}
			place := childDoc(pd, "", fa, nil)
			if place == nil {
				continue
			}
			sd, err := b.readSession(ctx, f.id, f.s, place.dx, place.dy, place.view, oop)
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				continue
			}
			byTarget[f.id] = sd
			if len(sd.docs) > 0 {
				pd.childOwner[owner.BackendNodeID] = sd.docs[0]
			}
		}
		frames = rest
	}
	return top, nil
}

var _ desktop.ElementSource = (*Backend)(nil)
