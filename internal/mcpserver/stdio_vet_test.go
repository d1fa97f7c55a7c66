package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/trace"
)

// stdioPeer is a client on the two ends of a pipe served by serveStdio.
type stdioPeer struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
	done  chan error
}

func startStdioPeer(t *testing.T, protocol string, opts ...Options) *stdioPeer {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Screen, o.Logger = fake.New(fake.Options{}), slog.New(slog.DiscardHandler)
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, lines: make(chan string, 64), done: make(chan error, 1)}
	go func() { p.done <- srv.serveStdio(context.Background(), inR, outW); outW.Close() }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocol + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	p.expect(`"id":1,"result"`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("the server stopped reading: %v", err)
	}
}

// expect returns the next line the server writes, which must contain want.
func (p *stdioPeer) expect(want string) string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("the server ended (%v) while %s was expected", <-p.done, want)
		}
		if !strings.Contains(l, want) {
			p.t.Fatalf("the server wrote %s, want a line with %s", l, want)
		}
		return l
	case <-time.After(20 * time.Second):
		p.t.Fatalf("no answer with %s", want)
	}
	return ""
}

// TestMalformedStdioLinesAreAnsweredAndTheServerGoesOn: each line that used to
// end the stdio session (and serve, with exit 1) gets a JSON-RPC error and the
// next request is still answered.
func TestMalformedStdioLinesAreAnsweredAndTheServerGoesOn(t *testing.T) {
	deep := strings.Repeat("[", 100000)
	cases := []struct {
		name, line string
		protocol   string
		want       []string // parts of the one answer; nil: no answer
	}{
		{"empty batch", `[]`, "2025-06-18", []string{`"id":null`, `-32600`, "empty batch"}},
		{"batch of numbers", `[1,2,3]`, "2025-06-18", []string{`[{`, `"id":null`, `a JSON-RPC message is an object`}},
		{"batch without method or id", `[{"jsonrpc":"2.0"}]`, "2025-06-18", []string{`"id":null`, `needs the \"id\"`}},
		{"version 1.0", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, "2025-06-18", []string{`"id":5`, `-32600`, `must be \"2.0\"`}},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "2025-06-18", []string{`"id":null`, `must be a string or an integer`}},
		{"1e999 id", `{"jsonrpc":"2.0","id":1e999,"method":"ping"}`, "2025-06-18", []string{`"id":null`, `must be a string or an integer`}},
		{"id beyond 64 bits", `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`, "2025-06-18", []string{`"id":null`, `64 bits`}},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\xff", "2025-06-18", []string{`"id":null`, `-32700`, "UTF-8"}},
		{"NUL byte", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"pi\x00ng\"}", "2025-06-18", []string{`"id":null`, `-32700`, "NUL"}},
		{"100k-deep nesting", deep, "2025-06-18", []string{`"id":null`, `deeper than 512`}},
		{"method not a string", `{"jsonrpc":"2.0","id":3,"method":5}`, "2025-06-18", []string{`"id":3`, `"method\" must be a string`}},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, "2025-06-18", []string{`"id":null`, "response"}},
		{"error not an object", `{"jsonrpc":"2.0","id":4,"error":5}`, "2025-06-18", []string{`"id":4`, `"error\" must be an object`}},
		{"two-call batch under 2025-06-18", `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]`, "2025-06-18",
			[]string{`"id":5`, `"id":6`, "batches are not supported"}},
		{"batch with a duplicate id", `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`, "2025-03-26", []string{"twice"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := startStdioPeer(t, c.protocol)
			p.send(c.line)
			if c.want != nil {
				got := p.expect(c.want[0])
				for _, w := range c.want[1:] {
					if !strings.Contains(got, w) {
						t.Errorf("answer %s lacks %s", got, w)
					}
				}
				var v any
				if err := json.Unmarshal([]byte(got), &v); err != nil {
					t.Errorf("answer %s is not JSON: %v", got, err)
				}
			}
			p.send(`{"jsonrpc":"2.0","id":99,"method":"ping"}`)
			p.expect(`"id":99,"result"`)
		})
	}
}

// A batch stays a batch for the protocols that have them.
func TestStdioBatchUnder20250326IsServed(t *testing.T) {
	p := startStdioPeer(t, "2025-03-26")
	p.send(`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]`)
	got := p.expect(`"id":5,"result"`)
	if !strings.Contains(got, `"id":6,"result"`) {
		t.Errorf("batch answer %s lacks the second call's result", got)
	}
}

// TestStdioRecordsEveryCallBeforeItEnds: a client that closes stdin right
// after its last answer (as the TypeScript SDK's client does) finds all its
// calls in the session record, and the record finished, by the time the
// stdio server returns and the process would exit.
func TestStdioRecordsEveryCallBeforeItEnds(t *testing.T) {
	store := trace.NewStore(trace.Options{Dir: t.TempDir()})
	defer store.Close()
	p := startStdioPeer(t, "2025-06-18", Options{Records: func(id string) ToolRecorder { return store.Session(id) }})
	calls := []string{
		`{"name":"gui_screenshot","arguments":{}}`, `{"name":"gui_screenshot","arguments":{}}`, `{"name":"gui_screenshot","arguments":{}}`,
		`{"name":"gui_click","arguments":{"x":10,"y":10}}`, `{"name":"gui_click","arguments":{"x":99999,"y":10}}`,
		`{"name":"gui_hotkey","arguments":{"keys":["alt","f4"]}}`,
	}
	for i, c := range calls {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 10+i, c))
		p.expect(fmt.Sprintf(`"id":%d,"result"`, 10+i))
	}
	p.in.Close()
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
	runs, err := store.List()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	if runs[0].Status != trace.StatusRecorded || runs[0].Steps != len(calls) {
		t.Errorf("the session record is %q with %d calls when serve returns, want %q with %d", runs[0].Status, runs[0].Steps, trace.StatusRecorded, len(calls))
	}
}
