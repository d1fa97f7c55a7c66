package hosting

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxStdioMessageBytes is the largest JSON-RPC message (one line) the stdio
// transport accepts, the same as the HTTP body limit. A longer line is
// skipped and answered with a JSON-RPC error; the server goes on serving.
const MaxStdioMessageBytes = DefaultMaxBodyBytes

// errCodeTooLarge is the JSON-RPC error code of an oversized message
// (invalid request).
const errCodeTooLarge = -32600

// idPrefixBytes is how much of an oversized line is kept to recover the
// request id from; idTailBytes how much of its end.
const (
	idPrefixBytes = 64 << 10
	idTailBytes   = 4 << 10
)

// lockedWriter serializes writes to w: the SDK writes one message per Write
// call, and lineLimiter writes its error responses through the same lock. It
// also keeps the backpressure state (flight): the calls read and not yet
// answered, and the writes under way.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
	flight
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.flight.writing(+1)
	defer l.flight.writing(-1)
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	if err == nil {
		l.flight.answered(p)
	}
	return n, err
}

// Close does nothing: stdout stays open for the process.
func (l *lockedWriter) Close() error { return nil }

// lineLimiter reads newline-delimited JSON-RPC messages from r and passes on
// only the lines of at most max bytes. A longer line is consumed without
// being held in memory, and answered on out with a JSON-RPC error carrying
// its id (recovered from its beginning or end); a line whose id cannot be
// found is logged and dropped, since a response without a usable id would
// break a client. It is used by a single reader goroutine (the SDK's).
type lineLimiter struct {
	r       *bufio.Reader
	closer  io.Closer
	max     int
	out     io.Writer
	log     *slog.Logger
	pending []byte // the rest of an accepted line not yet returned by Read
	line    []byte // the buffer lines are assembled in
	// vet, when set, sees each accepted line first and passes it on only
	// when it returns true (messageVetter.vet).
	vet func(line []byte) (bool, error)
	// written, when set, is waited on before each new line is read: the
	// output's writes under way must be done (flight.wait).
	written func()
}

func newLineLimiter(r io.ReadCloser, out io.Writer, max int, log *slog.Logger) *lineLimiter {
	return &lineLimiter{r: bufio.NewReaderSize(r, 64<<10), closer: r, max: max, out: out, log: log}
}

// Close closes the underlying reader.
func (l *lineLimiter) Close() error { return l.closer.Close() }

// Read returns bytes of accepted lines, each with its newline.
func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.written != nil {
			l.written()
		}
		line, err := l.nextLine()
		if len(line) > 0 && l.vet != nil {
			pass, verr := l.vet(line)
			if verr != nil {
				return 0, verr
			}
			if !pass {
				line = nil
			}
		}
		if len(line) > 0 {
			l.pending = line
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// nextLine returns the next line of at most max bytes (with its newline, or
// without one at the end of input), answering oversized lines on its way.
// It returns an empty line and nil error after skipping one.
func (l *lineLimiter) nextLine() ([]byte, error) {
	l.line = l.line[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		content := len(l.line) + len(chunk)
		if bytes.HasSuffix(chunk, []byte{'\n'}) {
			content-- // the newline does not count
		}
		if content > l.max {
			return nil, l.skip(append(l.line, chunk...), err)
		}
		l.line = append(l.line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return l.line, err
	}
}

// skip consumes the rest of an oversized line (read the part read so far,
// err the last read's error) and answers it.
func (l *lineLimiter) skip(read []byte, err error) error {
	prefix := bytes.Clone(read[:min(len(read), idPrefixBytes)])
	n := len(read)
	tail := newTailBuffer(idTailBytes)
	tail.write(read)
	for errors.Is(err, bufio.ErrBufferFull) {
		var chunk []byte
		chunk, err = l.r.ReadSlice('\n')
		n += len(chunk)
		tail.write(chunk)
	}
	l.line = l.line[:0]
	id := requestID(prefix, tail.bytes())
	msg := fmt.Sprintf("message of %d bytes exceeds the stdio limit of %d bytes (%d MiB): send smaller arguments (crop a template, split long text) or use the HTTP transport's limits", n, l.max, l.max>>20)
	if id == nil {
		l.log.Warn("dropped an oversized stdio message without a request id", "bytes", n, "limit", l.max)
	} else if werr := l.answer(id, msg); werr != nil {
		return werr
	} else {
		l.log.Warn("refused an oversized stdio message", "bytes", n, "limit", l.max, "id", string(id))
	}
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		return err
	}
	return nil
}

func (l *lineLimiter) answer(id json.RawMessage, msg string) error {
	resp, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": errCodeTooLarge, "message": msg},
	})
	if err != nil {
		return err
	}
	_, err = l.out.Write(append(resp, '\n'))
	return err
}

// requestID returns the "id" member of the top-level JSON object a line
// starts with (prefix) or ends with (tail), or nil when neither shows one.
func requestID(prefix, tail []byte) json.RawMessage {
	if id := idFromPrefix(prefix); id != nil {
		return id
	}
	return idFromTail(tail)
}

// idFromPrefix walks the top-level members of a truncated JSON object until
// it finds "id" or the data ends.
func idFromPrefix(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			return validID(v)
		}
	}
	return nil
}

// idFromTail finds `"id": value }` at the end of a line: the last member of
// the top-level object.
func idFromTail(tail []byte) json.RawMessage {
	t := bytes.TrimRight(tail, " \t\r\n")
	if !bytes.HasSuffix(t, []byte("}")) {
		return nil
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	i := bytes.LastIndex(t, []byte(`"id"`))
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(t[i+len(`"id"`):], " \t\r\n")
	if !bytes.HasPrefix(rest, []byte(":")) {
		return nil
	}
	before := bytes.TrimRight(t[:i], " \t\r\n")
	if !bytes.HasSuffix(before, []byte(",")) {
		return nil
	}
	return validID(bytes.TrimSpace(rest[1:]))
}

// validID returns v when it is a JSON-RPC id (a number or a string).
func validID(v json.RawMessage) json.RawMessage {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return nil
	}
	switch x.(type) {
	case float64, string:
		return bytes.Clone(v)
	}
	return nil
}

// tailBuffer keeps the last n bytes written to it.
type tailBuffer struct {
	buf []byte
	n   int
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{n: n} }

func (t *tailBuffer) write(p []byte) {
	if len(p) >= t.n {
		t.buf = append(t.buf[:0], p[len(p)-t.n:]...)
		return
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = t.buf[len(t.buf)-t.n:]
	}
}

func (t *tailBuffer) bytes() []byte { return t.buf }

// Stdio serves one MCP session over a pair of streams: nothing but JSON-RPC
// is written to stdout; a message over MaxStdioMessageBytes, or one the SDK
// could not decode (messageVetter), gets a JSON-RPC error and the session
// goes on; no more requests are read while the client does not read its
// answers (flight).
type Stdio struct {
	Server *mcp.Server
	Log    *slog.Logger
	// Ended, when set, is called with the session before Serve returns (so
	// its last calls are recorded).
	Ended func(*mcp.ServerSession)
}

// Serve serves the session until the client disconnects or ctx is done.
func (st Stdio) Serve(ctx context.Context, stdin io.ReadCloser, stdout io.Writer) error {
	log := st.Log
	out := &lockedWriter{w: stdout}
	ended := &endReader{ReadCloser: stdin, ended: make(chan struct{})}
	in := newLineLimiter(ended, out, MaxStdioMessageBytes, log)
	in.written = out.flight.wait
	vetter := newMessageVetter(func(b []byte) error { _, err := out.Write(append(b, '\n')); return err }, log)
	in.vet = func(line []byte) (bool, error) {
		pass, err := vetter.vet(line)
		if pass {
			out.flight.read(line)
		}
		return pass, err
	}
	// The limiter bounds every line, so the SDK's own limit (which ends the
	// session) is off.
	ss, err := st.Server.Connect(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: -1}, nil)
	if err != nil {
		return fmt.Errorf("starting the stdio session: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	if st.Ended != nil {
		defer st.Ended(ss) // the last calls are recorded before serve exits
	}
	select {
	case <-ctx.Done():
		_ = ss.Close()
		<-done
		log.Info("stdio session stopped", "why", context.Cause(ctx))
		return nil
	case <-ended.ended:
		// The client closed stdin: running calls are cancelled. One that
		// ignores its context would keep the session (and the process) up
		// forever; it is abandoned after StdioDrain.
		select {
		case err := <-done:
			return stdioEnded(log, err)
		case <-time.After(StdioDrain):
			log.Warn("stdin closed, but a call is still running; no longer waiting for it", "after", StdioDrain)
			return nil
		}
	case err := <-done:
		return stdioEnded(log, err)
	}
}

// StdioDrain is how long ServeStdio waits, once the client has closed stdin,
// for calls still running to end.
const StdioDrain = 5 * time.Second

func stdioEnded(log *slog.Logger, err error) error {
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("stdio session: %w", err)
	}
	log.Info("stdio client disconnected")
	return nil
}

// endReader closes ended when a read first fails (end of input or an error).
type endReader struct {
	io.ReadCloser
	once  sync.Once
	ended chan struct{}
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.ReadCloser.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.ended) })
	}
	return n, err
}
