package wayland

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

// Window is a toplevel window where the compositor placed it. A Wayland
// client never learns its window's place on the screen: its accessibility
// tree gives boxes relative to its window, and Rect is what maps them onto
// the layout.
type Window struct {
	// PID is the client's process id (0 when the compositor does not say).
	PID int
	// AppID is the Wayland app_id (the X11 class of an XWayland client).
	AppID string
	// Title is the window's title.
	Title string
	// Rect is the window's content (what the client's window coordinates
	// are relative to: the xdg-shell window geometry, without the
	// compositor's borders and title bar) in layout logical pixels, the
	// compositor's own coordinates (the backend's global coordinates are
	// these less Origin).
	Rect geom.Rect
	// Focused is set on the window with the keyboard focus.
	Focused bool
	// XWayland is set on an X11 client: its own screen coordinates are
	// already the layout's.
	XWayland bool
}

// Placer says where the compositor placed its windows: those shown now,
// topmost last where the compositor says.
type Placer interface {
	// Windows lists the windows on the screen (not on hidden workspaces or
	// the scratchpad).
	Windows(ctx context.Context) ([]Window, error)
	// Name names the source ("sway IPC at /run/user/1000/sway-ipc.1000.42.sock").
	Name() string
}

// PlacerOptions say how to reach the compositor's IPC.
type PlacerOptions struct {
	// SwaySock is $SWAYSOCK, sway's IPC socket.
	SwaySock string
	// HyprlandSignature is $HYPRLAND_INSTANCE_SIGNATURE, the name of the
	// Hyprland instance whose socket is under RuntimeDir/hypr.
	HyprlandSignature string
	// RuntimeDir is $XDG_RUNTIME_DIR.
	RuntimeDir string
}

// NewPlacer returns the placer the session offers: sway's IPC when
// SwaySock is set (or RuntimeDir holds exactly one sway IPC socket of this
// user, as a service started outside sway's environment sees it), else
// Hyprland's when HyprlandSignature is set; nil when neither, as on river,
// labwc and Wayfire, which do not tell clients where windows are.
func NewPlacer(o PlacerOptions) Placer {
	switch {
	case o.SwaySock != "":
		return &swayPlacer{sock: o.SwaySock}
	case o.HyprlandSignature != "":
		return &hyprPlacer{socks: hyprSockets(o.RuntimeDir, o.HyprlandSignature)}
	case o.RuntimeDir != "":
		socks, _ := filepath.Glob(filepath.Join(o.RuntimeDir, "sway-ipc."+strconv.Itoa(os.Getuid())+".*.sock"))
		if len(socks) == 1 {
			return &swayPlacer{sock: socks[0]}
		}
	}
	return nil
}

// NoPlacer is the sentence that says why there is no element tree on a
// compositor without a placer.
func NoPlacer(compositor string) string {
	return fmt.Sprintf("%s does not tell its clients where their windows are on the screen (of the wlroots compositors only sway's IPC, found through SWAYSOCK, and Hyprland's, through HYPRLAND_INSTANCE_SIGNATURE, do), and a Wayland application's accessibility tree gives boxes relative to its own window: the element tree is not available here (screenshots, OCR and vision work)", compositor)
}

// ipcTimeout bounds one exchange with the compositor's IPC.
const ipcTimeout = 2 * time.Second

// dialIPC connects to a compositor's IPC socket, bounded by ctx and ipcTimeout.
func dialIPC(ctx context.Context, path string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, ipcTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	return c, nil
}
