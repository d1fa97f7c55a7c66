package safety

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/secret"
)

// DefaultAuditSize is how many entries an Audit keeps when none is given.
const DefaultAuditSize = 1000

// AuditEntry is one recorded tool call.
type AuditEntry struct {
	// Seq numbers entries from 1 in the order they were recorded.
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	Tool string    `json:"tool"`
	// Session is the record id of the MCP session that made the call ("" when
	// unknown): a per-session server shows a session its own entries only.
	Session string `json:"session,omitempty"`
	// Args are the call's arguments as JSON with every text value redacted to
	// its length ("<redacted 12 chars>").
	Args json.RawMessage `json:"args,omitempty"`
	// Result is a short text of what happened; Error is set when the call failed.
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	Millis int64  `json:"ms"`
}

// Audit is a ring buffer of the last N tool calls. It is safe for concurrent use.
type Audit struct {
	mu      sync.Mutex
	entries []AuditEntry // ring storage, len == cap once full
	next    int          // index the next entry is written to
	full    bool
	seq     uint64
	scrub   *secret.Scrubber
}

// NewAudit returns a ring buffer keeping the last size entries
// (DefaultAuditSize when size <= 0). The secrets scrub knows (API keys,
// tokens), at the time of each Record, are replaced by secret.Marker in every
// entry it keeps; nil scrubs nothing.
func NewAudit(size int, scrub *secret.Scrubber) *Audit {
	if size <= 0 {
		size = DefaultAuditSize
	}
	return &Audit{entries: make([]AuditEntry, size), scrub: scrub}
}

// Record adds an entry. args is any JSON-marshalable value (typically the
// tool's argument struct); its free text is masked with MaskArgs before it is stored.
// Entry fields Seq and Args are set by Record; a zero Time is set to now.
func (a *Audit) Record(e AuditEntry, args any) {
	if a == nil {
		return
	}
	e.Args = a.scrub.Bytes(MaskArgs(args))
	e.Tool, e.Result, e.Error = a.scrub.String(e.Tool), a.scrub.String(e.Result), a.scrub.String(e.Error)
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	e.Seq = a.seq
	a.entries[a.next] = e
	a.next++
	if a.next == len(a.entries) {
		a.next, a.full = 0, true
	}
}

// Len returns how many entries are held.
func (a *Audit) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.full {
		return len(a.entries)
	}
	return a.next
}

// Snapshot returns a copy of the held entries, oldest first.
func (a *Audit) Snapshot() []AuditEntry {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.full {
		return append([]AuditEntry(nil), a.entries[:a.next]...)
	}
	out := make([]AuditEntry, 0, len(a.entries))
	out = append(out, a.entries[a.next:]...)
	return append(out, a.entries[:a.next]...)
}

// textFields are argument names whose string values are always free text.
var textFields = map[string]bool{"text": true, "template": true, "task": true, "value": true, "content": true}

// maxPlainString is the longest string kept verbatim in a field not known to be
// text; longer strings are redacted too.
const maxPlainString = 64

// MaskArgs marshals args to JSON and masks free text, keeping only its length
// (MaskText), so what the user typed is not kept in the audit or the session
// record: every string under a text-like field (text, template, task, value,
// content), and any other string longer than 64 characters. This is not
// secret scrubbing (see internal/secret). Names such as keys, buttons and
// directions stay readable. A value that cannot be marshaled becomes a JSON
// string describing the failure.
func MaskArgs(args any) json.RawMessage {
	if args == nil {
		return nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return marshalPlain(fmt.Sprintf("<arguments not recordable: %v>", err))
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return marshalPlain(maskValue(v, false))
}

// marshalPlain marshals v without escaping <, > and & (redaction markers stay readable).
func marshalPlain(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func maskValue(v any, text bool) any {
	switch x := v.(type) {
	case string:
		if text || utf8.RuneCountInString(x) > maxPlainString {
			return MaskText(x)
		}
		return x
	case map[string]any:
		for k, val := range x {
			x[k] = maskValue(val, text || textFields[k])
		}
		return x
	case []any:
		for i, val := range x {
			x[i] = maskValue(val, text)
		}
		return x
	}
	return v
}

// Redacted returns "<redacted N chars>" for s, N counted in characters (runes).
func MaskText(s string) string {
	return fmt.Sprintf("<redacted %d chars>", utf8.RuneCountInString(s))
}
