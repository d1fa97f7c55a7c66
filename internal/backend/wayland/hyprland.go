package wayland

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/guiagent/guiagent/internal/geom"
)

// hyprPlacer asks Hyprland where its windows are on its request socket, as
// hyprctl does ("j/clients" and "j/monitors": JSON replies, the socket
// closed after each), without spawning hyprctl.
type hyprPlacer struct {
	socks []string // where the socket may be, the current place first
}

// hyprSockets are the places of instance sig's request socket: under
// XDG_RUNTIME_DIR/hypr since Hyprland 0.40, under /tmp/hypr before.
func hyprSockets(runtimeDir, sig string) []string {
	var out []string
	if runtimeDir != "" {
		out = append(out, filepath.Join(runtimeDir, "hypr", sig, ".socket.sock"))
	}
	return append(out, filepath.Join("/tmp/hypr", sig, ".socket.sock"))
}

// hyprMaxReply bounds a reply.
const hyprMaxReply = 64 << 20

func (p *hyprPlacer) Name() string { return "Hyprland IPC at " + p.socks[0] }

func (p *hyprPlacer) Windows(ctx context.Context) ([]Window, error) {
	clients, err := p.request(ctx, "j/clients")
	if err != nil {
		return nil, err
	}
	monitors, err := p.request(ctx, "j/monitors")
	if err != nil {
		return nil, err
	}
	ws, err := parseHyprland(clients, monitors)
	if err != nil {
		return nil, fmt.Errorf("where are the windows: Hyprland's clients and monitors: %w", err)
	}
	return ws, nil
}

// request sends one request and reads the reply until the compositor closes
// the connection.
func (p *hyprPlacer) request(ctx context.Context, req string) ([]byte, error) {
	var errs []error
	for _, s := range p.socks {
		c, err := dialIPC(ctx, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defer c.Close()
		if _, err := io.WriteString(c, req); err != nil {
			return nil, fmt.Errorf("where are the windows: Hyprland IPC at %s: %w", s, err)
		}
		b, err := io.ReadAll(io.LimitReader(c, hyprMaxReply))
		if err != nil {
			return nil, fmt.Errorf("where are the windows: Hyprland IPC at %s: %q: %w", s, req, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("where are the windows: Hyprland IPC: %w (check HYPRLAND_INSTANCE_SIGNATURE and XDG_RUNTIME_DIR)", errors.Join(errs...))
}

// hyprClient is the part of a client of "j/clients" the placer reads.
type hyprClient struct {
	Mapped    bool   `json:"mapped"`
	Hidden    bool   `json:"hidden"`
	At        [2]int `json:"at"`
	Size      [2]int `json:"size"`
	Workspace struct {
		ID int `json:"id"`
	} `json:"workspace"`
	Class          string `json:"class"`
	Title          string `json:"title"`
	PID            int    `json:"pid"`
	XWayland       bool   `json:"xwayland"`
	FocusHistoryID int    `json:"focusHistoryID"`
}

// hyprMonitor is the part of a monitor of "j/monitors" the placer reads.
type hyprMonitor struct {
	ActiveWorkspace struct {
		ID int `json:"id"`
	} `json:"activeWorkspace"`
	SpecialWorkspace struct {
		ID int `json:"id"`
	} `json:"specialWorkspace"`
}

// parseHyprland lists the mapped, shown clients on the monitors' active
// (and open special) workspaces. A client's "at" and "size" are its
// content's place in layout logical pixels; the focused one has
// focusHistoryID 0. The list is ordered from the least recently focused to
// the focused one: a stand-in for the stacking order, which Hyprland does
// not report.
func parseHyprland(clients, monitors []byte) ([]Window, error) {
	var cs []hyprClient
	if err := json.Unmarshal(clients, &cs); err != nil {
		return nil, fmt.Errorf("clients: %w", err)
	}
	var ms []hyprMonitor
	if err := json.Unmarshal(monitors, &ms); err != nil {
		return nil, fmt.Errorf("monitors: %w", err)
	}
	shown := map[int]bool{}
	for _, m := range ms {
		shown[m.ActiveWorkspace.ID] = true
		if m.SpecialWorkspace.ID != 0 {
			shown[m.SpecialWorkspace.ID] = true
		}
	}
	var keep []hyprClient
	for _, c := range cs {
		if c.Mapped && !c.Hidden && shown[c.Workspace.ID] && c.PID > 0 {
			keep = append(keep, c)
		}
	}
	// -1 (never focused) first, then from the oldest focus to the newest.
	sort.SliceStable(keep, func(i, j int) bool { return hyprOrder(keep[i]) > hyprOrder(keep[j]) })
	out := make([]Window, 0, len(keep))
	for _, c := range keep {
		out = append(out, Window{PID: c.PID, AppID: c.Class, Title: c.Title, Focused: c.FocusHistoryID == 0,
			XWayland: c.XWayland, Rect: geom.Rect{X: c.At[0], Y: c.At[1], W: c.Size[0], H: c.Size[1]}})
	}
	return out, nil
}

func hyprOrder(c hyprClient) int {
	if c.FocusHistoryID < 0 {
		return 1 << 30
	}
	return c.FocusHistoryID
}
