package atspi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/godbus/dbus/v5"
)

// D-Bus names of AT-SPI2.
const (
	registryName  = "org.a11y.atspi.Registry"
	rootPath      = dbus.ObjectPath("/org/a11y/atspi/accessible/root")
	cachePath     = dbus.ObjectPath("/org/a11y/atspi/cache")
	registryPath  = dbus.ObjectPath("/org/a11y/atspi/registry")
	ifAccessible  = "org.a11y.atspi.Accessible"
	ifaceCache    = "org.a11y.atspi.Cache"
	ifaceComp     = "org.a11y.atspi.Component"
	ifaceText     = "org.a11y.atspi.Text"
	ifaceValue    = "org.a11y.atspi.Value"
	ifaceApp      = "org.a11y.atspi.Application"
	ifaceRegistry = "org.a11y.atspi.Registry"
	ifaceProps    = "org.freedesktop.DBus.Properties"
	busName       = "org.a11y.Bus"
	busPath       = dbus.ObjectPath("/org/a11y/bus")
	ifaceStatus   = "org.a11y.Status"
)

// ref is an AT-SPI object reference: bus name and object path.
type ref struct {
	Name string
	Path dbus.ObjectPath
}

// peer is where an application's calls go: its own peer-to-peer connection
// when it offers one (dest ""), else the accessibility bus (dest = its bus name).
type peer struct {
	conn *dbus.Conn
	dest string
	d    *direct // the peer-to-peer connection, when set (conn is then unused)
}

// call sends one method call without waiting. godbus's Object always sets a
// destination header, which a peer-to-peer server rejects, so the message is
// built here.
func (p peer) call(ctx context.Context, path dbus.ObjectPath, iface, member string, args ...any) *dbus.Call {
	callsSent.Add(1)
	if p.d != nil {
		return p.d.call(path, iface, member, args...)
	}
	msg := &dbus.Message{Type: dbus.TypeMethodCall, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldPath:      dbus.MakeVariant(path),
		dbus.FieldInterface: dbus.MakeVariant(iface),
		dbus.FieldMember:    dbus.MakeVariant(member),
	}}
	if p.dest != "" {
		msg.Headers[dbus.FieldDestination] = dbus.MakeVariant(p.dest)
	}
	if len(args) > 0 {
		msg.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(args...))
		msg.Body = args
	}
	return p.conn.SendWithContext(ctx, msg, make(chan *dbus.Call, 1))
}

// hold and release bracket a burst of calls: on a peer-to-peer
// connection they go out in one write (direct.hold).
func (p peer) hold() {
	if p.d != nil {
		p.d.hold()
	}
}

func (p peer) release() {
	if p.d != nil {
		p.d.release()
	}
}

// forget gives up on calls still waiting for their replies (nil ones and
// answered ones are skipped).
func (p peer) forget(calls ...*dbus.Call) {
	if p.d == nil {
		return
	}
	var out []*dbus.Call
	for _, c := range calls {
		if c != nil && !ready(c) {
			out = append(out, c)
		}
	}
	p.d.forget(out)
}

// callsSent counts the calls the package has sent (the benchmarks report
// calls per snapshot).
var callsSent atomic.Int64

// errHung is returned when an application did not answer a call in time.
var errHung = errors.New("the application did not answer in time")

// wait waits for c, at most timeout (and never past ctx).
func wait(ctx context.Context, c *dbus.Call, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-c.Done:
		return c.Err
	case <-t.C:
		return errHung
	case <-ctx.Done():
		return ctx.Err()
	}
}

// do sends one call and waits for it.
func (p peer) do(ctx context.Context, timeout time.Duration, path dbus.ObjectPath, iface, member string, args ...any) (*dbus.Call, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := p.call(ctx, path, iface, member, args...)
	err := wait(ctx, c, timeout)
	if err != nil {
		p.forget(c)
	}
	return c, err
}

// pipeline issues n calls to p with up to inflight of them outstanding and
// hands each reply to done in order: a stream of the jobs 0 to n-1.
func pipeline(ctx context.Context, p peer, n, inflight int, timeout time.Duration,
	issue func(ctx context.Context, i int) *dbus.Call, done func(i int, c *dbus.Call) error) error {
	jobs := make([]int, n)
	for i := range jobs {
		jobs[i] = i
	}
	return stream(ctx, p, inflight, timeout, jobs, func(ctx context.Context, i *int) *dbus.Call {
		return issue(ctx, *i)
	}, func(i *int, c *dbus.Call, _ func(int)) error {
		return done(*i, c)
	})
}

// ready reports whether c's reply is in (nil: no call was made). The
// pipelines top their calls up only before they would wait, so that the
// calls a batch of replies makes room for go out in one write.
func ready(c *dbus.Call) bool { return c == nil || len(c.Done) > 0 }

// await waits for c's reply, at most timeout (t is the caller's timer,
// reset only when there is a wait), and never past ctx.
func await(ctx context.Context, c *dbus.Call, t *time.Timer, timeout time.Duration) error {
	select {
	case <-c.Done:
		return nil
	default:
	}
	t.Reset(timeout)
	select {
	case <-c.Done:
		return nil
	case <-t.C:
		return errHung
	case <-ctx.Done():
		return ctx.Err()
	}
}

// unknownMethod reports whether err says the object or method does not exist.
func unknownMethod(err error) bool {
	var de dbus.Error
	if errors.As(err, &de) {
		return strings.HasSuffix(de.Name, ".UnknownMethod") || strings.HasSuffix(de.Name, ".UnknownObject") ||
			strings.HasSuffix(de.Name, ".UnknownInterface")
	}
	return false
}

// cacheItem is one org.a11y.atspi.Cache.GetItems entry, current form
// a((so)(so)(so)iiassusau).
type cacheItem struct {
	Obj, App, Parent ref
	Index, Count     int32
	Ifaces           []string
	Name             string
	Role             uint32
	Desc             string
	States           []uint32
}

// legacyCacheItem is the form older Qt and at-spi versions send,
// a((so)(so)(so)a(so)assusau), children listed.
type legacyCacheItem struct {
	Obj, App, Parent ref
	Children         []ref
	Ifaces           []string
	Name             string
	Role             uint32
	Desc             string
	States           []uint32
}

// extents is a Component.GetExtents reply.
type extents struct{ X, Y, W, H int32 }

// minInt32 is what GTK reports as the position of something not drawn (a
// list row scrolled out of view).
const minInt32 = -1 << 31

func storeErr(what string, err error) error {
	return fmt.Errorf("atspi: decode %s: %w", what, err)
}

// stream issues the calls of a queue to p that its replies may extend, with up
// to inflight outstanding, and hands each reply to done in queue order;
// done may push further jobs (they go out as soon as there is room, with no
// wait for the queue to drain). A job whose issue returns nil makes no call
// and is handed to done in its turn. It stops at the first call that takes
// longer than timeout (errHung) or when ctx ends, the calls still out
// cancelled and forgotten; done's error stops it too.
func stream[J any](ctx context.Context, p peer, inflight int, timeout time.Duration, queue []J,
	issue func(ctx context.Context, j *J) *dbus.Call, done func(j *J, c *dbus.Call, push func(J)) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	calls := make([]*dbus.Call, 0, len(queue))
	push := func(j J) { queue = append(queue, j) }
	t := time.NewTimer(timeout)
	defer t.Stop()
	defer func() { p.forget(calls...) }() // the calls still out when it stops early
	for head := 0; head < len(queue); head++ {
		if head == len(calls) || !ready(calls[head]) {
			p.hold()
			for len(calls) < len(queue) && len(calls) < head+inflight {
				calls = append(calls, issue(ctx, &queue[len(calls)]))
			}
			p.release()
		}
		c := calls[head]
		if c != nil {
			if err := await(ctx, c, t, timeout); err != nil {
				return err
			}
		}
		if err := done(&queue[head], c, push); err != nil {
			return err
		}
		calls[head] = nil
	}
	return nil
}

// The reply decoders below read godbus's decoded body directly (Store goes
// through reflection for every reply, and a walk has hundreds).

func replyOK(c *dbus.Call) bool { return c != nil && c.Err == nil && len(c.Body) > 0 }

// replyUint32 reads a u reply (GetRole).
func replyUint32(c *dbus.Call) (uint32, bool) {
	if !replyOK(c) {
		return 0, false
	}
	v, ok := c.Body[0].(uint32)
	return v, ok
}

// replyStates reads an au reply (GetState).
func replyStates(c *dbus.Call) (stateSet, bool) {
	if !replyOK(c) {
		return 0, false
	}
	v, ok := c.Body[0].([]uint32)
	return states(v), ok
}

// replyExtents reads an (iiii) reply (GetExtents).
func replyExtents(c *dbus.Call) (extents, bool) {
	if !replyOK(c) {
		return extents{}, false
	}
	if v, ok := c.Body[0].([]any); ok && len(v) == 4 {
		x, ok1 := v[0].(int32)
		y, ok2 := v[1].(int32)
		w, ok3 := v[2].(int32)
		h, ok4 := v[3].(int32)
		if ok1 && ok2 && ok3 && ok4 {
			return extents{x, y, w, h}, true
		}
	}
	var e extents
	return e, c.Store(&e) == nil
}

// replyRef reads an (so) reply (GetChildAtIndex).
func replyRef(c *dbus.Call) (ref, bool) {
	if !replyOK(c) {
		return ref{}, false
	}
	if v, ok := c.Body[0].([]any); ok && len(v) == 2 {
		name, ok1 := v[0].(string)
		path, ok2 := v[1].(dbus.ObjectPath)
		if ok1 && ok2 {
			return ref{name, path}, true
		}
	}
	var r ref
	return r, c.Store(&r) == nil
}

// replyProps reads the Name and ChildCount of an a{sv} reply (Properties.GetAll).
func replyProps(c *dbus.Call, n *node) {
	if !replyOK(c) {
		return
	}
	props, ok := c.Body[0].(map[string]dbus.Variant)
	if !ok {
		return
	}
	n.name, _ = props["Name"].Value().(string)
	n.nchild, _ = props["ChildCount"].Value().(int32)
}
