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

// job is one call of a window's stream: a candidate's box, or what a
// returned element needs beside it.
type job struct {
	kind int
	cand int             // jobBox, jobDecide: the candidate
	elem int             // the extras: the element (index in snap.Elements)
	path dbus.ObjectPath // jobLabel: the labelled-by target
}

const (
	jobBox       = iota // Component.GetExtents, then decide up to the candidate
	jobDecide           // no call: decide the candidates up to cand
	jobText             // the text of a text field
	jobValue            // the current value of a slider, spin button or progress bar
	jobRelations        // the relation set of an unnamed element
	jobLabel            // the name of its labelled-by target, when the tree lacks it
)

// extraJobs queues what only some of the elements from index from on need:
// the text of text fields (never of a protected one), the current value of
// sliders and spin buttons, and the labelled-by relation of unnamed
// elements, whose target names them. They go out in the same stream as the
// boxes, as soon as an element is returned. (An object walked rather than
// read from a cache has no interface list: the call is made and may fail.)
func (w *walker) extraJobs(from int, push func(job)) {
	for i := from; i < len(w.snap.Elements); i++ {
		e, n := &w.snap.Elements[i], w.nodes[i]
		switch {
		case e.Role == desktop.RoleTextbox && !e.States.Protected && (n.ifaces&ifText != 0 || n.ifaces == 0):
			push(job{kind: jobText, elem: i})
		case (e.Role == desktop.RoleSlider || e.Role == desktop.RoleSpinButton || e.Role == desktop.RoleProgressBar) && (n.ifaces&ifValue != 0 || n.ifaces == 0):
			push(job{kind: jobValue, elem: i})
		}
		if e.Name == "" && (uitree.Interactive(e.Role) || e.Role == desktop.RoleList || e.Role == desktop.RoleTree || e.Role == desktop.RoleTable) {
			push(job{kind: jobRelations, elem: i})
		}
	}
}

// issueExtra sends an extra job's call.
func (w *walker) issueExtra(ctx context.Context, p peer, j *job) *dbus.Call {
	n := w.nodes[j.elem]
	switch j.kind {
	case jobText:
		return p.call(ctx, n.path, ifaceText, "GetText", int32(0), int32(-1))
	case jobValue:
		return p.call(ctx, n.path, ifaceProps, "Get", ifaceValue, "CurrentValue")
	case jobRelations:
		return p.call(ctx, n.path, ifAccessible, "GetRelationSet")
	}
	return p.call(ctx, j.path, ifaceProps, "Get", ifAccessible, "Name")
}

// applyExtra stores an extra job's reply. A labelled-by target names the
// element from the tree when the tree holds it, else a jobLabel asks for
// its name.
func (w *walker) applyExtra(t *tree, j *job, call *dbus.Call, push func(job)) {
	if !replyOK(call) {
		return
	}
	e := &w.snap.Elements[j.elem]
	switch j.kind {
	case jobText:
		if s, ok := call.Body[0].(string); ok {
			if r := []rune(s); len(r) > maxValue {
				s = string(r[:maxValue]) + "…"
			}
			e.Value = s
		}
	case jobValue:
		if v, ok := call.Body[0].(dbus.Variant); ok {
			if f, ok := v.Value().(float64); ok {
				e.Value = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
	case jobRelations:
		target, ok := labelledBy(call)
		if !ok {
			return
		}
		if n, known := t.nodes[target]; !known {
			push(job{kind: jobLabel, elem: j.elem, path: target})
		} else if n.name != "" {
			e.Name, e.NameFrom = n.name, desktop.NameFromRelation
		}
	case jobLabel:
		if v, ok := call.Body[0].(dbus.Variant); ok {
			if s, _ := v.Value().(string); s != "" {
				e.Name, e.NameFrom = s, desktop.NameFromRelation
			}
		}
	}
}

// labelledBy returns the first labelled-by target of a GetRelationSet reply
// (a(ua(so))).
func labelledBy(call *dbus.Call) (dbus.ObjectPath, bool) {
	if rels, ok := call.Body[0].([][]any); ok { // as decoded (fastReply, godbus)
		for _, r := range rels {
			if len(r) != 2 {
				continue
			}
			typ, _ := r[0].(uint32)
			targets, _ := r[1].([][]any)
			if typ == relationLabelledBy && len(targets) > 0 && len(targets[0]) == 2 {
				p, ok := targets[0][1].(dbus.ObjectPath)
				return p, ok
			}
		}
		return "", false
	}
	var rels []struct {
		Type    uint32
		Targets []ref
	}
	if call.Store(&rels) != nil {
		return "", false
	}
	for _, r := range rels {
		if r.Type == relationLabelledBy && len(r.Targets) > 0 {
			return r.Targets[0].Path, true
		}
	}
	return "", false
}
