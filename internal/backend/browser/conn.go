package browser

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
)

// defaultCallTimeout bounds a protocol call whose context has no deadline.
const defaultCallTimeout = 30 * time.Second

// errClosed is the error of a call on a connection that is gone.
var errClosed = errors.New("the connection to the browser is closed")

// transport carries whole protocol messages: the pipe (NUL-separated JSON
// on fds 3 and 4) or a WebSocket.
type transport interface {
	read() ([]byte, error)
	write([]byte) error
	close() error
}

// pipeTransport is --remote-debugging-pipe: the browser reads fd 3 and writes fd 4.
type pipeTransport struct {
	r  *bufio.Reader
	rc io.Closer
	w  io.WriteCloser
	mu sync.Mutex
}

func (p *pipeTransport) read() ([]byte, error) {
	b, err := p.r.ReadBytes(0)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

func (p *pipeTransport) write(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.w.Write(append(b, 0)); err != nil {
		return err
	}
	return nil
}

func (p *pipeTransport) close() error {
	err := p.w.Close()
	if e := p.rc.Close(); err == nil {
		err = e
	}
	return err
}

// conn is one connection to a browser: calls matched to their responses by
// id, and events handed to listeners by a dispatcher goroutine fed by an
// unbounded queue, so the reader never blocks on a listener. Listeners run
// one at a time and must not wait for another event; they may make calls.
type conn struct {
	t transport

	mu        sync.Mutex
	next      int64
	pending   map[int64]chan *cdproto.Message
	listeners map[string][]*listener // key: sessionID + " " + method ("*": every method)
	queue     []*cdproto.Message
	wake      chan struct{}
	err       error // why the connection closed
	done      chan struct{}
}

type listener struct {
	fn func(method string, params jsonv2.Value)
}

func newConn(t transport) *conn {
	c := &conn{t: t, pending: map[int64]chan *cdproto.Message{}, listeners: map[string][]*listener{},
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go c.readLoop()
	go c.dispatchLoop()
	return c
}

func (c *conn) readLoop() {
	for {
		b, err := c.t.read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the browser closed the connection (it exited or was killed)")
			}
			c.shut(err)
			return
		}
		msg := new(cdproto.Message)
		if err := jsonv2.Unmarshal(b, msg); err != nil {
			continue // a message we cannot read is dropped, not fatal
		}
		if msg.ID != 0 {
			c.mu.Lock()
			ch := c.pending[msg.ID]
			delete(c.pending, msg.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- msg
			}
			continue
		}
		c.mu.Lock()
		c.queue = append(c.queue, msg)
		c.mu.Unlock()
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

func (c *conn) dispatchLoop() {
	for {
		c.mu.Lock()
		q := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, m := range q {
			c.mu.Lock()
			ls := append(append([]*listener(nil), c.listeners[string(m.SessionID)+" "+string(m.Method)]...),
				c.listeners[string(m.SessionID)+" *"]...)
			c.mu.Unlock()
			for _, l := range ls {
				l.fn(string(m.Method), m.Params)
			}
		}
		if len(q) > 0 {
			continue
		}
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
	}
}

// shut closes the connection with err; pending calls fail with it.
func (c *conn) shut(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	close(c.done)
	c.mu.Unlock()
	_ = c.t.close()
}

// alive reports whether the connection is open.
func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

func (c *conn) closeErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return errClosed
	}
	return fmt.Errorf("%w: %v", errClosed, c.err)
}

// on registers fn for method ("*": all) on session sid and returns a func
// that removes it.
func (c *conn) on(sid target.SessionID, method string, fn func(method string, params jsonv2.Value)) func() {
	key := string(sid) + " " + method
	l := &listener{fn: fn}
	c.mu.Lock()
	c.listeners[key] = append(c.listeners[key], l)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		ls := c.listeners[key]
		for i, x := range ls {
			if x == l {
				c.listeners[key] = append(ls[:i:i], ls[i+1:]...)
				break
			}
		}
		if len(c.listeners[key]) == 0 {
			delete(c.listeners, key)
		}
	}
}

// forget drops every listener of session sid.
func (c *conn) forget(sid target.SessionID) {
	prefix := string(sid) + " "
	c.mu.Lock()
	for k := range c.listeners {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			delete(c.listeners, k)
		}
	}
	c.mu.Unlock()
}

// call sends method with params on session sid and decodes the result into
// res (nil: ignored). It is bounded by ctx, or defaultCallTimeout when ctx
// has no deadline, and fails at once when the connection closes.
func (c *conn) call(ctx context.Context, sid target.SessionID, method string, params, res any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultCallTimeout)
		defer cancel()
	}
	var raw jsonv2.Value
	if params != nil {
		b, err := jsonv2.Marshal(params)
		if err != nil {
			return fmt.Errorf("%s: encoding the parameters: %w", method, err)
		}
		raw = b
	}
	ch := make(chan *cdproto.Message, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.closeErr()
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	b, err := jsonv2.Marshal(&cdproto.Message{ID: id, SessionID: sid, Method: cdproto.MethodType(method), Params: raw})
	if err == nil {
		err = c.t.write(b)
	}
	if err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case msg := <-ch:
		if msg.Error != nil {
			return fmt.Errorf("%s: %s", method, msg.Error.Message)
		}
		if res != nil && len(msg.Result) > 0 {
			if err := jsonv2.Unmarshal(msg.Result, res); err != nil {
				return fmt.Errorf("%s: decoding the result: %w", method, err)
			}
		}
		return nil
	case <-c.done:
		return fmt.Errorf("%s: %w", method, c.closeErr())
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: the browser did not answer: %w", method, ctx.Err())
	}
}

// session is a flattened session on conn (sid "" is the browser itself).
// It implements cdp.Session, so the typed commands of cdproto run on it.
type session struct {
	c   *conn
	sid target.SessionID
}

// Call implements cdp.Session.
func (s *session) Call(ctx context.Context, method string, params, result any) error {
	return s.c.call(ctx, s.sid, method, params, result)
}

// Subscribe implements cdp.Session: events of method are buffered without
// bound until cancel.
func (s *session) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	out := make(chan jsonv2.Value)
	var mu sync.Mutex
	var buf []jsonv2.Value
	wake := make(chan struct{}, 1)
	stop := make(chan struct{})
	off := s.c.on(s.sid, method, func(_ string, p jsonv2.Value) {
		mu.Lock()
		buf = append(buf, p)
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	go func() {
		defer close(out)
		for {
			mu.Lock()
			var v jsonv2.Value
			have := len(buf) > 0
			if have {
				v, buf = buf[0], buf[1:]
			}
			mu.Unlock()
			if have {
				select {
				case out <- v:
					continue
				case <-stop:
					return
				case <-s.c.done:
					return
				}
			}
			select {
			case <-wake:
			case <-stop:
				return
			case <-s.c.done:
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { off(); close(stop) }) }
}

// call is Call with a shorter name.
func (s *session) call(ctx context.Context, method string, params, res any) error {
	return s.c.call(ctx, s.sid, method, params, res)
}

// on listens to method on this session.
func (s *session) on(method string, fn func(method string, params jsonv2.Value)) func() {
	return s.c.on(s.sid, method, fn)
}
