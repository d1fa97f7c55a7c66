package atspi

import (
	"context"
	"strconv"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/uitree"
)

// maxValue bounds a text field's value in a snapshot, in runes.
const maxValue = 500

// op is one extra call for a returned element.
type op struct {
	elem int
	kind int
}

const (
	opText = iota
	opValue
	opRelations
)

// extras reads what only some elements need, all calls pipelined per
// application: the text of text fields (never of a protected one), the
// current value of sliders and spin buttons, and the labelled-by relation of
// unnamed elements, whose target names them. (An object walked rather than
// read from a cache has no interface list: the call is made and may fail.)
func (w *walker) extras(ctx context.Context) {
	byPeer := map[*tree][]op{}
	for i, e := range w.snap.Elements {
		n, t := w.nodes[i], w.trees[i]
		switch {
		case e.Role == desktop.RoleTextbox && !e.States.Protected && (n.ifaces&ifText != 0 || n.ifaces == 0):
			byPeer[t] = append(byPeer[t], op{i, opText})
		case (e.Role == desktop.RoleSlider || e.Role == desktop.RoleSpinButton || e.Role == desktop.RoleProgressBar) && (n.ifaces&ifValue != 0 || n.ifaces == 0):
			byPeer[t] = append(byPeer[t], op{i, opValue})
		}
		if e.Name == "" && (uitree.Interactive(e.Role) || e.Role == desktop.RoleList || e.Role == desktop.RoleTree || e.Role == desktop.RoleTable) {
			byPeer[t] = append(byPeer[t], op{i, opRelations})
		}
	}
	for t, ops := range byPeer {
		var labels []labelRef
		err := pipeline(ctx, len(ops), inflight, w.c.o.CallTimeout, func(ctx context.Context, i int) *dbus.Call {
			n := w.nodes[ops[i].elem]
			switch ops[i].kind {
			case opText:
				return t.a.p.call(ctx, n.path, ifaceText, "GetText", int32(0), int32(-1))
			case opValue:
				return t.a.p.call(ctx, n.path, ifaceProps, "Get", ifaceValue, "CurrentValue")
			}
			return t.a.p.call(ctx, n.path, ifAccessible, "GetRelationSet")
		}, func(i int, call *dbus.Call) error {
			if call.Err == nil {
				if l, ok := w.apply(ops[i], call); ok {
					labels = append(labels, l)
				}
			}
			return nil
		})
		if err != nil {
			w.stop(err)
		}
		w.nameFromRelations(ctx, t, labels)
	}
}

// labelRef is an element whose labelled-by relation points at path.
type labelRef struct {
	elem int
	path dbus.ObjectPath
}

// apply stores one extra reply; a relation set gives the labelled-by target.
func (w *walker) apply(o op, call *dbus.Call) (labelRef, bool) {
	e := &w.snap.Elements[o.elem]
	switch o.kind {
	case opText:
		var s string
		if call.Store(&s) == nil {
			if r := []rune(s); len(r) > maxValue {
				s = string(r[:maxValue]) + "…"
			}
			e.Value = s
		}
	case opValue:
		var v dbus.Variant
		if call.Store(&v) == nil {
			if f, ok := v.Value().(float64); ok {
				e.Value = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
	case opRelations:
		var rels []struct {
			Type    uint32
			Targets []ref
		}
		if call.Store(&rels) == nil {
			for _, r := range rels {
				if r.Type == relationLabelledBy && len(r.Targets) > 0 {
					return labelRef{o.elem, r.Targets[0].Path}, true
				}
			}
		}
	}
	return labelRef{}, false
}

// nameFromRelations names elements after their labelled-by targets: from the
// tree when it holds the target, else by asking for its name.
func (w *walker) nameFromRelations(ctx context.Context, t *tree, labels []labelRef) {
	var ask []labelRef
	for _, l := range labels {
		if n, ok := t.nodes[l.path]; ok && n.name != "" {
			w.snap.Elements[l.elem].Name, w.snap.Elements[l.elem].NameFrom = n.name, desktop.NameFromRelation
		} else if !ok {
			ask = append(ask, l)
		}
	}
	err := pipeline(ctx, len(ask), inflight, w.c.o.CallTimeout, func(ctx context.Context, i int) *dbus.Call {
		return t.a.p.call(ctx, ask[i].path, ifaceProps, "Get", ifAccessible, "Name")
	}, func(i int, call *dbus.Call) error {
		var v dbus.Variant
		if call.Err == nil && call.Store(&v) == nil {
			if s, _ := v.Value().(string); s != "" {
				w.snap.Elements[ask[i].elem].Name, w.snap.Elements[ask[i].elem].NameFrom = s, desktop.NameFromRelation
			}
		}
		return nil
	})
	if err != nil {
		w.stop(err)
	}
}
