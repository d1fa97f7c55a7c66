// Package secret keeps credentials (API keys, the HTTP token, the VNC
// password) out of everything guiagent writes: logs, run and session records,
// reports, tool results, progress messages, dashboard responses and provider
// error messages. It has one marker and one scrubber, used by every writer.
//
// Masking the text a user typed (the audit's "<redacted N chars>") is a
// different concern: see safety.MaskText.
package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Marker replaces every secret value wherever guiagent writes it.
const Marker = "[REDACTED]"

// MinLen is the shortest string treated as a secret to scrub; shorter values
// would blank out ordinary words.
const MinLen = 4

// Scrubber replaces known secret strings, and their JSON-escaped forms, by
// Marker. It can learn more secrets (Add) while in use, so one instance can be
// shared by every writer of a process and a key set at run time is scrubbed
// everywhere from the moment it is added. It is safe for concurrent use: each
// Add swaps in a new immutable replacer, so scrubbing never takes a lock. The
// zero value and a nil *Scrubber scrub nothing; a nil one cannot learn. A
// Scrubber must not be copied after first use.
type Scrubber struct {
	mu sync.Mutex // serializes Add
	st atomic.Pointer[scrubState]
}

// scrubState is what a Scrubber knows at one moment; never changed once stored.
type scrubState struct {
	secrets []string // as added (deduplicated), to rebuild from
	needles [][]byte
	r       *strings.Replacer
}

// NewScrubber returns a scrubber of secrets; values shorter than MinLen and
// empty strings are ignored.
func NewScrubber(secrets ...string) *Scrubber {
	s := &Scrubber{}
	s.Add(secrets...)
	return s
}

// Add makes s scrub secrets too, from now on in every caller that holds s;
// values shorter than MinLen, empty strings and values s already knows are
// ignored.
func (s *Scrubber) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.st.Load()
	var known []string
	if old != nil {
		known = old.secrets
	}
	all := slices.Clone(known)
	for _, v := range secrets {
		if len(v) >= MinLen && !slices.Contains(all, v) {
			all = append(all, v)
		}
	}
	if len(all) == len(known) {
		return
	}
	st := &scrubState{secrets: all}
	seen := map[string]bool{}
	var pairs []string
	add := func(v string) {
		if len(v) < MinLen || seen[v] {
			return
		}
		seen[v] = true
		st.needles = append(st.needles, []byte(v))
		pairs = append(pairs, v, Marker)
	}
	for _, sec := range all {
		add(sec)
		if q, err := json.Marshal(sec); err == nil {
			add(string(q[1 : len(q)-1]))
		}
	}
	st.r = strings.NewReplacer(pairs...)
	s.st.Store(st)
}

// state is what s knows now; nil when it knows nothing.
func (s *Scrubber) state() *scrubState {
	if s == nil {
		return nil
	}
	return s.st.Load()
}

// Empty reports whether s scrubs nothing now.
func (s *Scrubber) Empty() bool { return s.state() == nil }

// Bytes returns b with every secret replaced; b itself when it holds none.
// When b is a JSON text, only the contents of its strings are scrubbed: its
// syntax (true, null, numbers, punctuation) stays, so it still decodes
// whatever a secret looks like.
func (s *Scrubber) Bytes(b []byte) []byte {
	st := s.state()
	if st == nil || !st.holds(b) {
		return b
	}
	if isJSON(b) {
		return st.scrubJSON(b)
	}
	return []byte(st.r.Replace(string(b)))
}

// String returns v with every secret replaced, JSON texts as Bytes does.
func (s *Scrubber) String(v string) string {
	st := s.state()
	if st == nil || !st.holds([]byte(v)) {
		return v
	}
	if isJSON([]byte(v)) {
		return string(st.scrubJSON([]byte(v)))
	}
	return st.r.Replace(v)
}

func (st *scrubState) holds(b []byte) bool {
	for _, n := range st.needles {
		if bytes.Contains(b, n) {
			return true
		}
	}
	return false
}

// isJSON reports whether b is one JSON object, array or string.
func isJSON(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[' || t[0] == '"') && json.Valid(b)
}

// scrubJSON replaces secrets inside the string tokens (keys and values) of
// the valid JSON text b, leaving everything else byte for byte.
func (st *scrubState) scrubJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] != '"' {
			out = append(out, b[i])
			i++
			continue
		}
		end := i + 1
		for b[end] != '"' {
			if b[end] == '\\' {
				end++
			}
			end++
		}
		out = append(out, st.scrubJSONString(b[i:end+1])...)
		i = end + 1
	}
	return out
}

// scrubJSONString scrubs one JSON string token, re-encoding it only when a
// secret was replaced (so an escape sequence is never cut in two).
func (st *scrubState) scrubJSONString(tok []byte) []byte {
	var v string
	if json.Unmarshal(tok, &v) != nil {
		return tok
	}
	clean := st.r.Replace(v)
	if clean == v {
		return tok
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(clean) != nil {
		return tok
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// IsCredentialName reports whether a field name holds a credential: names
// ending in key, token, secret, password, passwd, passphrase, credential(s),
// or naming an authorization header or cookie. Plurals such as "max_tokens"
// or "blocked_hotkeys" are counters and lists, not credentials.
func IsCredentialName(name string) bool {
	n := strings.ToLower(name)
	n = strings.NewReplacer("_", "", "-", "", ".", "", " ", "").Replace(n)
	for _, suffix := range []string{"key", "token", "secret", "password", "passwd", "passphrase", "credential", "credentials"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	switch n {
	case "authorization", "auth", "cookie", "bearer":
		return true
	}
	return false
}

// RedactJSON returns v as indented JSON with the value of every field named
// like a credential (IsCredentialName) replaced by Marker, and the string
// values it removed (MinLen or longer), so the caller can scrub them from
// other output too.
func RedactJSON(v any) (redacted []byte, secrets []string, err error) {
	if v == nil {
		return []byte("null"), nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("secret: value is not JSON-serializable (%w); pass a struct or map of plain values", err)
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, nil, fmt.Errorf("secret: JSON does not decode: %w", err)
	}
	tree = redactValue(tree, false, &secrets)
	out, err := json.MarshalIndent(tree, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("secret: JSON does not encode: %w", err)
	}
	return out, secrets, nil
}

// redactValue walks a decoded JSON value; under is set below a credential field.
func redactValue(v any, under bool, secrets *[]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = redactValue(e, under || IsCredentialName(k), secrets)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = redactValue(e, under, secrets)
		}
		return x
	case string:
		if !under || x == "" {
			return x
		}
		if len(x) >= MinLen {
			*secrets = append(*secrets, x)
		}
		return Marker
	case nil, bool:
		return x
	default: // numbers under a credential field
		if under {
			return Marker
		}
		return x
	}
}

// Writer returns w with every secret s knows at the time of each Write
// replaced, or w itself when s is nil. A secret split across two Write calls is
// not seen, so use it where each Write carries a whole record (log/slog
// handlers write one record per call).
func (s *Scrubber) Writer(w io.Writer) io.Writer {
	if s == nil {
		return w
	}
	return scrubWriter{w, s}
}

type scrubWriter struct {
	w io.Writer
	s *Scrubber
}

// Write writes p scrubbed and reports len(p) on success, as io.Writer requires.
func (sw scrubWriter) Write(p []byte) (int, error) {
	if _, err := sw.w.Write(sw.s.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
