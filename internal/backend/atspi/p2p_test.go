package atspi

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

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
	}, Body: []any{map[string]dbus.Variant{"Name": dbus.MakeVariant("x")}}}
	if err := msg.EncodeTo(&buf, binary.LittleEndian); err != nil {
		t.Fatal(err)
	}
	if _, ok := fastReply(buf.Bytes(), binary.LittleEndian); ok {
		t.Errorf("fastReply decoded an a{sv} reply, which it leaves to godbus")
	}
}
