package mcpserver

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// portableSchema rewrites a generated input schema so that clients which
// accept one `type` per property (Gemini and others) take it: a type list
// such as ["null","array"], which jsonschema.For gives pointer and slice
// fields, becomes the one non-null type. Such a property stays optional by
// not being required; a client omits it instead of sending null. It panics
// (at start, like every registration mistake) on a schema it cannot make
// portable: several non-null types, or a $ref.
func portableSchema(tool string, s *jsonschema.Schema) {
	var walk func(path string, s *jsonschema.Schema)
	walk = func(path string, s *jsonschema.Schema) {
		if s == nil {
			return
		}
		if s.Ref != "" || s.DynamicRef != "" || len(s.Defs) > 0 || len(s.Definitions) > 0 {
			panic(fmt.Sprintf("tool %s: %s uses $ref/$defs, which some MCP clients reject; use a plain struct", tool, path))
		}
		if len(s.Types) > 0 {
			nonNull := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
			if len(nonNull) != 1 {
				panic(fmt.Sprintf("tool %s: %s has types %v; give it one type", tool, path, s.Types))
			}
			s.Type, s.Types = nonNull[0], nil
		}
		for name, p := range s.Properties {
			walk(path+"."+name, p)
		}
		walk(path+"[]", s.Items)
		walk(path+"{}", s.AdditionalProperties)
		for i, sub := range s.PrefixItems {
			walk(fmt.Sprintf("%s[%d]", path, i), sub)
		}
	}
	walk("input", s)
}
