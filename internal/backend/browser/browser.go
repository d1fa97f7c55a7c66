// Package browser is the backend of the desktop contract over a Chromium
// browser, spoken to through the Chrome DevTools Protocol on a transport of
// its own: --remote-debugging-pipe when it launches the browser, the
// browser's WebSocket when it attaches to one already running. The screen
// is the active tab's viewport (CSS pixels, scaled by devicePixelRatio);
// input goes through Input.dispatchMouseEvent and dispatchKeyEvent; elements
// come from the accessibility tree of every frame, out-of-process iframes
// included; pages, tabs, file inputs, dialogs and downloads are the
// browser's own capabilities (desktop.Navigator, Tabber, Uploader,
// Revealer).
//
// In attach mode it works only in tabs it opened (or was told to use with
// SelectTab): it never reloads, closes or enables protocol domains on the
// user's other tabs, never touches chrome://, devtools:// or
// chrome-extension:// pages, and at Close closes only its own tabs.
package browser

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/coder/websocket"

	"github.com/guiagent/guiagent/internal/geom"
)

// Dialog answers (Options.Dialogs).
const (
	DialogAccept  = "accept"
	DialogDismiss = "dismiss"
	DialogAsk     = "ask"
)

// DefaultViewport is the viewport when Options.Viewport is zero.
var DefaultViewport = geom.Size{W: 1280, H: 800}

// Options configure Open, Launch and NewContext.
type Options struct {
	// Path is the browser binary; "" is the first of chromium,
	// chromium-browser, google-chrome on PATH.
	Path string
	// Headed shows a window (else --headless).
	Headed bool
	// Viewport is the page's size in CSS pixels (default 1280x800).
	Viewport geom.Size
	// ProfileDir is a persistent profile folder. "" with Isolated: a
	// temporary folder removed at Close.
	ProfileDir string
	Isolated   bool
	// URL attaches to a running browser instead of launching one
	// ("http://127.0.0.1:9222"): its WebSocket address is read from
	// /json/version at every connect. A host that is not loopback is
	// refused unless AllowRemote.
	URL         string
	AllowRemote bool
	// Dialogs answers JavaScript dialogs: "accept", "dismiss" or "ask"
	// (the default), which calls AskDialog (nil: dismiss).
	Dialogs   string
	AskDialog func(ctx context.Context, kind, message string) (accept bool, text string, err error)
	// DownloadDir receives downloads ("" : downloads are refused).
	DownloadDir string
	// UploadDirs are the folders Upload may take files from.
	UploadDirs []string
	// UploadVar names the setting of UploadDirs in errors
	// (Options.UploadDirs when empty).
	UploadVar string
	// StartURL is loaded in the first tab (about:blank when empty).
	StartURL string
	// UserAgent, when set, is the user agent the pages see.
	UserAgent string
	// SameTab keeps a page's new pages (window.open, target=_blank) in its
	// own tab, as Midscene's forceSameTabNavigation does.
	SameTab bool

	// prepare adjusts the browser's command before it starts (tests: have
	// it die with the test binary).
	prepare func(*exec.Cmd)
	// wrap stands between the backend and a launched browser's pipe
	// (tests: lose a message as the browser may).
	wrap func(transport) transport
}

func (o Options) viewport() geom.Size {
	if o.Viewport.W <= 0 || o.Viewport.H <= 0 {
		return DefaultViewport
	}
	return o.Viewport
}

func (o Options) uploadVar() string {
	if o.UploadVar == "" {
		return "Options.UploadDirs"
	}
	return o.UploadVar
}

// candidates are the binaries Find looks for on PATH, in order.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find resolves the browser binary path ("" looks on PATH) and reads its
// --version. The error names the fix.
func Find(path string) (resolved, version string, err error) {
	if path == "" {
		for _, c := range candidates {
			if p, err := exec.LookPath(c); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return "", "", fmt.Errorf("no Chromium found on PATH (looked for %s): install it (apt-get install chromium) or give its path with --browser-path", strings.Join(candidates, ", "))
		}
	} else if p, err := exec.LookPath(path); err != nil {
		return "", "", fmt.Errorf("browser %q: %v: install Chromium (apt-get install chromium) or fix --browser-path", path, err)
	} else {
		path = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return path, "", fmt.Errorf("%s --version: %v: install Chromium (apt-get install chromium) or fix --browser-path", path, err)
	}
	v := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(v, '\n'); i >= 0 { // Debian's wrapper may print a line of its own first
		v = strings.TrimSpace(v[i+1:])
	}
	return path, v, nil
}

// Browser is one Chromium process (or one attached browser) that Backends
// share, each in a browser context of its own (NewContext). After the
// browser dies, the next use starts a new one (launch mode) or connects
// again (attach mode); Backends notice by the generation.
type Browser struct {
	opts Options

	mu      sync.Mutex
	c       *conn
	cmd     *exec.Cmd
	gen     int
	path    string
	version string
	profile string // --user-data-dir
	tmp     string // a temporary profile to remove at Close
	exited  chan struct{}
	closed  bool
}

// Mode is "launch" or "attach".
func (br *Browser) Mode() string {
	if br.opts.URL != "" {
		return "attach"
	}
	return "launch"
}

// Version is the browser's product string ("Chrome/156.0...").
func (br *Browser) Version() string {
	br.mu.Lock()
	defer br.mu.Unlock()
	return br.version
}

// Launch starts one Chromium (or attaches when opts.URL is set).
func Launch(ctx context.Context, opts Options) (*Browser, error) {
	switch opts.Dialogs {
	case "", DialogAccept, DialogDismiss, DialogAsk:
	default:
		return nil, fmt.Errorf("dialogs %q: use accept, dismiss or ask", opts.Dialogs)
	}
	br := &Browser{opts: opts}
	if err := br.connect(ctx); err != nil {
		br.cleanup()
		return nil, err
	}
	return br, nil
}

// conn returns the live connection, connecting again when the browser died
// (the generation then grows).
func (br *Browser) conn(ctx context.Context) (*conn, int, error) {
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.closed {
		return nil, 0, errors.New("the browser backend is closed")
	}
	if br.c != nil && br.c.alive() {
		return br.c, br.gen, nil
	}
	if err := br.connectLocked(ctx); err != nil {
		return nil, 0, err
	}
	return br.c, br.gen, nil
}

// alive reports whether the connection of generation gen is still open.
func (br *Browser) alive(gen int) bool {
	br.mu.Lock()
	defer br.mu.Unlock()
	return br.c != nil && br.gen == gen && br.c.alive()
}

func (br *Browser) connect(ctx context.Context) error {
	br.mu.Lock()
	defer br.mu.Unlock()
	return br.connectLocked(ctx)
}

func (br *Browser) connectLocked(ctx context.Context) error {
	if br.cmd != nil { // a dead browser: reap it
		_ = br.cmd.Process.Kill()
		br.cmd = nil
	}
	var err error
	if br.opts.URL != "" {
		err = br.attachLocked(ctx)
	} else {
		err = br.launchLocked(ctx)
	}
	if err != nil {
		return err
	}
	br.gen++
	var v browser.GetVersionResult
	if err := br.c.call(ctx, "", browser.CommandGetVersion, nil, &v); err != nil {
		br.c.shut(err)
		return fmt.Errorf("the browser does not answer: %w", err)
	}
	br.version = v.Product
	return nil
}

func (br *Browser) launchLocked(ctx context.Context) error {
	path, _, err := Find(br.opts.Path)
	if err != nil {
		return err
	}
	br.path = path
	if br.profile == "" {
		switch {
		case br.opts.ProfileDir != "":
			br.profile = br.opts.ProfileDir
		default:
			dir, err := os.MkdirTemp("", "guiagent-browser-")
			if err != nil {
				return fmt.Errorf("temporary browser profile: %w", err)
			}
			br.profile, br.tmp = dir, dir
		}
	}
	vp := br.opts.viewport()
	args := []string{
		"--disable-gpu", "--disable-quic", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--remote-debugging-pipe", "--user-data-dir=" + br.profile,
		fmt.Sprintf("--window-size=%d,%d", vp.W, vp.H), "--hide-scrollbars", "--mute-audio",
		"--disable-features=Translate,MediaRouter,OptimizationHints",
	}
	if !br.opts.Headed {
		args = append(args, "--headless")
	}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	args = append(args, "about:blank")
	cmd := exec.Command(path, args...)
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	cmd.ExtraFiles = []*os.File{inR, outW}
	if br.opts.prepare != nil {
		br.opts.prepare(cmd)
	}
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return fmt.Errorf("start %s: %w", path, err)
	}
	inR.Close()
	outW.Close()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	br.cmd, br.exited = cmd, exited
	var tr transport = &pipeTransport{r: newReader(outR), rc: outR, w: inW}
	if br.opts.wrap != nil {
		tr = br.opts.wrap(tr)
	}
	br.c = newConn(tr)
	return nil
}

// attachLocked connects to the browser at opts.URL.
func (br *Browser) attachLocked(ctx context.Context) error {
	u, err := url.Parse(br.opts.URL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("browser URL %q: want http://HOST:PORT of a browser started with --remote-debugging-port", br.opts.URL)
	}
	if !br.opts.AllowRemote && !loopback(u.Hostname()) {
		return fmt.Errorf("browser URL %q is not on this machine (loopback): the DevTools protocol gives full control of the browser without authentication; allow it explicitly if you mean it", br.opts.URL)
	}
	ws := br.opts.URL
	if u.Scheme == "http" || u.Scheme == "https" {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, strings.TrimSuffix(br.opts.URL, "/")+"/json/version", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("browser at %s: %w (is it running with --remote-debugging-port?)", br.opts.URL, err)
		}
		defer resp.Body.Close()
		var v struct {
			WS string `json:"webSocketDebuggerUrl"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.WS == "" {
			return fmt.Errorf("browser at %s: /json/version gave no webSocketDebuggerUrl (%v)", br.opts.URL, err)
		}
		ws = v.WS
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, ws, nil)
	if err != nil {
		return fmt.Errorf("browser at %s: %w", ws, err)
	}
	c.SetReadLimit(-1)
	br.c = newConn(&wsTransport{c: c})
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// wsTransport is a WebSocket to the browser.
type wsTransport struct {
	c *websocket.Conn
}

func (w *wsTransport) read() ([]byte, error) {
	_, b, err := w.c.Read(context.Background())
	return b, err
}

func (w *wsTransport) write(b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), defaultCallTimeout)
	defer cancel()
	return w.c.Write(ctx, websocket.MessageText, b)
}

func (w *wsTransport) close() error { return w.c.CloseNow() }

// Close ends the browser (launch mode: the process; attach mode: the
// connection only) and removes a temporary profile.
func (br *Browser) Close() error {
	br.mu.Lock()
	if br.closed {
		br.mu.Unlock()
		return nil
	}
	br.closed = true
	c, cmd, exited := br.c, br.cmd, br.exited
	br.mu.Unlock()
	if c != nil && c.alive() && cmd != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_ = c.call(ctx, "", browser.CommandClose, nil, nil)
		cancel()
	}
	if c != nil {
		c.shut(errors.New("closed"))
	}
	if cmd != nil {
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	br.cleanup()
	return nil
}

func (br *Browser) cleanup() {
	if br.tmp != "" {
		// The browser may still be writing its profile for a moment.
		for i := 0; i < 5; i++ {
			if err := os.RemoveAll(br.tmp); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		br.tmp = ""
	}
}

// kill ends the browser process at once (tests).
func (br *Browser) kill() {
	br.mu.Lock()
	cmd := br.cmd
	br.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
	}
}

// NewContext opens a Backend in a browser context of its own (cookies and
// storage apart from every other), disposed at that Backend's Close.
func (br *Browser) NewContext(ctx context.Context, viewport geom.Size) (*Backend, error) {
	opts := br.opts
	if viewport.W > 0 && viewport.H > 0 {
		opts.Viewport = viewport
	}
	return newBackend(ctx, br, opts, true, false)
}

func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 1<<20) }
