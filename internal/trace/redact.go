package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Redacted replaces secret values in everything the recorder writes.
const Redacted = "[REDACTED]"

// minSecretLen is the shortest string treated as a secret to scrub; shorter
// values would blank out ordinary words.
const minSecretLen = 4

// secretField reports whether a configuration field name holds a credential:
// names ending in key, token, secret, password, passwd, passphrase,
// credential(s), or naming an authorization header or cookie. Plurals such as
// "max_tokens" or "blocked_hotkeys" are counters and lists, not credentials.
func secretField(name string) bool {
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

// RedactConfig returns config as indented JSON with the value of every field
// named like a credential (see secretField) replaced by Redacted, and the
// string values it removed, so callers can also scrub them from other output.
func RedactConfig(config any) (redacted []byte, secrets []string, err error) {
	if config == nil {
		return []byte("null"), nil, nil
	}
	raw, err := json.Marshal(config)
	if err != nil {
		return nil, nil, fmt.Errorf("trace: config is not JSON-serializable (%w); pass a struct or map of plain values", err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("trace: config JSON does not decode: %w", err)
	}
	v = redactValue(v, false, &secrets)
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("trace: config JSON does not encode: %w", err)
	}
	return out, secrets, nil
}

// redactValue walks a decoded JSON value; under is set below a credential field.
func redactValue(v any, under bool, secrets *[]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = redactValue(e, under || secretField(k), secrets)
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
		if len(x) >= minSecretLen {
			*secrets = append(*secrets, x)
		}
		return Redacted
	case nil, bool:
		return x
	default: // numbers under a credential field
		if under {
			return Redacted
		}
		return x
	}
}

// scrubber removes known secret strings (and their JSON-escaped forms) from output.
type scrubber struct {
	needles [][]byte
	r       *strings.Replacer
}

func newScrubber(secrets []string) *scrubber {
	s := &scrubber{}
	seen := map[string]bool{}
	var pairs []string
	add := func(v string) {
		if len(v) < minSecretLen || seen[v] {
			return
		}
		seen[v] = true
		s.needles = append(s.needles, []byte(v))
		pairs = append(pairs, v, Redacted)
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

// bytes returns b with every secret replaced; b itself when it holds none.
func (s *scrubber) bytes(b []byte) []byte {
	if s == nil || s.r == nil {
		return b
	}
	for _, n := range s.needles {
		if bytes.Contains(b, n) {
			return []byte(s.r.Replace(string(b)))
		}
	}
	return b
}

// string returns v with every secret replaced.
func (s *scrubber) string(v string) string {
	if s == nil || s.r == nil {
		return v
	}
	return s.r.Replace(v)
}
