package wayland

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// sock is the connection to the compositor: bytes with file descriptors
// beside them (sock_linux.go).
type sock interface {
	write(b []byte, fds []int) error
	// read returns bytes read and the file descriptors that came with them.
	read(b []byte) (int, []int, error)
	close() error
}

// displayID is the object id of wl_display, which every connection starts with.
const displayID = 1

// roundtripTimeout bounds a wait for the compositor to answer a sync.
const roundtripTimeout = 10 * time.Second

// client is a minimal Wayland client: it sends requests, dispatches events to
// each object's handler on one reader goroutine, and fails as a whole on a
// protocol error (as libwayland does).
type client struct {
	s sock

	wmu  sync.Mutex // orders id allocation with the writes that introduce the ids
	next uint32     // next client object id

	mu    sync.Mutex
	objs  map[uint32]handler
	names map[uint32]string // interface of each object, for error messages
	err   error
	dead  chan struct{}

	fdq []int // received descriptors not yet taken by an event (reader goroutine only)
}

func newClient(s sock) *client {
	c := &client{s: s, next: displayID + 1, objs: map[uint32]handler{}, names: map[uint32]string{displayID: "wl_display"}, dead: make(chan struct{})}
	c.objs[displayID] = c.displayEvent
	go c.readLoop()
	return c
}

// fail records the first fatal error and stops the connection.
func (c *client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.dead)
	_ = c.s.close()
}

// failed returns the fatal error, if any.
func (c *client) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *client) close() {
	c.fail(errors.New("wayland: connection closed"))
}

// send encodes and writes one request. Arguments: uint32, int32, int, fixed,
// string, []byte (array), fdArg, newObj, bindObj, or nil (a null object).
func (c *client) send(sender uint32, op uint16, args ...any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.failed(); err != nil {
		return err
	}
	var e encoder
	type pending struct {
		id    uint32
		h     handler
		iface string
		out   *uint32
	}
	var created []pending
	for _, a := range args {
		switch v := a.(type) {
		case uint32:
			e.uint(v)
		case int32:
			e.int(v)
		case int:
			e.int(int32(v))
		case fixed:
			e.fixed(v)
		case string:
			e.string(v)
		case []byte:
			e.array(v)
		case fdArg:
			e.fds = append(e.fds, int(v))
		case newObj:
			id := c.next + uint32(len(created))
			created = append(created, pending{id, v.h, "", v.out})
			e.uint(id)
		case bindObj:
			id := c.next + uint32(len(created))
			created = append(created, pending{id, v.h, v.iface, v.out})
			e.string(v.iface)
			e.uint(v.version)
			e.uint(id)
		case nil:
			e.uint(0)
		default:
			return fmt.Errorf("wayland: cannot encode argument of type %T", a)
		}
	}
	msg, err := message(sender, op, e.buf)
	if err != nil {
		return err
	}
	c.mu.Lock()
	for _, p := range created {
		if p.h != nil {
			c.objs[p.id] = p.h
		}
		if p.iface != "" {
			c.names[p.id] = p.iface
		}
		if p.out != nil {
			*p.out = p.id
		}
	}
	c.mu.Unlock()
	c.next += uint32(len(created))
	if err := c.s.write(msg, e.fds); err != nil {
		err = fmt.Errorf("wayland: write to the compositor: %w", err)
		c.fail(err)
		return err
	}
	return nil
}

// register sets the handler of an object the compositor created (a new_id in an event).
func (c *client) register(id uint32, iface string, h handler) {
	c.mu.Lock()
	c.objs[id] = h
	c.names[id] = iface
	c.mu.Unlock()
}

// forget drops an object's handler (after its destructor request).
func (c *client) forget(id uint32) {
	c.mu.Lock()
	delete(c.objs, id)
	c.mu.Unlock()
}

// displayEvent handles wl_display's error and delete_id events.
func (c *client) displayEvent(op uint16, d *decoder) {
	switch op {
	case 0: // error(object, code, message)
		obj, code, msg := d.uint(), d.uint(), d.string()
		c.mu.Lock()
		name := c.names[obj]
		c.mu.Unlock()
		if name == "" {
			name = "object"
		}
		c.fail(fmt.Errorf("wayland: the compositor reported protocol error %d on %s@%d: %s", code, name, obj, msg))
	case 1: // delete_id(id)
		id := d.uint()
		c.mu.Lock()
		delete(c.objs, id)
		delete(c.names, id)
		c.mu.Unlock()
	}
}

func (c *client) popFD() (int, bool) {
	if len(c.fdq) == 0 {
		return -1, false
	}
	fd := c.fdq[0]
	c.fdq = c.fdq[1:]
	return fd, true
}

func (c *client) readLoop() {
	buf := make([]byte, 0, 2*maxMessage)
	tmp := make([]byte, 16*maxMessage)
	for {
		n, fds, err := c.s.read(tmp)
		c.fdq = append(c.fdq, fds...)
		if err != nil {
			c.fail(fmt.Errorf("wayland: the compositor closed the connection: %w", err))
			return
		}
		buf = append(buf, tmp[:n]...)
		rest, err := c.dispatchAll(buf)
		if err != nil {
			c.fail(err)
			return
		}
		buf = append(buf[:0], rest...)
	}
}

// dispatchAll handles every complete message in buf and returns the rest.
func (c *client) dispatchAll(buf []byte) ([]byte, error) {
	for len(buf) >= headerSize {
		sender, op, size := header(buf)
		if size < headerSize {
			return nil, fmt.Errorf("wayland: malformed event header (size %d)", size)
		}
		if len(buf) < size {
			break
		}
		c.mu.Lock()
		h := c.objs[sender]
		c.mu.Unlock()
		if h != nil {
			d := &decoder{data: buf[headerSize:size], fds: c.popFD}
			h(op, d)
		}
		buf = buf[size:]
	}
	return buf, nil
}

// roundtrip waits until the compositor has handled every request sent so far
// (wl_display.sync) and this client every event sent before its answer.
func (c *client) roundtrip(ctx context.Context) error {
	done := make(chan struct{})
	var once sync.Once
	if err := c.send(displayID, 0, newObj{h: func(uint16, *decoder) { once.Do(func() { close(done) }) }}); err != nil {
		return err
	}
	t := time.NewTimer(roundtripTimeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-c.dead:
		return c.failed()
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("wayland: the compositor did not answer a sync within %v", roundtripTimeout)
	}
}
