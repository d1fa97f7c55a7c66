package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Download is one download a page started (desktop.PageEvents).
type Download = desktop.Download

// Backend is the desktop backend of one browser context: its tabs, the
// active one being the screen.
type Backend struct {
	br         *Browser
	ownBrowser bool // Open launched it: Close closes it
	isolated   bool // a browser context of its own
	opts       Options
	vp         geom.Size

	mu        sync.Mutex
	closed    bool
	gen       int
	ctxID     cdp.BrowserContextID
	root      *session
	tabs      map[target.ID]*tab
	order     []target.ID
	active    *tab
	deathSeen bool
	rootOffs  []func()
	events    []string
	downloads []Download
	dlIndex   map[string]int // guid -> index in downloads
	clip      string         // the clipboard as last written
	clipLocal bool           // the page could not take it: clip is the clipboard

	in inputState

	wmu    sync.Mutex
	worlds map[string]int64 // session/frame -> guiagent's isolated world in its document
}

// tab is one page target attached with a session of its own.
type tab struct {
	id       target.ID
	s        *session
	ours     bool
	crashed  bool
	reported bool // the crash was reported by a call
	offs     []func()

	fmu    sync.Mutex
	frames map[target.ID]*frame // out-of-process iframes
}

// frame is an out-of-process iframe's session.
type frame struct {
	id     target.ID
	parent target.ID // the target whose document holds the iframe element
	s      *session
}

// Open starts a Backend: it launches a browser (or attaches to
// opts.URL) and opens a tab of its own. Close ends what Open started.
func Open(ctx context.Context, opts Options) (*Backend, error) {
	br, err := Launch(ctx, opts)
	if err != nil {
		return nil, err
	}
	b, err := newBackend(ctx, br, opts, false, true)
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return b, nil
}

func newBackend(ctx context.Context, br *Browser, opts Options, isolated, own bool) (*Backend, error) {
	b := &Backend{br: br, ownBrowser: own, isolated: isolated, opts: opts, vp: opts.viewport(),
		tabs: map[target.ID]*tab{}, dlIndex: map[string]int{}}
	b.mu.Lock()
	defer b.mu.Unlock()
	c, gen, err := br.conn(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.setupLocked(ctx, c, gen); err != nil {
		b.teardownLocked(context.Background())
		return nil, err
	}
	return b, nil
}

func (b *Backend) attachMode() bool { return b.opts.URL != "" }

// setupLocked prepares generation gen of the browser: the browser context,
// the listeners, download behaviour, permissions and the first tab.
func (b *Backend) setupLocked(ctx context.Context, c *conn, gen int) error {
	for _, off := range b.rootOffs {
		off()
	}
	b.rootOffs = nil
	b.tabs, b.order, b.active, b.ctxID = map[target.ID]*tab{}, nil, nil, ""
	b.gen, b.deathSeen = gen, false
	b.root = &session{c: c}
	b.in = inputState{}
	if b.isolated {
		var r target.CreateBrowserContextResult
		if err := b.root.call(ctx, target.CommandCreateBrowserContext, map[string]any{"disposeOnDetach": true}, &r); err != nil {
			return err
		}
		b.ctxID = r.BrowserContextID
	}
	root := b.root
	b.rootOffs = append(b.rootOffs,
		root.on(target.TargetCreated.Method, func(_ string, p jsonv2.Value) {
			var ev target.EventTargetCreated
			if jsonv2.Unmarshal(p, &ev) == nil && ev.TargetInfo != nil {
				go b.adoptOpened(ev.TargetInfo)
			}
		}),
		root.on(target.TargetDestroyed.Method, func(_ string, p jsonv2.Value) {
			var ev target.EventTargetDestroyed
			if jsonv2.Unmarshal(p, &ev) == nil {
				go b.dropTab(ev.TargetID)
			}
		}),
		root.on(target.TargetCrashed.Method, func(_ string, p jsonv2.Value) {
			var ev target.EventTargetCrashed
			if jsonv2.Unmarshal(p, &ev) == nil {
				go b.markCrashed(ev.TargetID)
			}
		}),
		root.on(browser.DownloadWillBegin.Method, func(_ string, p jsonv2.Value) {
			var ev browser.EventDownloadWillBegin
			if jsonv2.Unmarshal(p, &ev) == nil {
				go b.downloadBegins(ev)
			}
		}),
		root.on(browser.DownloadProgress.Method, func(_ string, p jsonv2.Value) {
			var ev browser.EventDownloadProgress
			if jsonv2.Unmarshal(p, &ev) == nil {
				go b.downloadProgress(ev)
			}
		}),
	)
	if err := root.call(ctx, target.CommandSetDiscoverTargets, map[string]any{"discover": true}, nil); err != nil {
		return err
	}
	if err := b.setPolicies(ctx, root); err != nil {
		return err
	}
	// Launch mode in the default context: the browser's first tab is ours.
	if !b.attachMode() && !b.isolated {
		var r target.GetTargetsResult
		if err := root.call(ctx, target.CommandGetTargets, nil, &r); err == nil {
			for _, ti := range r.TargetInfos {
				if ti.Type == "page" && b.active == nil {
					t, err := b.attachLocked(ctx, ti.TargetID, true)
					if err != nil {
						return err
					}
					b.active = t
				}
			}
		}
	}
	if b.active == nil {
		t, err := b.newTabLocked(ctx, "about:blank")
		if err != nil {
			return err
		}
		b.active = t
	}
	if b.opts.StartURL != "" {
		if _, err := b.navigateTab(ctx, b.active, desktop.Navigation{URL: b.opts.StartURL}); err != nil {
			return fmt.Errorf("start URL: %w", err)
		}
	}
	return nil
}

// setPolicies sets where downloads go (refused without a folder) and
// grants the clipboard, in the backend's browser context; in attach mode
// only for a context of its own.
func (b *Backend) setPolicies(ctx context.Context, root *session) error {
	if !b.attachMode() || b.isolated || b.opts.DownloadDir != "" {
		dl := map[string]any{"behavior": "deny", "eventsEnabled": true}
		if b.opts.DownloadDir != "" {
			dl["behavior"], dl["downloadPath"] = "allow", b.opts.DownloadDir
		}
		if b.ctxID != "" {
			dl["browserContextId"] = b.ctxID
		}
		if err := root.call(ctx, browser.CommandSetDownloadBehavior, dl, nil); err != nil {
			return err
		}
	}
	if !b.attachMode() || b.isolated {
		// Without the grant the backend's own clipboard stands in.
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			perm := map[string]any{"permission": map[string]any{"name": name, "allowWithoutSanitization": true}, "setting": "granted"}
			if b.ctxID != "" {
				perm["browserContextId"] = b.ctxID
			}
			_ = root.call(ctx, browser.CommandSetPermission, perm, nil)
		}
	}
	return nil
}

// newTabLocked opens a tab of ours at u.
func (b *Backend) newTabLocked(ctx context.Context, u string) (*tab, error) {
	p := map[string]any{"url": u}
	if b.ctxID != "" {
		p["browserContextId"] = b.ctxID
	}
	var r target.CreateTargetResult
	if err := b.root.call(ctx, target.CommandCreateTarget, p, &r); err != nil {
		return nil, err
	}
	return b.attachLocked(ctx, r.TargetID, true)
}

// attachLocked attaches to page target id and prepares its session.
func (b *Backend) attachLocked(ctx context.Context, id target.ID, ours bool) (*tab, error) {
	if t, ok := b.tabs[id]; ok {
		t.ours = t.ours || ours
		return t, nil
	}
	var r target.AttachToTargetResult
	if err := b.root.call(ctx, target.CommandAttachToTarget, map[string]any{"targetId": id, "flatten": true}, &r); err != nil {
		return nil, err
	}
	t := &tab{id: id, s: &session{c: b.root.c, sid: r.SessionID}, ours: ours, frames: map[target.ID]*frame{}}
	t.offs = append(t.offs,
		t.s.on("Inspector.targetCrashed", func(string, jsonv2.Value) { go b.markCrashed(id) }),
		t.s.on(page.JavascriptDialogOpening.Method, func(_ string, p jsonv2.Value) {
			var ev page.EventJavascriptDialogOpening
			if jsonv2.Unmarshal(p, &ev) == nil {
				go b.answerDialog(t.s, ev)
			}
		}),
	)
	b.watchFrames(t, t.s, id)
	if err := b.prepareSession(ctx, t.s, true); err != nil {
		_ = b.root.call(ctx, target.CommandDetachFromTarget, map[string]any{"sessionId": r.SessionID}, nil)
		for _, off := range t.offs {
			off()
		}
		return nil, err
	}
	b.tabs[id] = t
	b.order = append(b.order, id)
	return t, nil
}

// watchFrames attaches the out-of-process iframes that session s (of
// target owner) reports, and theirs in turn.
func (b *Backend) watchFrames(t *tab, s *session, owner target.ID) {
	t.offs = append(t.offs,
		s.on(target.AttachedToTarget.Method, func(_ string, p jsonv2.Value) {
			var ev target.EventAttachedToTarget
			if jsonv2.Unmarshal(p, &ev) != nil || ev.TargetInfo == nil {
				return
			}
			child := &session{c: s.c, sid: ev.SessionID}
			if ev.TargetInfo.Type != "iframe" {
				go func() { // workers and the like: let them run, keep nothing
					_ = child.call(context.Background(), "Runtime.runIfWaitingForDebugger", nil, nil)
				}()
				return
			}
			f := &frame{id: ev.TargetInfo.TargetID, parent: owner, s: child}
			t.fmu.Lock()
			t.frames[f.id] = f
			t.fmu.Unlock()
			b.watchFrames(t, child, f.id)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = b.prepareSession(ctx, child, false)
			}()
		}),
		s.on(target.DetachedFromTarget.Method, func(_ string, p jsonv2.Value) {
			var ev target.EventDetachedFromTarget
			if jsonv2.Unmarshal(p, &ev) != nil {
				return
			}
			t.fmu.Lock()
			for id, f := range t.frames {
				if f.s.sid == ev.SessionID {
					delete(t.frames, id)
					s.c.forget(f.s.sid)
				}
			}
			t.fmu.Unlock()
		}),
	)
}

// prepareSession enables what the backend uses on a session of its own
// tab (top) or of one of its out-of-process iframes.
func (b *Backend) prepareSession(ctx context.Context, s *session, top bool) error {
	calls := []struct {
		m string
		p any
	}{
		{"Page.enable", nil},
		{"Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}},
		{"Network.enable", nil},
		{"DOM.enable", nil},
		{"Accessibility.enable", nil},
		{"Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}},
	}
	if top {
		calls = append(calls, struct {
			m string
			p any
		}{"Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true}})
		if !b.opts.Headed {
			calls = append(calls, struct {
				m string
				p any
			}{"Emulation.setDeviceMetricsOverride", map[string]any{"width": b.vp.W, "height": b.vp.H, "deviceScaleFactor": 0, "mobile": false}})
		}
	}
	if b.opts.UserAgent != "" {
		calls = append(calls, struct {
			m string
			p any
		}{"Emulation.setUserAgentOverride", map[string]any{"userAgent": b.opts.UserAgent}})
	}
	if top && b.opts.SameTab {
		calls = append(calls, struct {
			m string
			p any
		}{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": sameTabScript}})
	}
	calls = append(calls, struct {
		m string
		p any
	}{"Runtime.runIfWaitingForDebugger", nil})
	for _, c := range calls {
		if err := s.call(ctx, c.m, c.p, nil); err != nil {
			return err
		}
	}
	return nil
}

// sameTabScript keeps a page's new pages in its own tab (Options.SameTab):
// window.open and links, forms and areas with a target navigate this tab.
const sameTabScript = `(() => {
  window.open = function (u) { if (u) { location.href = new URL(u, location.href).href; } return window; };
  const same = (e) => {
    const el = e.target && e.target.closest ? e.target.closest('a[target],area[target],form[target]') : null;
    if (el) { el.target = '_self'; }
  };
  document.addEventListener('click', same, true);
  document.addEventListener('submit', same, true);
})();`

// adoptOpened attaches a page a tab of ours opened (window.open, a link
// with target=_blank): it is ours too.
func (b *Backend) adoptOpened(ti *target.Info) {
	if ti.Type != "page" || ti.OpenerID == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.root == nil {
		return
	}
	if opener, ok := b.tabs[ti.OpenerID]; !ok || !opener.ours {
		return
	}
	if b.ctxID != "" && ti.BrowserContextID != b.ctxID {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.attachLocked(ctx, ti.TargetID, true); err == nil {
		b.events = append(b.events, fmt.Sprintf("tab %s opened by the page: %s", ti.TargetID, ti.URL))
	}
}

// dropTab forgets a tab that is gone; when it was active, another of ours
// becomes active.
func (b *Backend) dropTab(id target.ID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.tabs[id]
	if !ok {
		return
	}
	b.forgetTabLocked(t)
}

func (b *Backend) forgetTabLocked(t *tab) {
	for _, off := range t.offs {
		off()
	}
	t.fmu.Lock()
	for _, f := range t.frames {
		b.root.c.forget(f.s.sid)
	}
	t.fmu.Unlock()
	b.root.c.forget(t.s.sid)
	delete(b.tabs, t.id)
	for i, id := range b.order {
		if id == t.id {
			b.order = append(b.order[:i:i], b.order[i+1:]...)
			break
		}
	}
	if b.active == t {
		b.active = nil
		for i := len(b.order) - 1; i >= 0; i-- {
			if o := b.tabs[b.order[i]]; o.ours && !o.crashed {
				b.active = o
				go b.bringToFront(o)
				break
			}
		}
	}
}

func (b *Backend) bringToFront(t *tab) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.s.call(ctx, "Page.bringToFront", nil, nil)
}

func (b *Backend) markCrashed(id target.ID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.tabs[id]; ok {
		t.crashed = true
	}
}

// errTabCrashed says the active tab crashed.
var errTabCrashed = errors.New("the browser tab crashed (its renderer process died)")

// current returns the active tab, after checking the browser's health:
// the first call after the browser died or the tab crashed fails with a
// clear error, the next one starts over (a new browser, a new tab).
func (b *Backend) current(ctx context.Context) (*tab, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.currentLocked(ctx)
}

func (b *Backend) currentLocked(ctx context.Context) (*tab, error) {
	if b.closed {
		return nil, errors.New("the browser backend is closed")
	}
	if !b.br.alive(b.gen) && !b.deathSeen {
		b.deathSeen = true
		again := "the next call starts a new browser"
		if b.attachMode() {
			again = "the next call connects to it again"
		}
		return nil, fmt.Errorf("the browser exited or its connection was lost: %s", again)
	}
	c, gen, err := b.br.conn(ctx)
	if err != nil {
		return nil, err
	}
	if gen != b.gen {
		if err := b.setupLocked(ctx, c, gen); err != nil {
			return nil, fmt.Errorf("starting over after the browser was lost: %w", err)
		}
	}
	t := b.active
	if t != nil && t.crashed {
		if !t.reported {
			t.reported = true
			return nil, fmt.Errorf("%w: the page is lost; the next call opens a new tab", errTabCrashed)
		}
		_ = b.root.call(ctx, target.CommandCloseTarget, map[string]any{"targetId": t.id}, nil)
		b.forgetTabLocked(t)
		t = nil
	}
	if t == nil {
		nt, err := b.newTabLocked(ctx, "about:blank")
		if err != nil {
			return nil, err
		}
		b.active = nt
		t = nt
	}
	return t, nil
}

// Name implements desktop.Screen.
func (b *Backend) Name() string { return "browser" }

// DisplayName implements desktop.Screen: the browser's version, and the
// address of an attached browser.
func (b *Backend) DisplayName() string {
	if b.attachMode() {
		return b.opts.URL
	}
	return b.br.Version()
}

// Displays implements desktop.Screen: one display, the active tab's
// viewport in CSS pixels, scaled by devicePixelRatio.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	t, err := b.current(ctx)
	if err != nil {
		return nil, err
	}
	size, scale, err := b.viewport(ctx, t)
	if err != nil {
		return nil, err
	}
	return []geom.Display{{ID: "0", Name: "viewport", Bounds: geom.Rect{W: size.W, H: size.H}, Scale: scale, Primary: true}}, nil
}

// viewport reads the tab's viewport size and device pixel ratio (the two
// calls in flight together).
func (b *Backend) viewport(ctx context.Context, t *tab) (geom.Size, float64, error) {
	var dpr float64 = 1
	done := make(chan struct{})
	go func() {
		defer close(done)
		var r evalResult
		if err := t.s.call(ctx, "Runtime.evaluate", map[string]any{"expression": "window.devicePixelRatio", "returnByValue": true}, &r); err == nil {
			if v, ok := r.Result.Value.(float64); ok && v > 0 {
				dpr = v
			}
		}
	}()
	var m page.GetLayoutMetricsResult
	err := t.s.call(ctx, page.CommandGetLayoutMetrics, nil, &m)
	<-done
	if err != nil {
		return geom.Size{}, 0, b.explain(err)
	}
	if m.CSSLayoutViewport == nil {
		return geom.Size{}, 0, errors.New("the browser reported no viewport")
	}
	return geom.Size{W: int(m.CSSLayoutViewport.ClientWidth), H: int(m.CSSLayoutViewport.ClientHeight)}, dpr, nil
}

// evalResult is what Runtime.evaluate and callFunctionOn return, with the
// value decoded generically.
type evalResult struct {
	Result struct {
		Type        string `json:"type"`
		Value       any    `json:"value"`
		ObjectID    string `json:"objectId"`
		Description string `json:"description"`
	} `json:"result"`
	ExceptionDetails *struct {
		Text      string `json:"text"`
		Exception *struct {
			Description string `json:"description"`
		} `json:"exception"`
	} `json:"exceptionDetails"`
}

func (r *evalResult) err() error {
	if r.ExceptionDetails == nil {
		return nil
	}
	if r.ExceptionDetails.Exception != nil && r.ExceptionDetails.Exception.Description != "" {
		return errors.New(firstLine(r.ExceptionDetails.Exception.Description))
	}
	return errors.New(r.ExceptionDetails.Text)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// explain turns a failed call into the error a user can act on: a crashed
// tab or a dead browser says so.
func (b *Backend) explain(err error) error {
	if err == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.active != nil && b.active.crashed && !b.active.reported {
		b.active.reported = true
		return fmt.Errorf("%w: the page is lost; the next call opens a new tab (%v)", errTabCrashed, err)
	}
	if errors.Is(err, errClosed) && !b.deathSeen {
		b.deathSeen = true
		return fmt.Errorf("the browser exited or its connection was lost (%v): the next call starts over", err)
	}
	return err
}

// Capture implements desktop.Screen: Page.captureScreenshot of region
// (CSS pixels of the viewport) at the device scale.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	t, err := b.current(ctx)
	if err != nil {
		return nil, err
	}
	return b.capture(ctx, t, region, dst, "png")
}

func (b *Backend) capture(ctx context.Context, t *tab, region geom.Rect, dst *image.RGBA, format string) (*image.RGBA, error) {
	if region.Empty() {
		return nil, fmt.Errorf("capture of an empty region %v", region)
	}
	p := map[string]any{"format": format}
	if region != (geom.Rect{W: b.vp.W, H: b.vp.H}) || b.opts.Headed {
		// A clip costs about half as much again as the viewport
		// (measured: 157 ms against 108 ms for 1280x800 PNG), so the
		// whole viewport, the size the browser was told to lay out, is
		// taken without one.
		p["clip"] = map[string]any{"x": region.X, "y": region.Y, "width": region.W, "height": region.H, "scale": 1}
	}
	if format == "jpeg" {
		p["quality"] = 95
	}
	r, err := captureCall(ctx, t.s, p)
	if err != nil {
		return nil, b.explain(err)
	}
	data := r.Data // base64 decoded by the JSON layer
	var img image.Image
	if format == "jpeg" {
		img, err = jpeg.Decode(bytes.NewReader(data))
	} else {
		img, err = png.Decode(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("screenshot: decoding the %s: %w", format, err)
	}
	bd := img.Bounds()
	out := desktop.ReuseRGBA(dst, bd.Dx(), bd.Dy())
	if src, ok := img.(*image.RGBA); ok && src.Stride == bd.Dx()*4 && bd.Min == (image.Point{}) {
		copy(out.Pix, src.Pix)
	} else if src, ok := img.(*image.NRGBA); ok && bd.Min == (image.Point{}) {
		// Screenshots are opaque: NRGBA is RGBA.
		for y := 0; y < bd.Dy(); y++ {
			copy(out.Pix[y*out.Stride:y*out.Stride+bd.Dx()*4], src.Pix[y*src.Stride:y*src.Stride+bd.Dx()*4])
		}
	} else {
		draw.Draw(out, out.Rect, img, bd.Min, draw.Src)
	}
	return out, nil
}

// A capture waits for the compositor's next frame of the page, and one sent
// while a navigation commits can go unanswered for good: the frame it waits
// for belonged to the document that left (measured: 1 capture in about 60
// right after a form's submit, on a loaded 2-core machine). captureCall
// therefore sends the capture again, beside the first, when the page's main
// frame commits a document or when no answer came within captureGrace
// (doubled each time), and takes the first answer; a capture answered
// slowly is never thrown away.
const (
	captureGrace = 2 * time.Second
	captureTries = 4
	// notAttached is Chromium's answer to a capture sent between two
	// documents.
	notAttached = "Not attached to an active page"
)

func captureCall(ctx context.Context, s *session, p map[string]any) (*page.CaptureScreenshotResult, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultCallTimeout)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the captures still waiting
	committed := make(chan struct{}, 1)
	off := s.on(page.FrameNavigated.Method, func(_ string, raw jsonv2.Value) {
		var ev page.EventFrameNavigated
		if jsonv2.Unmarshal(raw, &ev) == nil && ev.Frame != nil && ev.Frame.ParentID == "" {
			select {
			case committed <- struct{}{}:
			default:
			}
		}
	})
	defer off()
	type answer struct {
		r   page.CaptureScreenshotResult
		err error
	}
	answers := make(chan *answer, captureTries)
	sent, pending := 0, 0
	send := func() {
		sent++
		pending++
		go func() {
			a := &answer{}
			a.err = s.call(ctx, page.CommandCaptureScreenshot, p, &a.r)
			answers <- a
		}()
	}
	send()
	grace := captureGrace
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		select {
		case a := <-answers:
			pending--
			if a.err == nil {
				return &a.r, nil
			}
			if !strings.Contains(a.err.Error(), notAttached) || ctx.Err() != nil || (sent == captureTries && pending == 0) {
				return nil, a.err
			}
			// Between two documents: ask again once one is there.
			timer.Reset(100 * time.Millisecond)
			continue
		case <-committed:
			timer.Stop() // no stale tick after Stop (Go 1.23 timers)
		case <-timer.C:
		}
		if sent < captureTries {
			send()
			grace *= 2
			timer.Reset(grace)
		}
	}
}

// ActiveWindowTitle implements desktop.Windows: the active tab's title.
func (b *Backend) ActiveWindowTitle(ctx context.Context) (string, error) {
	t, err := b.current(ctx)
	if err != nil {
		return "", err
	}
	info, err := b.targetInfo(ctx, t.id)
	if err != nil {
		return "", b.explain(err)
	}
	return info.Title, nil
}

func (b *Backend) targetInfo(ctx context.Context, id target.ID) (*target.Info, error) {
	var r target.GetTargetInfoResult
	if err := b.rootSession().call(ctx, target.CommandGetTargetInfo, map[string]any{"targetId": id}, &r); err != nil {
		return nil, err
	}
	if r.TargetInfo == nil {
		return nil, errors.New("the browser gave no target info")
	}
	return r.TargetInfo, nil
}

func (b *Backend) rootSession() *session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.root
}

// EchoesPointer implements desktop.PointerEcho: the page shows no pointer
// of its own; CursorPosition is where guiagent last put it.
func (b *Backend) EchoesPointer() bool { return true }

// TakeEvents returns and forgets what pages raised since the last call:
// dialogs answered, downloads saved, tabs the page opened.
func (b *Backend) TakeEvents() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	ev := b.events
	b.events = nil
	return ev
}

// Downloads lists the downloads pages started, oldest first.
func (b *Backend) Downloads() []Download {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Download(nil), b.downloads...)
}

func (b *Backend) ourFrame(id cdp.FrameID) bool {
	if _, ok := b.tabs[target.ID(id)]; ok {
		return true
	}
	for _, t := range b.tabs {
		t.fmu.Lock()
		_, ok := t.frames[target.ID(id)]
		t.fmu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

func (b *Backend) downloadBegins(ev browser.EventDownloadWillBegin) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.ourFrame(ev.FrameID) && !b.isolated {
		return
	}
	b.dlIndex[ev.GUID] = len(b.downloads)
	b.downloads = append(b.downloads, Download{URL: ev.URL, Name: ev.SuggestedFilename, State: "inProgress"})
	if b.opts.DownloadDir == "" {
		b.events = append(b.events, fmt.Sprintf("download %s refused: no download folder is set", ev.SuggestedFilename))
	}
}

func (b *Backend) downloadProgress(ev browser.EventDownloadProgress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i, ok := b.dlIndex[ev.GUID]
	if !ok || b.downloads[i].State != "inProgress" {
		return
	}
	d := &b.downloads[i]
	switch ev.State {
	case browser.DownloadProgressStateCompleted:
		d.State = "completed"
		d.Path = ev.FilePath
		if d.Path == "" {
			d.Path = b.opts.DownloadDir + "/" + d.Name
		}
		b.events = append(b.events, fmt.Sprintf("download %s saved to %s", d.Name, d.Path))
	case browser.DownloadProgressStateCanceled:
		d.State = "canceled"
		if b.opts.DownloadDir != "" {
			b.events = append(b.events, fmt.Sprintf("download %s canceled", d.Name))
		}
	}
}

// answerDialog answers a JavaScript dialog as Options.Dialogs says, and
// records it for TakeEvents.
func (b *Backend) answerDialog(s *session, ev page.EventJavascriptDialogOpening) {
	accept, text := false, ev.DefaultPrompt
	how := b.opts.Dialogs
	if how == "" {
		how = DialogAsk
	}
	switch how {
	case DialogAccept:
		accept = true
	case DialogAsk:
		if b.opts.AskDialog != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			a, t, err := b.opts.AskDialog(ctx, string(ev.Type), ev.Message)
			cancel()
			if err == nil {
				accept = a
				if t != "" {
					text = t
				}
			}
		}
	}
	p := map[string]any{"accept": accept}
	if ev.Type == page.DialogTypePrompt && accept {
		p["promptText"] = text
	}
	verdict := "dismissed"
	if accept {
		verdict = "accepted"
	}
	// Told before it is answered: the input that raised the dialog returns
	// as soon as it is, and its result names it.
	b.mu.Lock()
	b.events = append(b.events, fmt.Sprintf("dialog %s %q %s", ev.Type, ev.Message, verdict))
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := s.call(ctx, page.CommandHandleJavaScriptDialog, p, nil)
	cancel()
	if err != nil {
		b.mu.Lock()
		b.events = append(b.events, fmt.Sprintf("dialog %s %q could not be %s: %v", ev.Type, ev.Message, verdict, err))
		b.mu.Unlock()
	}
}

// Close implements desktop.Screen: it closes the tabs it opened (the
// browser context with them) and, when Open launched the browser, the
// browser. An attached browser is left as it was.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if b.br.alive(b.gen) && !(b.ownBrowser && !b.attachMode()) {
		b.teardownLocked(ctx)
	}
	b.closed = true
	b.mu.Unlock()
	if b.ownBrowser {
		return b.br.Close()
	}
	return nil
}

// teardownLocked closes our tabs, detaches from the others, disposes of
// the browser context and drops the listeners.
func (b *Backend) teardownLocked(ctx context.Context) {
	if b.root == nil {
		return
	}
	for _, id := range append([]target.ID(nil), b.order...) {
		t := b.tabs[id]
		if t.ours {
			_ = b.root.call(ctx, target.CommandCloseTarget, map[string]any{"targetId": t.id}, nil)
		} else {
			_ = b.root.call(ctx, target.CommandDetachFromTarget, map[string]any{"sessionId": t.s.sid}, nil)
		}
		b.forgetTabLocked(t)
	}
	if b.ctxID != "" {
		_ = b.root.call(ctx, target.CommandDisposeBrowserContext, map[string]any{"browserContextId": b.ctxID}, nil)
	}
	if b.attachMode() && !b.isolated && b.opts.DownloadDir != "" {
		_ = b.root.call(ctx, browser.CommandSetDownloadBehavior, map[string]any{"behavior": "default"}, nil)
	}
	for _, off := range b.rootOffs {
		off()
	}
	b.rootOffs = nil
}

// Describe implements desktop.Describer.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	b.br.mu.Lock()
	path := b.br.path
	b.br.mu.Unlock()
	d := map[string]string{"browser": path, "version": b.br.Version(), "mode": b.br.Mode(),
		"viewport": fmt.Sprintf("%dx%d", b.vp.W, b.vp.H)}
	if b.attachMode() {
		d["url"] = b.opts.URL
	}
	if b.isolated {
		d["context"] = "own browser context"
	}
	return d
}

var (
	_ desktop.Screen      = (*Backend)(nil)
	_ desktop.Windows     = (*Backend)(nil)
	_ desktop.PointerEcho = (*Backend)(nil)
	_ desktop.Describer   = (*Backend)(nil)
)
