// Package portal is the desktop backend on xdg-desktop-portal over D-Bus,
// for Wayland desktops without the wlroots protocols (GNOME, KDE): capture
// through the Screenshot portal, input through a RemoteDesktop session with
// a ScreenCast monitor source (absolute pointer motion needs a stream). The
// grant is asked for with persist_mode 2 and its restore_token kept in the
// state directory, so the user approves once; until then input calls fail
// at once with ErrPermissionPending, naming the dialog on the user's screen.
//
// It follows the specification's interfaces (flatpak.github.io/xdg-desktop-portal):
// every call returns a Request handle built from handle_token, and its
// result comes as the Request's Response signal.
package portal

import (
	"context"
	"errors"
	"fmt"
	"image"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Options configures a Backend.
type Options struct {
	// SessionBus is the D-Bus session bus address the portal is on
	// (DBUS_SESSION_BUS_ADDRESS, handed in by config).
	SessionBus string
	// Display is the Wayland socket of the session (WAYLAND_DISPLAY), the
	// backend's DisplayName.
	Display string
	// StateDir keeps the restore token of the input grant
	// (StateDir/portal/remote-desktop.token); StateSetting names the setting
	// in messages. "" keeps nothing: the dialog comes at every start.
	StateDir, StateSetting string
	// NoInput opens no RemoteDesktop session (capture only: doctor's quick
	// look, read-only use).
	NoInput bool
	// InputWait is how long an input call waits for the session (a restored
	// grant needs no dialog) before failing with ErrPermissionPending; zero
	// means 3 s. CaptureWait is the same for a screenshot; zero means 10 s.
	InputWait, CaptureWait time.Duration
}

// ErrPermissionPending is returned while the portal's permission dialog
// waits for the user.
var ErrPermissionPending = errors.New("a one-time permission dialog of the desktop portal is waiting on the user's screen")

// Backend is the portal backend. It is safe for concurrent use.
type Backend struct {
	opts Options
	bus  *bus

	shotVersion, remoteVersion uint32
	remoteErr                  error // why input cannot work, from Start
	deviceTypes                uint32
	eis                        bool // the portal offers ConnectToEIS

	shotMu  sync.Mutex
	shot    *request // a Screenshot request still waiting (its dialog is up)
	lastImg geom.Size

	rd remote

	closeOnce sync.Once
	ctx       context.Context
	stop      context.CancelFunc
}

// New returns an unstarted backend.
func New(o Options) *Backend {
	if o.InputWait <= 0 {
		o.InputWait = 3 * time.Second
	}
	if o.CaptureWait <= 0 {
		o.CaptureWait = 10 * time.Second
	}
	ctx, stop := context.WithCancel(context.Background())
	b := &Backend{opts: o, ctx: ctx, stop: stop}
	b.rd.b = b
	return b
}

var (
	_ desktop.Screen         = (*Backend)(nil)
	_ desktop.Pointer        = (*Backend)(nil)
	_ desktop.Keyboard       = (*Backend)(nil)
	_ desktop.Describer      = (*Backend)(nil)
	_ desktop.InputReadiness = (*Backend)(nil)
)

// InputReady reports whether input works now: nil once the RemoteDesktop
// session has started, ErrPermissionPending while its dialog waits (after
// InputWait), or why input cannot work.
func (b *Backend) InputReady(ctx context.Context) error { return b.rd.ready(ctx) }

// Name returns "portal".
func (b *Backend) Name() string { return "portal" }

// DisplayName returns the Wayland socket of the session.
func (b *Backend) DisplayName() string { return b.opts.Display }

// Start connects to the portal and checks that it can take screenshots; it
// asks for the input grant in the background (a restored grant needs no
// dialog), so a dialog is on the screen before the first input call.
func (b *Backend) Start(ctx context.Context) error {
	if b.opts.SessionBus == "" {
		return errors.New("portal: DBUS_SESSION_BUS_ADDRESS is not set, so the desktop portal cannot be reached: run guiagent inside the desktop session")
	}
	bus, err := dial(b.opts.SessionBus)
	if err != nil {
		return fmt.Errorf("portal: %w", err)
	}
	b.bus = bus
	if b.shotVersion, err = bus.version(ctx, ifaceShot); err != nil {
		return fmt.Errorf("portal: the desktop portal offers no %s, so the screen cannot be captured: %w (install the portal of your desktop: xdg-desktop-portal-gnome or -kde; on wlroots xdg-desktop-portal-wlr, and beside it an org.freedesktop.impl.portal.Access implementation such as xdg-desktop-portal-gtk, without which xdg-desktop-portal offers no Screenshot portal)", ifaceShot, err)
	}
	b.probeRemote(ctx)
	if b.remoteErr == nil && !b.opts.NoInput {
		b.rd.begin()
	}
	return nil
}

// Close ends the RemoteDesktop session (releasing what it holds) and the
// connection. It is idempotent.
func (b *Backend) Close() error {
	var err error
	b.closeOnce.Do(func() {
		b.rd.close()
		b.stop()
		b.shotMu.Lock()
		if b.shot != nil {
			b.shot.cancel()
			b.shot = nil
		}
		b.shotMu.Unlock()
		if b.bus != nil {
			err = b.bus.close()
		}
	})
	return err
}

// Describe reports the portal's interfaces and the state of the input grant.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	d := map[string]string{"display": b.opts.Display, "screenshot": fmt.Sprintf("%s version %d", ifaceShot, b.shotVersion)}
	if b.remoteErr != nil {
		d["input"] = b.remoteErr.Error()
		return d
	}
	d["remote_desktop"] = fmt.Sprintf("%s version %d, device types %d", ifaceRemote, b.remoteVersion, b.deviceTypes)
	d["eis"] = "not offered (input goes through the Notify* methods)"
	if b.eis {
		d["eis"] = "ConnectToEIS offered; not used: guiagent sends input through the RemoteDesktop Notify* methods (libei is not implemented)"
	}
	d["input"] = b.rd.status()
	return d
}

// Displays lists the monitors: the RemoteDesktop session's monitor streams
// once it has started (their compositor positions and sizes), else one
// display the size of the last screenshot.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	if ds := b.rd.displays(); len(ds) > 0 {
		return b.scaled(ds), nil
	}
	b.shotMu.Lock()
	size := b.lastImg
	b.shotMu.Unlock()
	if size == (geom.Size{}) {
		img, err := b.screenshot(ctx)
		if err != nil {
			return nil, err
		}
		size = geom.Size{W: img.Bounds().Dx(), H: img.Bounds().Dy()}
	}
	return []geom.Display{{ID: "0", Name: b.opts.Display, Bounds: geom.Rect{W: size.W, H: size.H}, Scale: 1, Primary: true}}, nil
}

// scaled sets each stream display's scale from the last screenshot, which
// the compositor renders at device pixels: its width over the desktop's
// logical width.
func (b *Backend) scaled(ds []geom.Display) []geom.Display {
	b.shotMu.Lock()
	size := b.lastImg
	b.shotMu.Unlock()
	union := desktopBounds(ds)
	for i := range ds {
		ds[i].Scale = 1
		if size.W > 0 && union.W > 0 {
			ds[i].Scale = float64(size.W) / float64(union.W)
		}
	}
	return ds
}

// Capture takes a screenshot through the portal and crops region from it.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	if region.Empty() {
		return nil, fmt.Errorf("portal capture: empty region %v: give a width and height above zero", region)
	}
	img, err := b.screenshot(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := b.Displays(ctx)
	if err != nil {
		return nil, err
	}
	scale, origin := ds[0].ScaleFactor(), desktopBounds(ds)
	r := image.Rect(int(float64(region.X-origin.X)*scale), int(float64(region.Y-origin.Y)*scale),
		int(float64(region.X-origin.X+region.W)*scale), int(float64(region.Y-origin.Y+region.H)*scale))
	if !r.In(img.Bounds()) {
		return nil, fmt.Errorf("portal capture: region %v is outside the screen the portal captured (%dx%d pixels): capture inside a display (see Displays)", region, img.Bounds().Dx(), img.Bounds().Dy())
	}
	out := desktop.ReuseRGBA(dst, r.Dx(), r.Dy())
	for y := 0; y < r.Dy(); y++ {
		copy(out.Pix[y*out.Stride:y*out.Stride+r.Dx()*4], img.Pix[(r.Min.Y+y)*img.Stride+r.Min.X*4:])
	}
	return out, nil
}

// desktopBounds is the smallest rectangle holding every display: the
// screenshot covers it, its top-left at the screenshot's origin.
func desktopBounds(ds []geom.Display) geom.Rect {
	if len(ds) == 0 {
		return geom.Rect{}
	}
	x0, y0, x1, y1 := ds[0].Bounds.X, ds[0].Bounds.Y, ds[0].Bounds.X+ds[0].Bounds.W, ds[0].Bounds.Y+ds[0].Bounds.H
	for _, d := range ds[1:] {
		x0, y0 = min(x0, d.Bounds.X), min(y0, d.Bounds.Y)
		x1, y1 = max(x1, d.Bounds.X+d.Bounds.W), max(y1, d.Bounds.Y+d.Bounds.H)
	}
	return geom.Rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
}
