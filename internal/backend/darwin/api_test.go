package darwin

import (
	"reflect"
	"testing"

	"github.com/ebitengine/purego"
)

// Every framework function signature must be one purego can call: it checks
// argument and result kinds (structs such as CGRect included) when a function
// is registered, so registering each against a dummy address (never called)
// catches a bad signature on any OS rather than as a panic at Start on a Mac.
func TestFrameworkSignaturesAreCallableByPurego(t *testing.T) {
	var a api
	v := reflect.ValueOf(&a).Elem()
	n := 0
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Func {
			continue
		}
		name := v.Type().Field(i).Name
		n++
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: purego rejects the signature %s: %v", name, f.Type(), p)
				}
			}()
			purego.RegisterFunc(f.Addr().Interface(), 1)
		}()
	}
	if n < 50 {
		t.Fatalf("only %d functions checked; the api struct lost its functions?", n)
	}
}
