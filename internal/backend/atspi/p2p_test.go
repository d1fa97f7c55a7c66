package atspi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// TestFastReply decodes replies of every signature fastReply takes, as godbus
// encodes them in both byte orders, and compares with godbus's decoding;
// other signatures are left to godbus.
func TestFastReply(t *testing.T) {
	bodies := [][]any{
		nil,
		{uint32(62)},
		{int32(-7)},
		{true},
		{"Row 19999 ünïcode"},
		{[]uint32{1 << 25, 3}},
		{[]uint32{}},
		{extents{X: -5, Y: minInt32, W: 1280, H: 34}},
		{ref{Name: ":1.42", Path: "/org/a11y/atspi/accessible/7"}},
		{dbus.MakeVariant("Name")},
		{dbus.MakeVariant(dbus.ObjectPath("/a/b"))},
		{dbus.MakeVariant(int32(-3))},
		{dbus.MakeVariant(uint32(3))},
		{dbus.MakeVariant(false)},
		{dbus.MakeVariant(0.25)},
		{map[string]dbus.Variant{"Name": dbus.MakeVariant("Row 3"), "ChildCount": dbus.MakeVariant(int32(4)),
			"Parent": dbus.MakeVariant(ref{Name: ":1.42", Path: "/org/a11y/atspi/accessible/7"}), "Locale": dbus.MakeVariant(""),
			"Attributes": dbus.MakeVariant(map[string]string{"toolkit": "gtk", "x": ""})}},
		{[]ref{{":1.2", "/org/a11y/atspi/accessible/9"}, {":1.2", "/a"}}},
		{[]ref{}},
		{map[string]dbus.Variant{}},
		{[]relation{{Type: relationLabelledBy, Targets: []ref{{":1.2", "/org/a11y/atspi/accessible/9"}, {":1.2", "/a"}}}, {Type: 3}}},
		{[]relation{}},
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, body := range bodies {
			for _, typ := range []dbus.Type{dbus.TypeMethodReply, dbus.TypeError} {
				msg := &dbus.Message{Type: typ, Headers: map[dbus.HeaderField]dbus.Variant{
					dbus.FieldReplySerial: dbus.MakeVariant(uint32(4242)),
					dbus.FieldSender:      dbus.MakeVariant(":1.9"),
				}, Body: body}
				if typ == dbus.TypeError {
					msg.Headers[dbus.FieldErrorName] = dbus.MakeVariant("org.freedesktop.DBus.Error.UnknownMethod")
				}
				if len(body) > 0 {
					msg.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(body...))
				}
				var buf bytes.Buffer
				if err := msg.EncodeTo(&buf, order); err != nil {
					t.Fatal(err)
				}
				b := buf.Bytes()
				order.PutUint32(b[8:12], 1)
				want, err := dbus.DecodeMessage(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				got, ok := fastReply(b, order)
				if !ok || got.serial != 4242 || !reflect.DeepEqual(got.body, want.Body) && len(body) > 0 {
					t.Errorf("%v %v: fastReply %+v, %v; godbus decodes %#v", order, body, got, ok, want.Body)
				}
				if name, _ := want.Headers[dbus.FieldErrorName].Value().(string); got.errName != name {
					t.Errorf("%v %v: error name %q, want %q", order, body, got.errName, name)
				}
				if _, ok := fastReply(b[:len(b)-1], order); ok && len(body) > 0 {
					t.Errorf("%v %v: a message cut short decoded", order, body)
				}
			}
		}
	}
	var buf bytes.Buffer
	msg := &dbus.Message{Type: dbus.TypeMethodReply, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldReplySerial: dbus.MakeVariant(uint32(1)),
		dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf(map[string]dbus.Variant{})),
	}, Body: []any{map[string]dbus.Variant{"Name": dbus.MakeVariant("x"), "Attrs": dbus.MakeVariant([]string{"a"})}}}
	if err := msg.EncodeTo(&buf, binary.LittleEndian); err != nil {
		t.Fatal(err)
	}
	if _, ok := fastReply(buf.Bytes(), binary.LittleEndian); ok {
		t.Errorf("fastReply decoded an a{sv} reply holding an array, which it leaves to godbus")
	}
	buf.Reset()
	msg.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(dbus.Variant{}))
	msg.Body = []any{dbus.MakeVariant([]string{"a"})}
	if err := msg.EncodeTo(&buf, binary.LittleEndian); err != nil {
		t.Fatal(err)
	}
	if _, ok := fastReply(buf.Bytes(), binary.LittleEndian); ok {
		t.Errorf("fastReply decoded a variant holding an array, which it leaves to godbus")
	}
}

// relation is one entry of a GetRelationSet reply.
type relation struct {
	Type    uint32
	Targets []ref
}

// TestEncodeCall encodes the walk's calls and has godbus decode them.
func TestEncodeCall(t *testing.T) {
	for _, args := range [][]any{nil, {uint32(0)}, {int32(0), int32(-1)}, {"org.a11y.atspi.Accessible", "Name"}, {int32(5), int32(7), uint32(0)}, {"x", []string{}, ""}} {
		b, err := encodeCall("/org/a11y/atspi/accessible/12", "org.a11y.atspi.Component", "GetExtents", args)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(b[8:12], 9)
		msg, err := dbus.DecodeMessage(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%v: godbus cannot decode the call: %v", args, err)
		}
		if msg.Type != dbus.TypeMethodCall || msg.Headers[dbus.FieldPath].Value() != dbus.ObjectPath("/org/a11y/atspi/accessible/12") ||
			msg.Headers[dbus.FieldMember].Value() != "GetExtents" || msg.Headers[dbus.FieldInterface].Value() != "org.a11y.atspi.Component" ||
			!reflect.DeepEqual(msg.Body, args) && len(args) > 0 {
			t.Errorf("%v: decoded as %+v", args, msg)
		}
	}
}

// TestRawItems decodes a Cache.GetItems reply as godbus encodes it and
// compares with godbus's decoding.
func TestRawItems(t *testing.T) {
	items := []cacheItem{
		{Obj: ref{":1.2", "/org/a11y/atspi/accessible/root"}, App: ref{":1.2", "/org/a11y/atspi/accessible/root"}, Parent: ref{"", "/org/a11y/atspi/null"},
			Index: -1, Count: 1, Ifaces: []string{"org.a11y.atspi.Accessible", "org.a11y.atspi.Application"}, Name: "form.py", Role: 75, States: []uint32{0, 0}},
		{Obj: ref{":1.2", "/org/a11y/atspi/accessible/1"}, App: ref{":1.2", "/org/a11y/atspi/accessible/root"}, Parent: ref{":1.2", "/org/a11y/atspi/accessible/root"},
			Index: 0, Count: 3, Ifaces: nil, Name: "Förm", Role: 23, Desc: "a window", States: []uint32{1 << 25, 1}},
		{Obj: ref{":1.2", "/org/a11y/atspi/accessible/2"}, App: ref{":1.2", "/org/a11y/atspi/accessible/root"}, Parent: ref{":1.2", "/org/a11y/atspi/accessible/1"},
			Index: 2, Count: 0, Ifaces: []string{"org.a11y.atspi.Component"}, Name: "", Role: 43, States: nil},
	}
	msg := &dbus.Message{Type: dbus.TypeMethodReply, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldReplySerial: dbus.MakeVariant(uint32(3)),
		dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf(items)),
	}, Body: []any{items}}
	if sig := dbus.SignatureOf(items).String(); sig != cacheItemsSig {
		t.Fatalf("cacheItem's signature is %s, want %s", sig, cacheItemsSig)
	}
	var buf bytes.Buffer
	if err := msg.EncodeTo(&buf, binary.LittleEndian); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	binary.LittleEndian.PutUint32(b[8:12], 1)
	r, ok := fastReply(b, binary.LittleEndian)
	if !ok {
		t.Fatal("fastReply does not take a GetItems reply")
	}
	raw, ok := r.body[0].(rawItems)
	if !ok {
		t.Fatalf("body %#v", r.body)
	}
	got, ok := raw.items()
	want := append([]cacheItem(nil), items...)
	want[2].States = []uint32(nil)
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("items decoded as\n%+v\nwant\n%+v", got, want)
	}
	if _, ok := (rawItems{wire{b: b[:len(b)-3], order: binary.LittleEndian, pos: raw.w.pos}}).items(); ok {
		t.Errorf("a reply cut short decoded")
	}
}

// fakePeer is an application's peer-to-peer server that answers GetRole
// with 7 and never answers Hang; got receives every call it reads.
func fakePeer(t *testing.T) (addr string, got chan *dbus.Message) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "peer")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	got = make(chan *dbus.Message, 100)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		r := bufio.NewReader(nc)
		if _, err := r.ReadString('\n'); err != nil { // \0AUTH EXTERNAL ...
			return
		}
		_, _ = io.WriteString(nc, "OK 0123456789abcdef0123456789abcdef\r\n")
		if _, err := r.ReadString('\n'); err != nil { // BEGIN
			return
		}
		for {
			msg, err := dbus.DecodeMessage(r)
			if err != nil {
				return
			}
			got <- msg
			if member, _ := msg.Headers[dbus.FieldMember].Value().(string); member != "GetRole" {
				continue
			}
			rep := &dbus.Message{Type: dbus.TypeMethodReply, Headers: map[dbus.HeaderField]dbus.Variant{
				dbus.FieldReplySerial: dbus.MakeVariant(msg.Serial()),
				dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf(uint32(0))),
			}, Body: []any{uint32(7)}}
			var buf bytes.Buffer
			if err := rep.EncodeTo(&buf, binary.LittleEndian); err != nil {
				return
			}
			b := buf.Bytes()
			binary.LittleEndian.PutUint32(b[8:12], 1)
			if _, err := nc.Write(b); err != nil {
				return
			}
		}
	}()
	return "unix:path=" + path, got
}

// TestDirectHoldAndForget: calls made while held reach the application
// only once released, all of them, and are answered; calls given up on no
// longer count as out.
func TestDirectHoldAndForget(t *testing.T) {
	addr, got := fakePeer(t)
	d, err := dialDirect(addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.hold()
	var calls []*dbus.Call
	for range 3 {
		calls = append(calls, d.call(rootPath, ifAccessible, "GetRole"))
	}
	select {
	case m := <-got:
		t.Fatalf("a held call reached the application: %v", m)
	case <-time.After(100 * time.Millisecond):
	}
	d.release()
	for i, c := range calls {
		select {
		case <-c.Done:
			if r, ok := replyUint32(c); !ok || r != 7 {
				t.Errorf("call %d: reply %v, %v (err %v), want 7", i, r, ok, c.Err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("call %d was not answered after release", i)
		}
	}
	var hung []*dbus.Call
	for range 20 {
		hung = append(hung, d.call(rootPath, ifAccessible, "Hang"))
	}
	d.mu.Lock()
	out := len(d.pending)
	d.mu.Unlock()
	if out != 20 {
		t.Fatalf("%d calls out, want the 20 unanswered", out)
	}
	peer{d: d}.forget(hung...)
	d.mu.Lock()
	out = len(d.pending)
	d.mu.Unlock()
	if out != 0 {
		t.Errorf("%d calls still out after forget, want 0", out)
	}
	if c := d.call(rootPath, ifAccessible, "GetRole"); wait(context.Background(), c, 5*time.Second) != nil {
		t.Errorf("a call after forget: %v", c.Err)
	}
}
