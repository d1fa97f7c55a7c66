package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"

	"github.com/guiagent/guiagent/internal/desktop"
)

// DefaultNavigationTimeout bounds a navigation without a timeout of its own.
const DefaultNavigationTimeout = 30 * time.Second

// Navigate implements desktop.Navigator on the active tab.
func (b *Backend) Navigate(ctx context.Context, n desktop.Navigation) (desktop.Page, error) {
	t, err := b.current(ctx)
	if err != nil {
		return desktop.Page{}, err
	}
	p, err := b.navigateTab(ctx, t, n)
	p.Events = b.TakeEvents()
	if err == nil {
		go warmAX(t)
	}
	return p, b.explain(err)
}

// warmAX has the browser build the new page's accessibility tree while the
// caller looks at the result: the first snapshot of a page waits for that
// build (2 s for a table of 3000 rows on a loaded machine), later ones do
// not.
func warmAX(t *tab) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = t.s.call(ctx, "Accessibility.getRootAXNode", nil, nil)
}

// forbidden reports whether u is a browser-internal page guiagent never touches.
func forbidden(u string) bool {
	for _, p := range []string{"chrome://", "devtools://", "chrome-extension://", "chrome-untrusted://"} {
		if strings.HasPrefix(strings.ToLower(u), p) {
			return true
		}
	}
	return false
}

// navigateTab navigates t and waits as n says.
func (b *Backend) navigateTab(ctx context.Context, t *tab, n desktop.Navigation) (desktop.Page, error) {
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = DefaultNavigationTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wait := n.Wait
	if wait == "" {
		wait = desktop.WaitLoad
	}
	lifecycle := map[desktop.Wait]string{desktop.WaitLoad: "load", desktop.WaitDOMContentLoaded: "DOMContentLoaded", desktop.WaitNetworkIdle: "networkIdle"}[wait]
	if lifecycle == "" {
		return desktop.Page{}, fmt.Errorf("unknown wait %q: use load, domcontentloaded or networkidle", wait)
	}
	if n.URL != "" && forbidden(n.URL) {
		return desktop.Page{}, fmt.Errorf("%s: guiagent does not open the browser's internal pages", n.URL)
	}
	// Listen before acting, so no event is missed.
	w := watchNavigation(t)
	defer w.close()
	loader, anyLoader, done, err := startNavigation(ctx, t, n)
	if err != nil {
		return desktop.Page{}, err
	}
	if done {
		return b.pageOf(ctx, t, 0)
	}
	return b.awaitNavigation(ctx, t, w, loader, anyLoader, lifecycle, wait, timeout)
}

// lifecycleEvent is one main-frame lifecycle event of a navigation.
type lifecycleEvent struct {
	loader cdp.LoaderID
	name   string
}

// navWatch holds the events of t's main frame while a navigation goes on.
// The loader id is known only after Page.navigate returns, so every event
// is kept meanwhile.
type navWatch struct {
	events   chan lifecycleEvent
	statuses chan *network.EventResponseReceived
	offs     []func()
}

func (w *navWatch) send(ev lifecycleEvent) {
	select {
	case w.events <- ev:
	default:
	}
}

func (w *navWatch) close() {
	for _, off := range w.offs {
		off()
	}
}

// watchNavigation listens to t's lifecycle, same-document, back-forward
// cache and document response events.
func watchNavigation(t *tab) *navWatch {
	w := &navWatch{events: make(chan lifecycleEvent, 256), statuses: make(chan *network.EventResponseReceived, 64)}
	w.offs = []func(){
		t.s.on(page.LifecycleEvent.Method, func(_ string, p jsonv2.Value) {
			var ev page.EventLifecycleEvent
			if jsonv2.Unmarshal(p, &ev) == nil && ev.FrameID == cdp.FrameID(t.id) {
				w.send(lifecycleEvent{ev.LoaderID, ev.Name})
			}
		}),
		t.s.on(page.NavigatedWithinDocument.Method, func(_ string, p jsonv2.Value) {
			w.send(lifecycleEvent{"", "sameDocument"})
		}),
		t.s.on(page.FrameNavigated.Method, func(_ string, p jsonv2.Value) {
			var ev page.EventFrameNavigated
			if jsonv2.Unmarshal(p, &ev) == nil && ev.Frame != nil && ev.Frame.ParentID == "" && ev.Type == page.NavigationTypeBackForwardCacheRestore {
				w.send(lifecycleEvent{ev.Frame.LoaderID, "bfcache"})
			}
		}),
		t.s.on(network.ResponseReceived.Method, func(_ string, p jsonv2.Value) {
			var ev network.EventResponseReceived
			if jsonv2.Unmarshal(p, &ev) == nil && ev.Type == network.ResourceTypeDocument && ev.FrameID == cdp.FrameID(t.id) {
				select {
				case w.statuses <- &ev:
				default:
				}
			}
		}),
	}
	return w
}

// startNavigation starts n in t: the loader of a URL's navigation, or
// anyLoader for back, forward and reload (the first main-frame navigation
// counts); done when nothing is left to wait for (a download, a
// same-document navigation).
func startNavigation(ctx context.Context, t *tab, n desktop.Navigation) (loader cdp.LoaderID, anyLoader, done bool, err error) {
	switch {
	case n.URL != "":
		var r page.NavigateResult
		if err := t.s.call(ctx, page.CommandNavigate, map[string]any{"url": n.URL}, &r); err != nil {
			return "", false, false, err
		}
		if r.ErrorText != "" {
			return "", false, false, fmt.Errorf("navigation to %s failed: %s", n.URL, r.ErrorText)
		}
		return r.LoaderID, false, r.IsDownload || r.LoaderID == "", nil
	case n.Action == desktop.NavReload:
		return "", true, false, t.s.call(ctx, page.CommandReload, nil, nil)
	case n.Action == desktop.NavBack || n.Action == desktop.NavForward:
		var h page.GetNavigationHistoryResult
		if err := t.s.call(ctx, page.CommandGetNavigationHistory, nil, &h); err != nil {
			return "", false, false, err
		}
		i := int(h.CurrentIndex) - 1
		if n.Action == desktop.NavForward {
			i = int(h.CurrentIndex) + 1
		}
		if i < 0 || i >= len(h.Entries) {
			return "", false, false, fmt.Errorf("cannot go %s: the tab has no page %s in its history", n.Action, map[bool]string{true: "before this one", false: "after this one"}[n.Action == desktop.NavBack])
		}
		return "", true, false, t.s.call(ctx, page.CommandNavigateToHistoryEntry, map[string]any{"entryId": h.Entries[i].ID}, nil)
	}
	return "", false, false, errors.New("a navigation needs a URL or an action (back, forward, reload)")
}

// awaitNavigation waits until the navigation's loader reaches lifecycle,
// and reports the page with its document's HTTP status.
func (b *Backend) awaitNavigation(ctx context.Context, t *tab, w *navWatch, loader cdp.LoaderID, anyLoader bool, lifecycle string, wait desktop.Wait, timeout time.Duration) (desktop.Page, error) {
	seen := map[cdp.LoaderID]bool{}
	status := 0
	for {
		select {
		case ev := <-w.events:
			switch {
			case ev.name == "sameDocument" && anyLoader, ev.name == "bfcache" && anyLoader:
				return b.pageOf(ctx, t, 0)
			case ev.name == "init" && anyLoader && loader == "":
				loader = ev.loader
			case ev.name == lifecycle && (ev.loader == loader || (anyLoader && loader == "")):
				seen[ev.loader] = true
			}
			if loader != "" && seen[loader] {
				for len(w.statuses) > 0 {
					r := <-w.statuses
					if r.LoaderID == loader && r.Response != nil {
						status = int(r.Response.Status)
					}
				}
				return b.pageOf(ctx, t, status)
			}
		case r := <-w.statuses:
			if (r.LoaderID == loader || loader == "") && r.Response != nil {
				status = int(r.Response.Status)
				if loader == "" && anyLoader {
					loader = r.LoaderID
				}
			}
		case <-ctx.Done():
			p, _ := b.pageOf(context.Background(), t, status)
			return p, fmt.Errorf("the page did not finish loading (%s) within %v: %w", wait, timeout, ctx.Err())
		}
	}
}

// pageOf reports where tab t is.
func (b *Backend) pageOf(ctx context.Context, t *tab, status int) (desktop.Page, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	info, err := b.targetInfo(ctx, t.id)
	if err != nil {
		return desktop.Page{}, err
	}
	return desktop.Page{URL: info.URL, Title: info.Title, Status: status}, nil
}

// Tabs implements desktop.Tabber: the pages of the backend's browser
// context (attach mode: the user's too, Ours unset).
func (b *Backend) Tabs(ctx context.Context) ([]desktop.Tab, error) {
	if _, err := b.current(ctx); err != nil {
		return nil, err
	}
	var r target.GetTargetsResult
	if err := b.rootSession().call(ctx, target.CommandGetTargets, nil, &r); err != nil {
		return nil, b.explain(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []desktop.Tab
	for _, ti := range r.TargetInfos {
		if ti.Type != "page" || (b.ctxID != "" && ti.BrowserContextID != b.ctxID) {
			continue
		}
		t := b.tabs[ti.TargetID]
		if b.isolated && t == nil {
			continue
		}
		out = append(out, desktop.Tab{ID: string(ti.TargetID), URL: ti.URL, Title: ti.Title,
			Active: b.active != nil && b.active.id == ti.TargetID, Ours: t != nil && t.ours})
	}
	return out, nil
}

// NewTab implements desktop.Tabber: a tab of ours at u, brought to front.
func (b *Backend) NewTab(ctx context.Context, u string) (desktop.Tab, error) {
	if _, err := b.current(ctx); err != nil {
		return desktop.Tab{}, err
	}
	if forbidden(u) {
		return desktop.Tab{}, fmt.Errorf("%s: guiagent does not open the browser's internal pages", u)
	}
	b.mu.Lock()
	t, err := b.newTabLocked(ctx, "about:blank")
	if err == nil {
		b.active = t
	}
	b.mu.Unlock()
	if err != nil {
		return desktop.Tab{}, b.explain(err)
	}
	_ = t.s.call(ctx, "Page.bringToFront", nil, nil)
	if u != "" && u != "about:blank" {
		if _, err := b.navigateTab(ctx, t, desktop.Navigation{URL: u}); err != nil {
			return desktop.Tab{ID: string(t.id), Active: true, Ours: true}, err
		}
	}
	p, err := b.pageOf(ctx, t, 0)
	return desktop.Tab{ID: string(t.id), URL: p.URL, Title: p.Title, Active: true, Ours: true}, err
}

// SelectTab implements desktop.Tabber: tab id comes to the front and
// becomes the screen. A user's tab chosen this way is used (attached) but
// stays the user's: it is not closed at Close.
func (b *Backend) SelectTab(ctx context.Context, id string) (desktop.Tab, error) {
	if _, err := b.current(ctx); err != nil {
		return desktop.Tab{}, err
	}
	info, err := b.targetInfo(ctx, target.ID(id))
	if err != nil {
		return desktop.Tab{}, fmt.Errorf("tab %s: %w", id, err)
	}
	if info.Type != "page" {
		return desktop.Tab{}, fmt.Errorf("target %s is a %s, not a tab", id, info.Type)
	}
	if forbidden(info.URL) {
		return desktop.Tab{}, fmt.Errorf("tab %s shows %s: guiagent does not use the browser's internal pages", id, info.URL)
	}
	b.mu.Lock()
	if b.ctxID != "" && info.BrowserContextID != b.ctxID {
		b.mu.Unlock()
		return desktop.Tab{}, fmt.Errorf("tab %s belongs to another session", id)
	}
	t, err := b.attachLocked(ctx, target.ID(id), false)
	if err == nil {
		b.active = t
	}
	b.mu.Unlock()
	if err != nil {
		return desktop.Tab{}, b.explain(err)
	}
	_ = b.rootSession().call(ctx, target.CommandActivateTarget, map[string]any{"targetId": id}, nil)
	_ = t.s.call(ctx, "Page.bringToFront", nil, nil)
	return desktop.Tab{ID: id, URL: info.URL, Title: info.Title, Active: true, Ours: t.ours}, nil
}

// CloseTab implements desktop.Tabber. When the active tab closes, the
// most recent other tab of ours becomes active (a new one when none is left).
func (b *Backend) CloseTab(ctx context.Context, id string) error {
	if _, err := b.current(ctx); err != nil {
		return err
	}
	b.mu.Lock()
	if b.ctxID != "" {
		if _, ok := b.tabs[target.ID(id)]; !ok {
			b.mu.Unlock()
			return fmt.Errorf("tab %s is not one of this session's", id)
		}
	}
	b.mu.Unlock()
	info, err := b.targetInfo(ctx, target.ID(id))
	if err != nil {
		return fmt.Errorf("tab %s: %w", id, err)
	}
	if forbidden(info.URL) {
		return fmt.Errorf("tab %s shows %s: guiagent does not close the browser's internal pages", id, info.URL)
	}
	if err := b.rootSession().call(ctx, target.CommandCloseTarget, map[string]any{"targetId": id}, nil); err != nil {
		return b.explain(err)
	}
	b.mu.Lock()
	if t, ok := b.tabs[target.ID(id)]; ok {
		b.forgetTabLocked(t)
	}
	b.mu.Unlock()
	return nil
}

var (
	_ desktop.Navigator = (*Backend)(nil)
	_ desktop.Tabber    = (*Backend)(nil)
)
