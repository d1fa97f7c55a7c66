package secret

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

func TestRedactJSON(t *testing.T) {
	type inner struct {
		Password string `json:"password"`
		Tokens   int    `json:"max_tokens"`
	}
	out, secrets, err := RedactJSON(struct {
		APIKey  string `json:"api_key"`
		Token   string
		Nested  inner `json:"nested"`
		Hotkeys []string
		Empty   string `json:"secret"`
	}{"sk-abc", "t0ken-value", inner{"hunter22", 4096}, []string{"ctrl+alt+del"}, ""})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, leaked := range []string{"sk-abc", "t0ken-value", "hunter22"} {
		if strings.Contains(s, leaked) {
			t.Errorf("config still holds %q:\n%s", leaked, s)
		}
	}
	if strings.Count(s, Marker) != 3 {
		t.Errorf("want the three credentials shown as %s:\n%s", Marker, s)
	}
	if !strings.Contains(s, "4096") || !strings.Contains(s, "ctrl+alt+del") || !strings.Contains(s, `"secret": ""`) {
		t.Errorf("redaction removed ordinary or empty fields:\n%s", s)
	}
	if len(secrets) != 3 {
		t.Errorf("secrets = %v", secrets)
	}
	if _, _, err := RedactJSON(func() {}); err == nil || !strings.Contains(err.Error(), "not JSON-serializable") {
		t.Errorf("a func: err = %v", err)
	}
}

func TestScrubber(t *testing.T) {
	sc := NewScrubber(`a"quoted\secret`, "k3y-value", "abc", "")
	if got := sc.String(`{"x":"a\"quoted\\secret"}`); got != `{"x":"[REDACTED]"}` {
		t.Errorf("JSON-escaped secret not scrubbed: %s", got)
	}
	if got := string(sc.Bytes([]byte("key k3y-value and abc"))); got != "key [REDACTED] and abc" {
		t.Errorf("Bytes = %q; want the key replaced and the 3-letter value (too short to be a secret) kept", got)
	}
	clean := []byte("nothing here")
	if got := sc.Bytes(clean); &got[0] != &clean[0] {
		t.Error("Bytes copied a slice that holds no secret")
	}
	var none *Scrubber
	if !none.Empty() || none.String("k3y-value") != "k3y-value" || !NewScrubber("ab").Empty() {
		t.Error("a nil scrubber, or one of only short values, must scrub nothing")
	}
}

func TestIsCredentialName(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "GUI_AGENT_HTTP_TOKEN": true, "vnc-password": true, "Authorization": true, "client_secret": true,
		"max_tokens": false, "blocked_hotkeys": false, "model": false, "keys": false,
	} {
		if got := IsCredentialName(name); got != want {
			t.Errorf("IsCredentialName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestWriterScrubsEachWrite(t *testing.T) {
	var b strings.Builder
	w := NewScrubber("hunter2-pass").Writer(&b)
	line := "level=INFO msg=login password=hunter2-pass\n"
	if n, err := w.Write([]byte(line)); err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(line))
	}
	if got := b.String(); got != "level=INFO msg=login password=[REDACTED]\n" {
		t.Errorf("written %q", got)
	}
	var none *Scrubber
	if none.Writer(&b) != &b {
		t.Error("a nil scrubber should hand back the writer itself")
	}
}

// TestAddReachesEveryHolder: a secret added after a writer was made (a key
// PUT to the settings API) is scrubbed by that writer and by every holder of
// the scrubber, while other goroutines scrub (run with -race).
func TestAddReachesEveryHolder(t *testing.T) {
	const key = "sk-live-0123456789"
	sc := NewScrubber()
	var b strings.Builder
	w := sc.Writer(&b)
	w.Write([]byte("before " + key + "\n"))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				sc.String("text " + key)
			}
		}()
	}
	sc.Add(key, "ab", key)
	wg.Wait()
	w.Write([]byte("after " + key + "\n"))
	if got := b.String(); got != "before "+key+"\nafter [REDACTED]\n" {
		t.Errorf("written %q; want the key kept before Add (not yet known) and replaced after", got)
	}
	if got := sc.String(`{"k":"` + key + `"}`); got != `{"k":"[REDACTED]"}` {
		t.Errorf("String after Add = %q", got)
	}
	if sc.Empty() || len(sc.st.Load().secrets) != 1 {
		t.Errorf("Add kept %v; want the one key (short and repeated values ignored)", sc.st.Load().secrets)
	}
}

// BenchmarkScrubberBytes scrubs a 4 KiB log or result holding no secret (the
// common case) with a shared scrubber of five secrets, while another key is
// added now and then, as the settings API does.
func BenchmarkScrubberBytes(b *testing.B) {
	sc := NewScrubber("sk-one-0123456789", "tok-two-0123456789", "vnc-pass-3", "ground-key-4567", "mem-key-89012")
	line := []byte(strings.Repeat("level=INFO msg=\"clicked at (200,100)\" ", 100))
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%10000 == 0 {
			sc.Add("sk-late-" + strings.Repeat("x", i%7+4))
		}
		sc.Bytes(line)
	}
}

// A secret that is also JSON syntax ("true", "null", a number, "error") is
// scrubbed inside strings only: every JSON text still decodes, and the
// string values that held it no longer do.
func TestScrubbingJSONKeepsItsSyntax(t *testing.T) {
	for _, key := range []string{"true", "null", "1234", "error", `"},{`, `ab\cd`} {
		s := NewScrubber(key)
		doc := map[string]any{"ok": true, "n": nil, "count": 1234, "text": "an error: key=" + key, "list": []any{key, false}}
		b, _ := json.Marshal(doc)
		pretty, _ := json.MarshalIndent(doc, "", "  ")
		for _, in := range [][]byte{b, pretty} {
			out := s.Bytes(in)
			var back map[string]any
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("key %q: scrubbed JSON %s does not decode: %v", key, out, err)
			}
			if back["ok"] != true || back["n"] != nil || back["count"] != float64(1234) {
				t.Errorf("key %q: JSON syntax was scrubbed: %s", key, out)
			}
			if strings.Contains(back["text"].(string), key) || back["list"].([]any)[0] != Marker {
				t.Errorf("key %q: a string still holds the secret: %s", key, out)
			}
			if string(s.String(string(in))) != string(out) {
				t.Errorf("key %q: String and Bytes differ", key)
			}
		}
	}
	// Layout survives: an indented record stays indented.
	s := NewScrubber("sk-secret-123")
	in := "{\n  \"key\": \"sk-secret-123\",\n  \"n\": 1\n}"
	if got, want := s.String(in), "{\n  \"key\": \"[REDACTED]\",\n  \"n\": 1\n}"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Text that is not JSON is scrubbed as before.
	if got := s.String("key=sk-secret-123 ["); got != "key=[REDACTED] [" {
		t.Errorf("plain text: %q", got)
	}
}

// FuzzScrubJSON: scrubbing a JSON object, array or string with any secret
// leaves a JSON text. (A bare number or literal is scrubbed as text: the
// secret may be all of it.)
func FuzzScrubJSON(f *testing.F) {
	f.Add(`{"a":"true","b":true,"c":[1,"x\"y"]}`, "true")
	f.Add(`["\u00e9l\u00e8ve", "\\n1234"]`, "n1234")
	f.Fuzz(func(t *testing.T, doc, key string) {
		t0 := strings.TrimLeft(doc, " \t\r\n")
		if !json.Valid([]byte(doc)) || t0 == "" || !strings.ContainsRune("{[\"", rune(t0[0])) {
			return
		}
		out := NewScrubber(key).Bytes([]byte(doc))
		if !json.Valid(out) {
			t.Fatalf("scrubbing %q with %q gave invalid JSON %q", doc, key, out)
		}
	})
}
