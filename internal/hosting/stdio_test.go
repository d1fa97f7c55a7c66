package hosting

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestLineLimiterAnswersOversizedLinesAndPassesTheRest(t *testing.T) {
	big := strings.Repeat("x", 300)
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"text":"` + big + `"}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"text":"` + big + `"},"id":"z"}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"text":"` + big + `"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	l := newLineLimiter(io.NopCloser(strings.NewReader(input)), &out, 100, slog.New(slog.DiscardHandler))
	l.r = bufio.NewReaderSize(strings.NewReader(input), 16) // lines span many reads, as 8 MiB lines do
	passed, err := io.ReadAll(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	if string(passed) != want {
		t.Errorf("passed on:\n%s\nwant only the two small lines", passed)
	}
	answers := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(answers) != 2 || !strings.Contains(answers[0], `"id":7`) || !strings.Contains(answers[1], `"id":"z"`) {
		t.Fatalf("answers:\n%s\nwant errors for id 7 and id \"z\" (and none for the line without an id)", out.String())
	}
	for _, a := range answers {
		if !strings.Contains(a, `"code":-32600`) || !strings.Contains(a, "exceeds the stdio limit of 100 bytes") {
			t.Errorf("answer %s does not name the limit", a)
		}
	}
}

func TestRequestIDIgnoresNestedIDs(t *testing.T) {
	for line, want := range map[string]string{
		`{"jsonrpc":"2.0","method":"m","params":{"a":{"id":5}}}`:   "",
		`{"jsonrpc":"2.0","method":"m","params":{"id":5}}`:         "",
		`{"id":[1],"method":"m","params":{}}`:                      "",
		`{"jsonrpc":"2.0","id":-3,"method":"m","params":{"text":"`: "-3",
		`{"method":"m","params":{"t":"x"},"id":12}`:                "12",
	} {
		b := []byte(line)
		if got := string(requestID(b, b)); got != want {
			t.Errorf("requestID(%s) = %q, want %q", line, got, want)
		}
	}
}

// FuzzLineLimiter checks the stdio limiter against a plain reference: exactly
// the lines of at most max bytes (newline excluded) are passed on, in order
// and unchanged, and no oversized line is answered with an id that is not a
// JSON number or string.
func FuzzLineLimiter(f *testing.F) {
	f.Add([]byte("{\"id\":1}\n{\"id\":2,\"x\":\"long long long\"}\nshort"), uint8(12))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"m","params":{"t":"xxxxxxxxxxxxxxxxxxxx"},"id":"a\"b"}`+"\n"), uint8(10))
	f.Add([]byte("\n\n\r\n"), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		var want bytes.Buffer
		for rest := in; len(rest) > 0; {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line = rest[:i+1]
			}
			rest = rest[len(line):]
			if len(bytes.TrimSuffix(line, []byte("\n"))) <= int(max) {
				want.Write(line)
			}
		}
		var out bytes.Buffer
		l := newLineLimiter(io.NopCloser(bytes.NewReader(in)), &out, int(max), slog.New(slog.DiscardHandler))
		l.r = bufio.NewReaderSize(bytes.NewReader(in), 16)
		got, err := io.ReadAll(l)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("passed on %q, want %q", got, want.Bytes())
		}
		for _, ln := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
			if len(ln) == 0 {
				continue
			}
			var m struct {
				ID any `json:"id"`
			}
			if err := json.Unmarshal(ln, &m); err != nil {
				t.Fatalf("answer %q is not JSON: %v", ln, err)
			}
			switch m.ID.(type) {
			case float64, string:
			default:
				t.Fatalf("answer %q has id %v", ln, m.ID)
			}
		}
	})
}

// A client that stops reading stdout stops the server reading requests: the
// next line is not read while an answer waits to be written, and is once the
// client reads again.
func TestStdioReadsNoMoreRequestsWhileTheClientDoesNotRead(t *testing.T) {
	outR, outW := io.Pipe() // nobody reads outR yet: a write blocks
	out := &lockedWriter{w: outW}
	input := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	l := newLineLimiter(io.NopCloser(strings.NewReader(input)), out, 1000, slog.New(slog.DiscardHandler))
	l.written = out.flight.wait
	buf := make([]byte, 4096)
	if n, err := l.Read(buf); err != nil || !strings.Contains(string(buf[:n]), `"id":1`) {
		t.Fatalf("first read: %q, %v", buf[:n], err)
	}
	writing := make(chan struct{})
	go func() { close(writing); _, _ = out.Write([]byte("answer 1\n")) }() // blocks: the client does not read
	<-writing
	for out.pendingWrites() == 0 {
		runtime.Gosched()
	}
	read := make(chan string, 1)
	go func() { n, _ := l.Read(buf); read <- string(buf[:n]) }()
	select {
	case got := <-read:
		t.Fatalf("read the next request %q while the answer before it could not be written", got)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := io.ReadFull(outR, make([]byte, len("answer 1\n"))); err != nil { // the client reads again
		t.Fatal(err)
	}
	if got := <-read; !strings.Contains(got, `"id":2`) {
		t.Fatalf("after the client read, the next request read was %q", got)
	}
}

// At most maxCallsInFlight calls are read and unanswered; an answer or a
// cancellation makes room, and the ids the SDK writes back (5.0 as 5) match.
func TestStdioCallsInFlightAreCapped(t *testing.T) {
	var f flight
	for i := 0; i < maxCallsInFlight; i++ {
		f.read(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d.0,"method":"tools/call"}`, i))
	}
	f.read([]byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`)) // not a call
	waited := make(chan struct{})
	go func() { f.wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("a further request would be read with the cap of calls in flight reached")
	case <-time.After(100 * time.Millisecond):
	}
	f.answered([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":3}}`)) // no answer
	f.answered([]byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`))
	<-waited
	f.read([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call"}`))
	waited = make(chan struct{})
	go func() { f.wait(); close(waited) }()
	f.read([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}`))
	<-waited
}
