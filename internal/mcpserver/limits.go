package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/guiagent/guiagent/internal/flow"
)

// Argument caps. Every string and array argument of every tool carries one in
// its input schema (maxLength in characters, or an enum; maxItems), so a client can read
// it and the SDK refuses a larger value, with an error naming the property
// and the cap, before the tool does any work. Messages are also bounded as a
// whole: MaxStdioMessageBytes over stdio, HTTPOptions.MaxBodyBytes over HTTP.
const (
	// MaxTypeChars caps gui_type's text.
	MaxTypeChars = 100_000
	// MaxClipboardChars caps the text gui_clipboard sets.
	MaxClipboardChars = 4 << 20
	// MaxTaskChars caps gui_execute_task's task.
	MaxTaskChars = 32 << 10
	// MaxTemplateBytes caps gui_find_image's decoded template file; its
	// pixels are capped by the display image it is matched against.
	MaxTemplateBytes = 4 << 20
	// MaxDescriptionChars caps a description in words for the vision model
	// (target, question, assertion, condition).
	MaxDescriptionChars = 4096
	// maxNameChars caps every other string (display ids, spaces, key names).
	maxNameChars = 256
	// maxListItems caps every array (keys, modifiers).
	maxListItems = 32
)

// dataURLPrefix allows for a "data:image/png;base64," before a template.
const dataURLPrefix = 64

// argCaps are the caps of the string arguments larger than maxNameChars, by
// tool and property.
var argCaps = map[string]map[string]int{
	"gui_clipboard":    {"text": MaxClipboardChars},
	"gui_execute_task": {"task": MaxTaskChars},
	"gui_run_flow":     {"yaml": flow.MaxBytes},
	"gui_find_image":   {"template": base64.StdEncoding.EncodedLen(MaxTemplateBytes) + dataURLPrefix},
	"gui_type":         {"text": MaxTypeChars, "target": MaxDescriptionChars},
	"gui_locate":       {"target": MaxDescriptionChars},
	"gui_find_text":    {"text": MaxDescriptionChars},
	"gui_query":        {"question": MaxDescriptionChars},
	"gui_assert":       {"assertion": MaxDescriptionChars},
	"gui_wait_for":     {"condition": MaxDescriptionChars},
	"gui_click":        {"target": MaxDescriptionChars},
	"gui_double_click": {"target": MaxDescriptionChars},
	"gui_move":         {"target": MaxDescriptionChars},
	"gui_scroll":       {"target": MaxDescriptionChars},
	"gui_mouse_down":   {"target": MaxDescriptionChars},
	"gui_drag":         {"from_target": MaxDescriptionChars, "to_target": MaxDescriptionChars},
}

// capArguments sets maxLength on every string property of a tool's input
// schema (and of array items) and maxItems on every array, keeping a cap the
// tool set itself.
func capArguments(tool string, s *jsonschema.Schema) {
	for name, p := range s.Properties {
		switch {
		case p.Type == "string":
			if p.MaxLength == nil && p.Enum == nil { // an enum caps it already
				n, ok := argCaps[tool][name]
				if !ok {
					n = maxNameChars
				}
				p.MaxLength = &n
			}
		case p.Type == "array" || slices.Contains(p.Types, "array"):
			if p.MaxItems == nil {
				p.MaxItems = new(maxListItems)
			}
			if p.Items != nil && p.Items.Type == "string" && p.Items.MaxLength == nil {
				p.Items.MaxLength = new(maxNameChars)
			}
		}
	}
	for name := range argCaps[tool] {
		if _, ok := s.Properties[name]; !ok {
			panic(fmt.Sprintf("tool %s: argCaps names a property %s it does not have", tool, name))
		}
	}
}

// arguments are the properties a tool's input schema names. The schema a
// client reads leaves out additionalProperties: false (23 tools x 30 bytes of
// tools/list); the server's instructions say once that an unknown argument is
// refused, and check refuses it before the tool does any work.
type arguments struct {
	names []string // sorted
}

// knownArguments takes the names of s's properties and drops its
// additionalProperties (see arguments).
func knownArguments(s *jsonschema.Schema) arguments {
	a := arguments{names: slices.Sorted(maps.Keys(s.Properties))}
	s.AdditionalProperties = nil
	return a
}

// check refuses raw arguments that name a property the tool does not have.
func (a arguments) check(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil // not an object: the schema's validation has refused it already
	}
	var unknown []string
	for k := range m {
		if _, found := slices.BinarySearch(a.names, k); !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("validating \"arguments\": unknown argument %s; this tool takes %s",
		quoteAll(unknown), strings.Join(a.names, ", "))
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
