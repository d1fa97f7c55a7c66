package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// sessionFor finds the session of an element's document: the active tab's,
// or one of its out-of-process iframes'.
func (b *Backend) sessionFor(ctx context.Context, h string) (*tab, *session, *frame, cdp.BackendNodeID, error) {
	id, node, err := parseHandle(h)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	t, err := b.current(ctx)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	if id == t.id {
		return t, t.s, nil, node, nil
	}
	t.fmu.Lock()
	f, ok := t.frames[id]
	t.fmu.Unlock()
	if !ok {
		return nil, nil, nil, 0, fmt.Errorf("the element's page or frame is gone (or not in the active tab): take a new snapshot")
	}
	return t, f.s, f, node, nil
}

// callOn calls function fn (JavaScript source) on the DOM node, in its
// document, and returns its value.
func (b *Backend) callOn(ctx context.Context, s *session, node cdp.BackendNodeID, fn string, args ...any) (any, error) {
	var obj struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := s.call(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": node}, &obj); err != nil {
		return nil, fmt.Errorf("the element is gone: take a new snapshot (%w)", err)
	}
	defer func() {
		_ = s.call(context.WithoutCancel(ctx), "Runtime.releaseObject", map[string]any{"objectId": obj.Object.ObjectID}, nil)
	}()
	var as []map[string]any
	for _, a := range args {
		as = append(as, map[string]any{"value": a})
	}
	var r evalResult
	p := map[string]any{"objectId": obj.Object.ObjectID, "functionDeclaration": fn, "returnByValue": true, "awaitPromise": true, "userGesture": true}
	if len(as) > 0 {
		p["arguments"] = as
	}
	if err := s.call(ctx, "Runtime.callFunctionOn", p, &r); err != nil {
		return nil, b.explain(err)
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	return r.Result.Value, nil
}

// frameOrigin is where frame f's viewport starts in the tab's viewport.
func (b *Backend) frameOrigin(ctx context.Context, t *tab, f *frame) (float64, float64, error) {
	var x, y float64
	for f != nil {
		var ps *session
		if f.parent == t.id {
			ps = t.s
		}
		t.fmu.Lock()
		pf := t.frames[f.parent]
		t.fmu.Unlock()
		if pf != nil {
			ps = pf.s
		}
		if ps == nil {
			return 0, 0, errors.New("the frame's parent is gone")
		}
		var owner struct {
			BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
		}
		if err := ps.call(ctx, "DOM.getFrameOwner", map[string]any{"frameId": f.id}, &owner); err != nil {
			return 0, 0, err
		}
		ox, oy, err := clientOrigin(ctx, ps, owner.BackendNodeID)
		if err != nil {
			return 0, 0, err
		}
		x, y = x+ox, y+oy
		f = pf
	}
	return x, y, nil
}

// box reads the node's border box in viewport CSS pixels.
func (b *Backend) box(ctx context.Context, t *tab, s *session, f *frame, node cdp.BackendNodeID) (geom.Rect, error) {
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := s.call(ctx, "DOM.getContentQuads", map[string]any{"backendNodeId": node}, &q); err != nil || len(q.Quads) == 0 {
		var bm struct {
			Model struct {
				Border []float64 `json:"border"`
			} `json:"model"`
		}
		if err2 := s.call(ctx, "DOM.getBoxModel", map[string]any{"backendNodeId": node}, &bm); err2 != nil || len(bm.Model.Border) < 8 {
			if err == nil {
				err = err2
			}
			return geom.Rect{}, fmt.Errorf("the element has no box (hidden or gone): %v", err)
		}
		q.Quads = [][]float64{bm.Model.Border}
	}
	quad := q.Quads[0]
	minX, minY, maxX, maxY := quad[0], quad[1], quad[0], quad[1]
	for i := 0; i+1 < len(quad); i += 2 {
		minX, maxX = min(minX, quad[i]), max(maxX, quad[i])
		minY, maxY = min(minY, quad[i+1]), max(maxY, quad[i+1])
	}
	if f != nil {
		ox, oy, err := b.frameOrigin(ctx, t, f)
		if err != nil {
			return geom.Rect{}, err
		}
		minX, maxX, minY, maxY = minX+ox, maxX+ox, minY+oy, maxY+oy
	}
	return geom.Rect{X: int(minX + 0.5), Y: int(minY + 0.5), W: int(maxX - minX + 0.5), H: int(maxY - minY + 0.5)}, nil
}

// Reveal implements desktop.Revealer: scroll the element into view, read
// its box again, and check that the element (or something inside it) is
// what a click at its centre would hit; else the error names the cover.
func (b *Backend) Reveal(ctx context.Context, h string) (geom.Rect, error) {
	t, s, f, node, err := b.sessionFor(ctx, h)
	if err != nil {
		return geom.Rect{}, err
	}
	if f == nil {
		if r, ok := b.revealTop(ctx, t, node); ok {
			return r, nil
		}
	}
	if err := s.call(ctx, "DOM.scrollIntoViewIfNeeded", map[string]any{"backendNodeId": node}, nil); err != nil {
		return geom.Rect{}, fmt.Errorf("scroll the element into view: %w", b.explain(err))
	}
	if f != nil { // the iframe itself may need scrolling in its parent
		_ = b.revealFrame(ctx, t, f)
	}
	r, err := b.box(ctx, t, s, f, node)
	if err != nil {
		return geom.Rect{}, err
	}
	c := geom.GlobalPoint{X: r.X + r.W/2, Y: r.Y + r.H/2}
	hs, hnode, err := b.hitTest(ctx, t, c)
	if err != nil {
		return r, fmt.Errorf("hit test at %v: %w", c, err)
	}
	if hs == s {
		inside, err := b.contains(ctx, s, node, hnode)
		if err == nil && inside {
			return r, nil
		}
	}
	return r, fmt.Errorf("the element is covered at %v by %s: close or move it first", c, b.describe(ctx, hs, hnode))
}

// revealJS scrolls a node of the tab's top document into view when it is
// not all in view, and says where it is and whether a click at its centre
// reaches it (open shadow roots crossed); null when the node is in another
// document.
const revealJS = `function() {
  if ((this.ownerDocument || this) !== document) return null;
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return null;
  const box = () => {
    if (this.nodeType === 1) { const q = this.getClientRects(); return q.length ? q[0] : this.getBoundingClientRect(); }
    const r = document.createRange(); r.selectNodeContents(this); return r.getBoundingClientRect();
  };
  let b = box();
  if (b.left < 0 || b.top < 0 || b.right > innerWidth || b.bottom > innerHeight) {
    el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
    b = box();
  }
  // The point Press clicks: the centre of the rounded box.
  const x = Math.round(b.left) + Math.trunc(Math.round(b.width) / 2), y = Math.round(b.top) + Math.trunc(Math.round(b.height) / 2);
  let hit = document.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  let inside = false;
  for (let n = hit; n; n = n.parentNode || n.host) { if (n === el) { inside = true; break; } }
  return [b.left, b.top, b.width, b.height, inside ? 1 : 0];
}`

// revealTop is Reveal's fast path for a node of the tab's top document:
// one script in guiagent's isolated world scrolls, measures and hit-tests
// (two calls where the general path makes ten). ok is false when the path
// does not apply or the node is covered: the general path then answers,
// naming the cover.
func (b *Backend) revealTop(ctx context.Context, t *tab, node cdp.BackendNodeID) (geom.Rect, bool) {
	world, err := b.world(ctx, t.s, cdp.FrameID(t.id), false)
	if err != nil {
		return geom.Rect{}, false
	}
	var obj struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := t.s.call(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": node, "executionContextId": world}, &obj); err != nil {
		// The world may be gone with its document: make the next one anew.
		b.forgetWorld(t.s, cdp.FrameID(t.id))
		return geom.Rect{}, false
	}
	defer func() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = t.s.call(ctx, "Runtime.releaseObject", map[string]any{"objectId": obj.Object.ObjectID}, nil)
		}()
	}()
	var r struct {
		Result struct {
			Value []float64 `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	if err := t.s.call(ctx, "Runtime.callFunctionOn", map[string]any{"objectId": obj.Object.ObjectID,
		"functionDeclaration": revealJS, "returnByValue": true}, &r); err != nil || r.ExceptionDetails != nil || len(r.Result.Value) != 5 {
		return geom.Rect{}, false
	}
	v := r.Result.Value
	if v[4] != 1 || v[2] <= 0 || v[3] <= 0 {
		return geom.Rect{}, false
	}
	return geom.Rect{X: int(v[0] + 0.5), Y: int(v[1] + 0.5), W: int(v[2] + 0.5), H: int(v[3] + 0.5)}, true
}

func (b *Backend) revealFrame(ctx context.Context, t *tab, f *frame) error {
	ps := t.s
	t.fmu.Lock()
	if pf := t.frames[f.parent]; pf != nil {
		ps = pf.s
	}
	t.fmu.Unlock()
	var owner struct {
		BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
	}
	if err := ps.call(ctx, "DOM.getFrameOwner", map[string]any{"frameId": f.id}, &owner); err != nil {
		return err
	}
	return ps.call(ctx, "DOM.scrollIntoViewIfNeeded", map[string]any{"backendNodeId": owner.BackendNodeID}, nil)
}

// contains reports whether node hit is node or inside it (shadow roots
// crossed), both in session s.
func (b *Backend) contains(ctx context.Context, s *session, node, hit cdp.BackendNodeID) (bool, error) {
	if node == hit {
		return true, nil
	}
	var obj struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := s.call(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": hit}, &obj); err != nil {
		return false, err
	}
	defer func() {
		_ = s.call(context.WithoutCancel(ctx), "Runtime.releaseObject", map[string]any{"objectId": obj.Object.ObjectID}, nil)
	}()
	var me struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := s.call(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": node}, &me); err != nil {
		return false, err
	}
	defer func() {
		_ = s.call(context.WithoutCancel(ctx), "Runtime.releaseObject", map[string]any{"objectId": me.Object.ObjectID}, nil)
	}()
	var r evalResult
	err := s.call(ctx, "Runtime.callFunctionOn", map[string]any{"objectId": me.Object.ObjectID, "returnByValue": true,
		"functionDeclaration": `function(h){for(let n=h;n;n=n.parentNode||n.host){if(n===this)return true}return false}`,
		"arguments":           []map[string]any{{"objectId": obj.Object.ObjectID}}}, &r)
	if err != nil {
		return false, err
	}
	ok, _ := r.Result.Value.(bool)
	return ok, nil
}

// hitTest finds the node at viewport point p, descending into
// out-of-process iframes.
func (b *Backend) hitTest(ctx context.Context, t *tab, p geom.GlobalPoint) (*session, cdp.BackendNodeID, error) {
	s := t.s
	x, y := float64(p.X), float64(p.Y)
	for i := 0; i < 8; i++ {
		var r struct {
			BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
			FrameID       cdp.FrameID       `json:"frameId"`
		}
		if err := s.call(ctx, "DOM.getNodeForLocation", map[string]any{"x": int(x), "y": int(y),
			"includeUserAgentShadowDOM": false, "ignorePointerEventsNone": true}, &r); err != nil {
			return nil, 0, err
		}
		// An out-of-process iframe's element: go on inside it.
		var child *frame
		t.fmu.Lock()
		for _, f := range t.frames {
			if f.parentSession(t) == s {
				var owner struct {
					BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
				}
				if err := s.call(ctx, "DOM.getFrameOwner", map[string]any{"frameId": f.id}, &owner); err == nil && owner.BackendNodeID == r.BackendNodeID {
					child = f
					break
				}
			}
		}
		t.fmu.Unlock()
		if child == nil {
			return s, r.BackendNodeID, nil
		}
		ox, oy, err := clientOrigin(ctx, s, r.BackendNodeID)
		if err != nil {
			return s, r.BackendNodeID, nil
		}
		s, x, y = child.s, x-ox, y-oy
	}
	return nil, 0, errors.New("iframes nested too deep")
}

func (f *frame) parentSession(t *tab) *session {
	if f.parent == t.id {
		return t.s
	}
	if pf := t.frames[f.parent]; pf != nil {
		return pf.s
	}
	return nil
}

// describe names a node for an error: tag, id, role and name.
func (b *Backend) describe(ctx context.Context, s *session, node cdp.BackendNodeID) string {
	if s == nil {
		return "something"
	}
	var d struct {
		Node struct {
			NodeName   string   `json:"nodeName"`
			Attributes []string `json:"attributes"`
		} `json:"node"`
	}
	out := "an element"
	if err := s.call(ctx, "DOM.describeNode", map[string]any{"backendNodeId": node}, &d); err == nil {
		out = "<" + strings.ToLower(d.Node.NodeName)
		for i := 0; i+1 < len(d.Node.Attributes); i += 2 {
			if n := d.Node.Attributes[i]; n == "id" || n == "class" || n == "role" {
				out += fmt.Sprintf(" %s=%q", n, d.Node.Attributes[i+1])
			}
		}
		out += ">"
	}
	var ax struct {
		Nodes []struct {
			Role *struct {
				Value any `json:"value"`
			} `json:"role"`
			Name *struct {
				Value any `json:"value"`
			} `json:"name"`
		} `json:"nodes"`
	}
	if err := s.call(ctx, "Accessibility.getPartialAXTree", map[string]any{"backendNodeId": node, "fetchRelatives": false}, &ax); err == nil && len(ax.Nodes) > 0 {
		n := ax.Nodes[0]
		if n.Role != nil {
			out += fmt.Sprintf(" (role %v", n.Role.Value)
			if n.Name != nil && fmt.Sprint(n.Name.Value) != "" {
				out += fmt.Sprintf(", name %q", fmt.Sprint(n.Name.Value))
			}
			out += ")"
		}
	}
	return out
}

const readValue = `function(){ if (this.type === 'password') throw new Error('a password field: its value is never read'); return ('value' in this && typeof this.value === 'string') ? this.value : (this.isContentEditable ? this.innerText : this.textContent); }`

// SetText implements desktop.ElementActor: focus, select all, insert the
// text (as typing does: input events fire), then read it back.
func (b *Backend) SetText(ctx context.Context, h, text string) error {
	_, s, _, node, err := b.sessionFor(ctx, h)
	if err != nil {
		return err
	}
	if err := s.call(ctx, "DOM.focus", map[string]any{"backendNodeId": node}, nil); err != nil {
		return fmt.Errorf("focus the element: %w", b.explain(err))
	}
	if _, err := b.callOn(ctx, s, node, `function(){ if (typeof this.select === 'function') { this.select(); } else { const r = document.createRange(); r.selectNodeContents(this); const sel = getSelection(); sel.removeAllRanges(); sel.addRange(r); } if (!this.matches('input,textarea,[contenteditable],[contenteditable] *')) throw new Error('not an editable element: ' + this.tagName.toLowerCase()); return true; }`); err != nil {
		return fmt.Errorf("%w: %v", desktop.ErrUnsupported, err)
	}
	if text == "" {
		if _, err := b.callOn(ctx, s, node, `function(){ document.execCommand('delete'); return true; }`); err != nil {
			return err
		}
	} else if err := s.call(ctx, "Input.insertText", map[string]any{"text": text}, nil); err != nil {
		return b.explain(err)
	}
	v, err := b.callOn(ctx, s, node, `function(){ return ('value' in this && typeof this.value === 'string') ? this.value : this.innerText; }`)
	if err != nil {
		return err
	}
	if got, _ := v.(string); got != text {
		if isPassword(ctx, b, s, node) {
			return fmt.Errorf("the field did not take the text (%d characters read back, %d written)", len([]rune(got)), len([]rune(text)))
		}
		return fmt.Errorf("the field holds %q after setting %q (the page changed or limited it)", got, text)
	}
	return nil
}

func isPassword(ctx context.Context, b *Backend, s *session, node cdp.BackendNodeID) bool {
	v, err := b.callOn(ctx, s, node, `function(){ return this.type === 'password'; }`)
	ok, _ := v.(bool)
	return err == nil && ok
}

// Text implements desktop.ElementActor: a field's value or an element's
// text; never a password field's.
func (b *Backend) Text(ctx context.Context, h string) (string, error) {
	_, s, _, node, err := b.sessionFor(ctx, h)
	if err != nil {
		return "", err
	}
	v, err := b.callOn(ctx, s, node, readValue)
	if err != nil {
		return "", err
	}
	str, _ := v.(string)
	return str, nil
}

// Press implements desktop.ElementActor: reveal the element and click its
// centre, as a user does.
func (b *Backend) Press(ctx context.Context, h string) error {
	r, err := b.Reveal(ctx, h)
	if err != nil {
		return err
	}
	c := geom.GlobalPoint{X: r.X + r.W/2, Y: r.Y + r.H/2}
	if err := b.MoveTo(ctx, c); err != nil {
		return err
	}
	if err := b.ButtonDown(ctx, desktop.Left); err != nil {
		return err
	}
	return b.ButtonUp(ctx, desktop.Left)
}

// Upload implements desktop.Uploader: set the files of a file input. Each
// path must lie inside one of Options.UploadDirs (after cleaning and
// resolving symbolic links).
func (b *Backend) Upload(ctx context.Context, h string, paths []string) error {
	if len(b.opts.UploadDirs) == 0 {
		return fmt.Errorf("uploads are off: no folder is allowed; set %s to the folders files may be uploaded from", b.opts.uploadVar())
	}
	var files []string
	for _, p := range paths {
		abs, err := allowed(p, b.opts.UploadDirs)
		if err != nil {
			return fmt.Errorf("%w (allowed folders: %s; set %s to change them)", err, strings.Join(b.opts.UploadDirs, ", "), b.opts.uploadVar())
		}
		files = append(files, abs)
	}
	_, s, _, node, err := b.sessionFor(ctx, h)
	if err != nil {
		return err
	}
	if err := s.call(ctx, "DOM.setFileInputFiles", map[string]any{"files": files, "backendNodeId": node}, nil); err != nil {
		return fmt.Errorf("set the files of the input: %w", b.explain(err))
	}
	return nil
}

// allowed resolves p and checks that it lies inside one of dirs.
func allowed(p string, dirs []string) (string, error) {
	abs, err := filepath.Abs(filepath.Clean(p))
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("file %s: %w", p, err)
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	for _, d := range dirs {
		rd, err := filepath.EvalSymlinks(filepath.Clean(d))
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(rd, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return real, nil
		}
	}
	return "", fmt.Errorf("file %s is outside the folders uploads may come from", p)
}

var (
	_ desktop.ElementActor = (*Backend)(nil)
	_ desktop.Revealer     = (*Backend)(nil)
	_ desktop.Uploader     = (*Backend)(nil)
)
