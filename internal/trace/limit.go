package trace

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Caps on what one model call adds to a run record: each of its files
// (request, response, parsed decision) and its decision in events.jsonl.
// A provider response can be 32 MiB (llm.MaxResponseBytes); without these a
// few runaway answers would fill the runs folder.
const (
	// MaxRecordFileBytes caps one step file.
	MaxRecordFileBytes = 1 << 20
	// MaxRecordLineBytes caps the decision carried by one events.jsonl line.
	MaxRecordLineBytes = 256 << 10
	// maxRecordString caps one JSON string in a clipped body.
	maxRecordString = 16 << 10
	// clipHead is how much of an unclippable body is kept.
	clipHead = 16 << 10
)

// clipRecord returns b unchanged when it has at most max bytes. Otherwise,
// for JSON, it shortens every long string (keeping the structure readable for
// the report); when that is not enough, or b is not JSON, it returns a small
// JSON object saying what was omitted, with the first bytes of b.
func clipRecord(b []byte, max int) []byte {
	if len(b) <= max {
		return b
	}
	var v any
	if json.Unmarshal(b, &v) == nil {
		if c, err := json.Marshal(clipStrings(v)); err == nil && len(c) <= max {
			return c
		}
	}
	head := b[:min(len(b), clipHead)]
	for len(head) > 0 && !utf8.Valid(head) {
		head = head[:len(head)-1]
	}
	out, _ := json.Marshal(map[string]any{
		"omitted": fmt.Sprintf("%d bytes, over the record's cap of %d bytes per entry; the first %d follow", len(b), max, len(head)),
		"head":    string(head),
	})
	return out
}

// clipStrings shortens every string in a decoded JSON value to maxRecordString bytes.
func clipStrings(v any) any {
	switch x := v.(type) {
	case string:
		if len(x) <= maxRecordString {
			return x
		}
		cut := x[:maxRecordString]
		for len(cut) > 0 && !utf8.ValidString(cut) {
			cut = cut[:len(cut)-1]
		}
		return fmt.Sprintf("%s… [%d more bytes not recorded]", cut, len(x)-len(cut))
	case []any:
		for i := range x {
			x[i] = clipStrings(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = clipStrings(x[k])
		}
	}
	return v
}
