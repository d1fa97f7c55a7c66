package adb

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"time"
)

// Device is one device of the server, named by its serial.
type Device struct {
	c      *Client
	serial string

	mu       sync.Mutex
	features map[string]bool // nil until read
}

// Device returns a handle on the device with the given serial. Nothing is
// sent until a command runs.
func (c *Client) Device(serial string) *Device { return &Device{c: c, serial: serial} }

// Serial returns the device's serial.
func (d *Device) Serial() string { return d.serial }

// errf names the device in an error.
func (d *Device) errf(err error) error {
	if err == nil {
		return nil
	}
	var fe *FailError
	if errors.As(err, &fe) {
		m := fe.Msg
		switch {
		case strings.Contains(m, "not found"), strings.Contains(m, "offline"), strings.Contains(m, "no devices"):
			return fmt.Errorf("android device %s: %s: %w", d.serial, m, ErrDeviceGone)
		case strings.Contains(m, "unauthorized"):
			return fmt.Errorf("android device %s is unauthorized: unlock the phone and accept the \"Allow USB debugging?\" prompt (%s)", d.serial, m)
		}
		return fmt.Errorf("android device %s: %s", d.serial, m)
	}
	return fmt.Errorf("android device %s: %w", d.serial, err)
}

// Features returns the device's features (host-serial:SERIAL:features),
// read once.
func (d *Device) Features(ctx context.Context) (map[string]bool, error) {
	d.mu.Lock()
	f := d.features
	d.mu.Unlock()
	if f != nil {
		return f, nil
	}
	b, err := d.c.hostQuery(ctx, "host-serial:"+d.serial+":features")
	if err != nil {
		return nil, d.errf(err)
	}
	f = map[string]bool{}
	for _, s := range strings.Split(strings.TrimSpace(string(b)), ",") {
		if s != "" {
			f[s] = true
		}
	}
	d.mu.Lock()
	d.features = f
	d.mu.Unlock()
	return f, nil
}

// open connects to the device's service through the server.
func (d *Device) open(ctx context.Context, service string) (*conn, context.CancelFunc, error) {
	cn, cancel, err := d.c.dial(ctx)
	if err != nil {
		return nil, nil, d.errf(err)
	}
	fail := func(err error) (*conn, context.CancelFunc, error) {
		cn.Close()
		cancel()
		return nil, nil, d.errf(err)
	}
	tr := "host:transport:" + d.serial
	if err := cn.send(tr); err != nil {
		return fail(err)
	}
	if err := cn.status(tr); err != nil {
		return fail(err)
	}
	if err := cn.send(service); err != nil {
		return fail(err)
	}
	if err := cn.status(service); err != nil {
		return fail(err)
	}
	return cn, cancel, nil
}

// closedEarly is the error of a stream that ended before its command did.
func (d *Device) closedEarly(cn *conn, what string, err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if cn.ctx.Err() == nil {
			return fmt.Errorf("android device %s: the connection closed before %s finished (was the device disconnected?): %w", d.serial, what, ErrDeviceGone)
		}
	}
	return d.errf(cn.wrap(what, err))
}

// Result is what a shell command gave.
type Result struct {
	Stdout, Stderr []byte
	// Exit is the command's exit status; -1 when the device's shell does
	// not report one (no shell_v2).
	Exit int
}

// Shell runs cmd through the device's shell: shell protocol v2
// (`shell,v2,raw:`) where the device has the shell_v2 feature, which keeps
// stdout and stderr apart and gives the exit status; else `shell:`, whose
// output is both streams together with \r\n turned back into \n, and whose
// exit status is unknown (-1).
func (d *Device) Shell(ctx context.Context, cmd string) (Result, error) {
	f, err := d.Features(ctx)
	if err != nil {
		return Result{Exit: -1}, err
	}
	if !f["shell_v2"] {
		return d.shellV1(ctx, cmd)
	}
	cn, cancel, err := d.open(ctx, "shell,v2,raw:"+cmd)
	if err != nil {
		return Result{Exit: -1}, err
	}
	defer cancel()
	defer cn.Close()
	// No input: close the command's stdin (packet 4, empty), so a command
	// that reads it ends rather than waiting.
	if _, err := cn.Write([]byte{4, 0, 0, 0, 0}); err != nil {
		return Result{Exit: -1}, d.closedEarly(cn, "shell command "+short(cmd), err)
	}
	var r Result
	r.Exit = -1
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(cn.r, hdr[:]); err != nil {
			return r, d.closedEarly(cn, "shell command "+short(cmd), err)
		}
		n := binary.LittleEndian.Uint32(hdr[1:])
		if n > 16<<20 {
			return r, fmt.Errorf("android device %s: shell packet of %d bytes", d.serial, n)
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(cn.r, buf); err != nil {
			return r, d.closedEarly(cn, "shell command "+short(cmd), err)
		}
		switch hdr[0] {
		case 1:
			r.Stdout = append(r.Stdout, buf...)
		case 2:
			r.Stderr = append(r.Stderr, buf...)
		case 3:
			if len(buf) > 0 {
				r.Exit = int(buf[0])
			}
			return r, nil
		}
	}
}

func (d *Device) shellV1(ctx context.Context, cmd string) (Result, error) {
	cn, cancel, err := d.open(ctx, "shell:"+cmd)
	if err != nil {
		return Result{Exit: -1}, err
	}
	defer cancel()
	defer cn.Close()
	b, err := io.ReadAll(cn.r)
	if err != nil {
		return Result{Exit: -1}, d.closedEarly(cn, "shell command "+short(cmd), err)
	}
	return Result{Stdout: bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), Exit: -1}, nil
}

// Run runs cmd and returns its stdout; a non-zero exit status, or output on
// stderr from a shell without exit statuses, is an error holding stderr.
func (d *Device) Run(ctx context.Context, cmd string) (string, error) {
	r, err := d.Shell(ctx, cmd)
	if err != nil {
		return string(r.Stdout), err
	}
	if r.Exit > 0 {
		msg := strings.TrimSpace(string(r.Stderr))
		if msg == "" {
			msg = strings.TrimSpace(string(r.Stdout))
		}
		return string(r.Stdout), fmt.Errorf("android device %s: %s: exit status %d: %s", d.serial, short(cmd), r.Exit, msg)
	}
	return string(r.Stdout), nil
}

func short(cmd string) string {
	if len(cmd) > 60 {
		cmd = cmd[:60] + "..."
	}
	return fmt.Sprintf("%q", cmd)
}

// Exec runs cmd with `exec:`: its stdout, byte for byte (no terminal, no
// stderr), for binary output such as screencap.
func (d *Device) Exec(ctx context.Context, cmd string) ([]byte, error) {
	cn, cancel, err := d.open(ctx, "exec:"+cmd)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer cn.Close()
	b, err := io.ReadAll(cn.r)
	if err != nil {
		return b, d.closedEarly(cn, "exec "+short(cmd), err)
	}
	return b, nil
}

// syncChunk is the largest DATA block of the sync protocol.
const syncChunk = 64 << 10

func syncReq(id string, n int) []byte {
	b := make([]byte, 8)
	copy(b, id)
	binary.LittleEndian.PutUint32(b[4:], uint32(n))
	return b
}

// Push writes data to remote on the device with the given mode (sync SEND).
func (d *Device) Push(ctx context.Context, data io.Reader, remote string, mode os.FileMode, mtime time.Time) error {
	cn, cancel, err := d.open(ctx, "sync:")
	if err != nil {
		return err
	}
	defer cancel()
	defer cn.Close()
	what := "push to " + remote
	spec := fmt.Sprintf("%s,%d", remote, uint32(mode.Perm())|0o100000)
	if _, err := cn.Write(append(syncReq("SEND", len(spec)), spec...)); err != nil {
		return d.closedEarly(cn, what, err)
	}
	buf := make([]byte, 8+syncChunk)
	for {
		n, rerr := io.ReadFull(data, buf[8:])
		if n > 0 {
			copy(buf, syncReq("DATA", n))
			if _, err := cn.Write(buf[:8+n]); err != nil {
				return d.closedEarly(cn, what, err)
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("push to %s: reading the data: %w", remote, rerr)
		}
	}
	done := syncReq("DONE", 0)
	binary.LittleEndian.PutUint32(done[4:], uint32(mtime.Unix()))
	if _, err := cn.Write(done); err != nil {
		return d.closedEarly(cn, what, err)
	}
	var hdr [8]byte
	if _, err := io.ReadFull(cn.r, hdr[:]); err != nil {
		return d.closedEarly(cn, what, err)
	}
	n := binary.LittleEndian.Uint32(hdr[4:])
	switch string(hdr[:4]) {
	case "OKAY":
		_, _ = cn.Write(syncReq("QUIT", 0))
		return nil
	case "FAIL":
		msg := make([]byte, min(n, 4096))
		_, _ = io.ReadFull(cn.r, msg)
		return fmt.Errorf("android device %s: push to %s: %s", d.serial, remote, msg)
	}
	return fmt.Errorf("android device %s: push to %s: unexpected sync reply %q", d.serial, remote, hdr[:4])
}

// Pull reads remote from the device (sync RECV).
func (d *Device) Pull(ctx context.Context, remote string) ([]byte, error) {
	cn, cancel, err := d.open(ctx, "sync:")
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer cn.Close()
	what := "pull of " + remote
	if _, err := cn.Write(append(syncReq("RECV", len(remote)), remote...)); err != nil {
		return nil, d.closedEarly(cn, what, err)
	}
	var out []byte
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(cn.r, hdr[:]); err != nil {
			return nil, d.closedEarly(cn, what, err)
		}
		n := binary.LittleEndian.Uint32(hdr[4:])
		switch string(hdr[:4]) {
		case "DATA":
			if n > syncChunk {
				return nil, fmt.Errorf("android device %s: %s: sync block of %d bytes", d.serial, what, n)
			}
			start := len(out)
			out = append(out, make([]byte, n)...)
			if _, err := io.ReadFull(cn.r, out[start:]); err != nil {
				return nil, d.closedEarly(cn, what, err)
			}
		case "DONE":
			_, _ = cn.Write(syncReq("QUIT", 0))
			return out, nil
		case "FAIL":
			msg := make([]byte, min(n, 4096))
			_, _ = io.ReadFull(cn.r, msg)
			return nil, fmt.Errorf("android device %s: pull %s: %s", d.serial, path.Clean(remote), msg)
		default:
			return nil, fmt.Errorf("android device %s: %s: unexpected sync reply %q", d.serial, what, hdr[:4])
		}
	}
}

// ExecStream runs cmd with `exec:` and returns its stdout as a stream;
// closing it ends the command's connection (a caller that needs only the
// start of the output reads that much and closes).
func (d *Device) ExecStream(ctx context.Context, cmd string) (io.ReadCloser, error) {
	cn, cancel, err := d.open(ctx, "exec:"+cmd)
	if err != nil {
		return nil, err
	}
	return &execStream{d: d, cn: cn, cancel: cancel, what: "exec " + short(cmd)}, nil
}

type execStream struct {
	d      *Device
	cn     *conn
	cancel context.CancelFunc
	what   string
}

func (s *execStream) Read(p []byte) (int, error) {
	n, err := s.cn.r.Read(p)
	if err != nil && err != io.EOF {
		return n, s.d.closedEarly(s.cn, s.what, err)
	}
	return n, err
}

func (s *execStream) Close() error {
	err := s.cn.Close()
	s.cancel()
	return err
}
