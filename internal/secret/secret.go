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
	"strings"
)

// Marker replaces every secret value wherever guiagent writes it.
const Marker = "[REDACTED]"

// MinLen is the shortest string treated as a secret to scrub; shorter values
// would blank out ordinary words.
const MinLen = 4

// Scrubber replaces known secret strings, and their JSON-escaped forms, by
// Marker. The zero value and a nil *Scrubber scrub nothing. It is immutable
// and safe for concurrent use.
type Scrubber struct {
	needles [][]byte
	r       *strings.Replacer
}

// NewScrubber returns a scrubber of secrets; values shorter than MinLen and
// empty strings are ignored.
func NewScrubber(secrets ...string) *Scrubber {
	s := &Scrubber{}
	seen := map[string]bool{}
	var pairs []string
	add := func(v string) {
		if len(v) < MinLen || seen[v] {
			return
		}
		seen[v] = true
		s.needles = append(s.needles, []byte(v))
		pairs = append(pairs, v, Marker)
	}
	for _, sec := range secrets {
		add(sec)
		if q, err := json.Marshal(sec); err == nil {
			add(string(q[1 : len(q)-1]))
		}
	}
	if len(pairs) > 0 {
		s.r = strings.NewReplacer(pairs...)
	}
	return s
}

// Empty reports whether s scrubs nothing.
func (s *Scrubber) Empty() bool { return s == nil || s.r == nil }

// Bytes returns b with every secret replaced; b itself when it holds none.
func (s *Scrubber) Bytes(b []byte) []byte {
	if s.Empty() {
		return b
	}
	for _, n := range s.needles {
		if bytes.Contains(b, n) {
			return []byte(s.r.Replace(string(b)))
		}
	}
	return b
}

// String returns v with every secret replaced.
func (s *Scrubber) String(v string) string {
	if s.Empty() {
		return v
	}
	return s.r.Replace(v)
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

// Writer returns w with every secret replaced in what is written through it,
// or w itself when s scrubs nothing. A secret split across two Write calls is
// not seen, so use it where each Write carries a whole record (log/slog
// handlers write one record per call).
func (s *Scrubber) Writer(w io.Writer) io.Writer {
	if s.Empty() {
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
