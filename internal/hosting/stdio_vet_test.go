package hosting

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzMessageVetter: whatever the line, vetting never panics, every answer it
// writes is one JSON value, and a single message it passes on is one the
// SDK decodes (a message the SDK cannot decode would end the session).
func FuzzMessageVetter(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[]`, `[1,2,3]`, `[{"jsonrpc":"2.0"}]`,
		`{"jsonrpc":"1.0","id":5,"method":"ping"}`, `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e999,"method":"ping"}`, "{\"a\":\"\xff\"}", "{\"a\":\"\x00\"}",
		`{"jsonrpc":"2.0","id":"x","result":{}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"gui_type","arguments":{"text":"${name}"}}}`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, line []byte, batches bool) {
		var answers []string
		v := newMessageVetter(func(b []byte) error { answers = append(answers, string(b)); return nil }, slog.New(slog.DiscardHandler))
		v.batches = batches
		pass, err := v.vet(line)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range answers {
			if !json.Valid([]byte(a)) {
				t.Fatalf("answer %q is not JSON", a)
			}
		}
		if pass && len(answers) > 0 {
			t.Fatalf("passed %q and also answered it: %v", line, answers)
		}
		if trimmed := strings.TrimSpace(string(line)); pass && strings.HasPrefix(trimmed, "{") {
			if _, err := jsonrpc.DecodeMessage([]byte(trimmed)); err != nil {
				t.Fatalf("passed %q, which the SDK refuses: %v", line, err)
			}
		}
	})
}
