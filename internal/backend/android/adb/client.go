// Package adb is a client of the adb server's smart-socket protocol: the
// requests the adb command-line program itself sends to its server (a
// 4-hex-digit length, then the request; OKAY or FAIL back), spoken over TCP
// with no adb process per command.
//
// The server (normally on 127.0.0.1:5037) relays each device service
// (shell, exec, sync) over its own transport to the device's adbd. Every
// call has a deadline (the context's, else the client's Timeout) and the
// connection is closed when the context ends, so a device that goes away is
// an error naming its serial, never a hang.
package adb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// DefaultAddr is where the adb server listens unless told otherwise.
const DefaultAddr = "127.0.0.1:5037"

// DefaultTimeout bounds one command when the client has no Timeout.
const DefaultTimeout = 15 * time.Second

// ErrServer is wrapped by errors that mean no adb server answered.
var ErrServer = errors.New("no adb server answered")

// ErrDeviceGone is wrapped by errors that mean the device is not (or no
// longer) attached to the server.
var ErrDeviceGone = errors.New("device not attached")

// FailError is a FAIL reply of the server (or of the device's service).
type FailError struct{ Msg string }

func (e *FailError) Error() string { return "adb server: " + e.Msg }

// Client talks to one adb server.
type Client struct {
	// Addr is the server as HOST:PORT; "" means DefaultAddr.
	Addr string
	// Timeout bounds each command whose context has no earlier deadline;
	// zero means DefaultTimeout.
	Timeout time.Duration
}

func (c *Client) addr() string {
	if c.Addr == "" {
		return DefaultAddr
	}
	return c.Addr
}

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// conn is one smart-socket connection, closed when its context ends.
type conn struct {
	net.Conn
	r    *bufio.Reader
	stop func() bool
	ctx  context.Context
}

func (c *conn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// dial opens a connection bounded by ctx and the client's timeout. The
// returned cancel must be called (it closes nothing; Close does).
func (c *Client) dial(ctx context.Context) (*conn, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", c.addr())
	if err != nil {
		cancel()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, nil, fmt.Errorf("adb server %s: %w", c.addr(), ctx.Err())
		}
		return nil, nil, fmt.Errorf("%w at %s (start it with `adb start-server`, or set the adb address): %v", ErrServer, c.addr(), err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	cn := &conn{Conn: nc, r: bufio.NewReaderSize(nc, 64<<10), ctx: ctx}
	cn.stop = context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	return cn, cancel, nil
}

// wrap turns an I/O error on a connection into the context's error when the
// context ended, else adds what.
func (c *conn) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	if ce := c.ctx.Err(); ce != nil {
		if errors.Is(ce, context.DeadlineExceeded) {
			return fmt.Errorf("%s: timed out: %w", what, ce)
		}
		return fmt.Errorf("%s: %w", what, ce)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) { // the deadline set from the context
		return fmt.Errorf("%s: timed out: %w", what, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// send writes one request.
func (c *conn) send(req string) error {
	if len(req) > 0xffff {
		return fmt.Errorf("adb request too long (%d bytes)", len(req))
	}
	_, err := io.WriteString(c.Conn, fmt.Sprintf("%04x%s", len(req), req))
	return c.wrap("adb request "+quoteReq(req), err)
}

func quoteReq(req string) string {
	if len(req) > 80 {
		req = req[:80] + "..."
	}
	return strconv.Quote(req)
}

// status reads OKAY or FAIL (with its message).
func (c *conn) status(req string) error {
	var st [4]byte
	if _, err := io.ReadFull(c.r, st[:]); err != nil {
		return c.wrap("adb reply to "+quoteReq(req), err)
	}
	switch string(st[:]) {
	case "OKAY":
		return nil
	case "FAIL":
		msg, err := c.readHex()
		if err != nil {
			return c.wrap("adb FAIL reply to "+quoteReq(req), err)
		}
		return &FailError{Msg: string(msg)}
	}
	return fmt.Errorf("adb reply to %s: unexpected %q (is %s an adb server?)", quoteReq(req), st[:], c.RemoteAddr())
}

// readHex reads a 4-hex-digit length and that many bytes.
func (c *conn) readHex() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(string(h[:]), 16, 16)
	if err != nil {
		return nil, fmt.Errorf("bad length %q", h[:])
	}
	b := make([]byte, n)
	_, err = io.ReadFull(c.r, b)
	return b, err
}

// hostQuery sends a host request and returns its length-prefixed answer.
func (c *Client) hostQuery(ctx context.Context, req string) ([]byte, error) {
	cn, cancel, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer cn.Close()
	if err := cn.send(req); err != nil {
		return nil, err
	}
	if err := cn.status(req); err != nil {
		return nil, err
	}
	b, err := cn.readHex()
	return b, cn.wrap("adb "+req, err)
}

// Version returns the server's protocol version (41 for adb 1.0.41).
func (c *Client) Version(ctx context.Context) (int, error) {
	b, err := c.hostQuery(ctx, "host:version")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(string(b), 16, 32)
	if err != nil {
		return 0, fmt.Errorf("adb host:version: bad answer %q", b)
	}
	return int(v), nil
}

// DeviceInfo is one line of host:devices-l.
type DeviceInfo struct {
	Serial string `json:"serial"`
	// State is "device" when usable; also "unauthorized", "offline",
	// "authorizing", "connecting", "recovery", "sideload", "bootloader", ...
	State       string `json:"state"`
	Product     string `json:"product,omitempty"`
	Model       string `json:"model,omitempty"`
	Device      string `json:"device,omitempty"`
	TransportID string `json:"transport_id,omitempty"`
}

// Devices lists the devices the server knows (host:devices-l).
func (c *Client) Devices(ctx context.Context) ([]DeviceInfo, error) {
	b, err := c.hostQuery(ctx, "host:devices-l")
	if err != nil {
		return nil, err
	}
	return ParseDevices(string(b)), nil
}

// ParseDevices parses the text of host:devices or host:devices-l: a line per
// device, the serial, the state, then key:value fields.
func ParseDevices(s string) []DeviceInfo {
	var out []DeviceInfo
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		d := DeviceInfo{Serial: f[0], State: f[1]}
		rest := f[2:]
		if d.State == "no" && len(rest) > 0 && rest[0] == "permissions" { // "no permissions (...)"
			d.State = "no permissions"
		}
		for _, kv := range rest {
			k, v, ok := strings.Cut(kv, ":")
			if !ok {
				continue
			}
			switch k {
			case "product":
				d.Product = v
			case "model":
				d.Model = v
			case "device":
				d.Device = v
			case "transport_id":
				d.TransportID = v
			}
		}
		out = append(out, d)
	}
	return out
}

// TrackDevices follows host:track-devices: the list now, then each time it
// changes, until ctx ends (then the channel closes) or the server goes away
// (the last value sent is then nil). It does not use the client's Timeout.
func (c *Client) TrackDevices(ctx context.Context) (<-chan []DeviceInfo, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", c.addr())
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", ErrServer, c.addr(), err)
	}
	cn := &conn{Conn: nc, r: bufio.NewReader(nc), ctx: ctx}
	cn.stop = context.AfterFunc(ctx, func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(c.timeout()))
	if err := cn.send("host:track-devices"); err != nil {
		cn.Close()
		return nil, err
	}
	if err := cn.status("host:track-devices"); err != nil {
		cn.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	ch := make(chan []DeviceInfo, 1)
	go func() {
		defer close(ch)
		defer cn.Close()
		for {
			b, err := cn.readHex()
			if err != nil {
				if ctx.Err() == nil {
					select {
					case ch <- nil:
					case <-ctx.Done():
					}
				}
				return
			}
			devs := ParseDevices(string(b))
			if devs == nil {
				devs = []DeviceInfo{}
			}
			select {
			case ch <- devs:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

// StartServer makes sure an adb server answers on 127.0.0.1:port: when none
// does, it runs `adbPath -P port start-server`, as adb itself does before
// its first command. adbPath "" means "adb" on PATH.
func StartServer(ctx context.Context, adbPath string, port int) error {
	c := &Client{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Timeout: 3 * time.Second}
	if _, err := c.Version(ctx); err == nil {
		return nil
	}
	if adbPath == "" {
		adbPath = "adb"
	}
	cmd := exec.CommandContext(ctx, adbPath, "-P", strconv.Itoa(port), "start-server")
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("starting the adb server: %s not found: install Android platform-tools (Debian: apt install adb) or name the program", adbPath)
		}
		return fmt.Errorf("%s -P %d start-server: %v: %s", adbPath, port, err, strings.TrimSpace(string(out)))
	}
	if _, err := c.Version(ctx); err != nil {
		return fmt.Errorf("adb server started but does not answer on port %d: %w", port, err)
	}
	return nil
}
