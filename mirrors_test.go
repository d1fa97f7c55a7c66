package guiagent

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
)

// fill sets every exported field reachable from v to a value that is not
// zero (one element per slice, pointers allocated), so a field a mirror
// drops shows in what comes out. Types with their own JSON form keep their
// zero value but for geom points, which are plain.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		if _, ok := v.Addr().Interface().(json.Marshaler); ok {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", *n))
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Bool:
		v.SetBool(true)
	}
}

// paths lists the JSON paths of the values in a decoded JSON document.
func paths(prefix string, v any, out map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			paths(prefix+"."+k, e, out)
		}
	case []any:
		for _, e := range x {
			paths(prefix+"[]", e, out)
		}
	default:
		out[prefix] = x
	}
}

// TestResultMirrorsTheTool fails when gui_execute_task's result (agent.Result)
// gains a field the public Result, Step, StepAction or Usage does not carry,
// as tailscale's TestPrefsEqual does for its prefs: every field of a filled
// agent.Result must come out of Execute's conversion with its value.
func TestResultMirrorsTheTool(t *testing.T) {
	var in agent.Result
	n := 0
	fill(reflect.ValueOf(&in).Elem(), &n)
	tool, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := publicResult(in)
	if err != nil {
		t.Fatal(err)
	}
	back, err := json.Marshal(pub)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(tool, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(back, &b); err != nil {
		t.Fatal(err)
	}
	want, got := map[string]any{}, map[string]any{}
	paths("result", a, want)
	paths("result", b, got)
	var missing []string
	for p, v := range want {
		if !reflect.DeepEqual(got[p], v) {
			missing = append(missing, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			missing = append(missing, p+" (only in the public Result)")
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		t.Errorf("%s: gui_execute_task's result and the public Result differ: add the field to Result, Step, StepAction or Usage (task.go)", p)
	}
	if len(want) < 30 {
		t.Fatalf("the filled result has only %d values: fill is not reaching the fields", len(want))
	}
}

// TestOptionsMirrorConfig fails when a configuration knob has no Options
// field (and no reason in notOptions), when an Options field is set by no
// knob (and is not in optionsOnly), and when a value does not survive
// Options.config and fromConfig, so LoadOptions and New carry every knob.
func TestOptionsMirrorConfig(t *testing.T) {
	ot := reflect.TypeOf(Options{})
	covered := map[string]bool{}
	for _, k := range config.Knobs {
		_, _, ok := optionField(reflect.ValueOf(Options{}), k)
		name := k.Name
		if m, renamed := optionFields[k.Name]; renamed {
			name = m.field
		}
		switch {
		case !ok && notOptions[k.Name] == "":
			t.Errorf("knob %s (%s) has no Options field: add one (options.go), or a reason to notOptions", k.Name, k.Env)
		case ok && notOptions[k.Name] != "":
			t.Errorf("knob %s has an Options field and is in notOptions", k.Name)
		case ok:
			covered[name] = true
		}
	}
	for i := 0; i < ot.NumField(); i++ {
		name := ot.Field(i).Name
		if !covered[name] && optionsOnly[name] == "" {
			t.Errorf("Options.%s is set by no knob: map it in optionFields, or give the reason in optionsOnly", name)
		}
	}

	// A value in every mirrored field survives the trip through Config.
	c := config.Default()
	c.RunsDir, c.StateDir, c.XAuthority, c.Sources = "/r", "/s", "/x", config.Sources{}
	set := map[string]any{}
	for _, k := range config.Knobs {
		if _, _, ok := optionField(reflect.ValueOf(Options{}), k); !ok {
			continue
		}
		f := reflect.ValueOf(&c).Elem().FieldByName(k.Name)
		switch f.Kind() {
		case reflect.String:
			f.SetString("v")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"v"}))
		case reflect.Struct:
			f.Set(reflect.ValueOf(geom.Size{W: 800, H: 600}))
		}
		set[k.Name] = f.Interface()
	}
	o := fromConfig(c)
	cv := reflect.ValueOf(&c).Elem()
	back := config.Default()
	o.applyTo(&back)
	bv := reflect.ValueOf(&back).Elem()
	for name, v := range set {
		if got := bv.FieldByName(name).Interface(); !reflect.DeepEqual(got, v) {
			t.Errorf("Config.%s = %v went through Options as %v", name, v, got)
		}
		if got := cv.FieldByName(name).Interface(); !reflect.DeepEqual(got, v) {
			t.Errorf("fromConfig changed Config.%s", name)
		}
	}
	if o.XAuthority != "/x" || back.XAuthority != "/x" {
		t.Errorf("XAuthority went through Options as %q, %q", o.XAuthority, back.XAuthority)
	}
}
