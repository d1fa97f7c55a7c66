package wayland

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/guiagent/guiagent/internal/geom"
)

// swayPlacer asks sway where its windows are over its IPC (the i3 IPC
// protocol: "i3-ipc", the payload's length and the message type as 32-bit
// integers in the host's order (little-endian on every machine sway runs
// on here), then the payload).
type swayPlacer struct{ sock string }

// The i3/sway IPC message this client sends.
const (
	swayMagic   = "i3-ipc"
	swayGetTree = 4
	// swayMaxReply bounds a reply (a tree of thousands of windows is a few MB).
	swayMaxReply = 64 << 20
)

func (p *swayPlacer) Name() string { return "sway IPC at " + p.sock }

func (p *swayPlacer) Windows(ctx context.Context) ([]Window, error) {
	b, err := swayRequest(ctx, p.sock, swayGetTree, nil)
	if err != nil {
		return nil, fmt.Errorf("where are the windows: sway IPC at %s: %w (check SWAYSOCK)", p.sock, err)
	}
	ws, err := parseSwayTree(b)
	if err != nil {
		return nil, fmt.Errorf("where are the windows: sway's GET_TREE: %w", err)
	}
	return ws, nil
}

// swayRequest sends one message of type typ and returns the reply's payload.
func swayRequest(ctx context.Context, sock string, typ uint32, payload []byte) ([]byte, error) {
	c, err := dialIPC(ctx, sock)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	msg := make([]byte, 0, 14+len(payload))
	msg = append(msg, swayMagic...)
	msg = binary.LittleEndian.AppendUint32(msg, uint32(len(payload)))
	msg = binary.LittleEndian.AppendUint32(msg, typ)
	msg = append(msg, payload...)
	// A server of another protocol may answer and hang up before it has
	// read the request: what it said tells more than the broken pipe.
	_, werr := c.Write(msg)
	var h [14]byte
	if n, err := io.ReadFull(c, h[:]); err != nil {
		if n >= len(swayMagic) && !bytes.Equal(h[:len(swayMagic)], []byte(swayMagic)) {
			return nil, fmt.Errorf("the reply does not begin with %q: not an i3/sway IPC socket", swayMagic)
		}
		if werr != nil {
			return nil, werr
		}
		return nil, fmt.Errorf("read the reply's header: %w", err)
	}
	if !bytes.Equal(h[:6], []byte(swayMagic)) {
		return nil, fmt.Errorf("the reply does not begin with %q: not an i3/sway IPC socket", swayMagic)
	}
	n, got := binary.LittleEndian.Uint32(h[6:]), binary.LittleEndian.Uint32(h[10:])
	if got != typ {
		return nil, fmt.Errorf("the reply is of type %d, want %d", got, typ)
	}
	if n > swayMaxReply {
		return nil, fmt.Errorf("the reply's length %d is over %d", n, swayMaxReply)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		return nil, fmt.Errorf("read the reply: %w", err)
	}
	return b, nil
}

// swayNode is the part of a GET_TREE node the placer reads.
type swayNode struct {
	Type       string     `json:"type"` // root, output, workspace, con, floating_con
	Name       string     `json:"name"`
	PID        int        `json:"pid"`
	AppID      *string    `json:"app_id"`
	Shell      string     `json:"shell"` // xdg_shell, xwayland
	Focused    bool       `json:"focused"`
	Visible    *bool      `json:"visible"`
	Rect       swayRect   `json:"rect"`
	WindowRect swayRect   `json:"window_rect"`
	Nodes      []swayNode `json:"nodes"`
	Floating   []swayNode `json:"floating_nodes"`
	// WindowProperties is an XWayland window's (class, title).
	WindowProperties *struct {
		Class string `json:"class"`
	} `json:"window_properties"`
}

type swayRect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// parseSwayTree lists the windows of a GET_TREE reply that are on the
// screen: views (nodes with a pid) that sway calls visible, outside the
// scratchpad (the workspace __i3_scratch), tiled ones before floating ones
// as sway stacks them. A view's content is its container's rect moved by
// its window_rect (the title bar and borders are the container's).
func parseSwayTree(b []byte) ([]Window, error) {
	var root swayNode
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	if root.Type != "root" {
		return nil, fmt.Errorf("the tree's top node is of type %q, want root", root.Type)
	}
	var out []Window
	var walk func(n *swayNode, depth int)
	walk = func(n *swayNode, depth int) {
		if depth > 256 || (n.Type == "workspace" && n.Name == "__i3_scratch") {
			return
		}
		if n.PID > 0 && (n.Type == "con" || n.Type == "floating_con") && (n.Visible == nil || *n.Visible) {
			w := Window{PID: n.PID, Title: n.Name, Focused: n.Focused, XWayland: n.Shell == "xwayland",
				Rect: geom.Rect{X: n.Rect.X + n.WindowRect.X, Y: n.Rect.Y + n.WindowRect.Y, W: n.WindowRect.Width, H: n.WindowRect.Height}}
			if n.AppID != nil {
				w.AppID = *n.AppID
			} else if n.WindowProperties != nil {
				w.AppID = n.WindowProperties.Class
			}
			out = append(out, w)
		}
		for i := range n.Nodes {
			walk(&n.Nodes[i], depth+1)
		}
		for i := range n.Floating {
			walk(&n.Floating[i], depth+1)
		}
	}
	walk(&root, 0)
	return out, nil
}
