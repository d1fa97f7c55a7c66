package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// rawStdio is guiagent serve driven line by line, without an MCP client, so
// a test can send what no well-behaved client would.
type rawStdio struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Reader
	wait func() error
}

func startRawStdio(t *testing.T) *rawStdio {
	t.Helper()
	vd := xvfbtest.Start(t, 640, 480)
	g := newGuiagent(t, serverConfig{display: vd.Display})
	cmd := g.command("serve")
	cmd.Stderr = g.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	r := &rawStdio{t: t, in: in, out: bufio.NewReader(out), wait: func() error {
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			return fmt.Errorf("guiagent did not exit 20 s after stdin closed")
		}
	}}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("server log:\n%s", g.stderr)
		}
	})
	return r
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("writing to guiagent's stdin: %v (did it exit?)", err)
	}
}

// reply reads the next message that carries an id.
func (r *rawStdio) reply() map[string]any {
	r.t.Helper()
	for {
		line, err := r.out.ReadBytes('\n')
		if err != nil {
			r.t.Fatalf("reading guiagent's stdout: %v (did it exit?)", err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			r.t.Fatalf("stdout line is not JSON: %q", line)
		}
		if _, ok := m["id"]; ok {
			return m
		}
	}
}

// TestStdioOversizedMessageGetsErrorAndServerGoesOn sends a 17 MB gui_type
// call (id first) and a 17 MB one with its id last over stdio: each gets a
// JSON-RPC error naming the limit, and the calls after them succeed.
func TestStdioOversizedMessageGetsErrorAndServerGoesOn(t *testing.T) {
	r := startRawStdio(t)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := r.reply(); m["error"] != nil {
		t.Fatalf("initialize failed: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	big := strings.Repeat("a", 17_000_000)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gui_type","arguments":{"text":"` + big + `"}}}`)
	r.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"gui_type","arguments":{"text":"` + big + `"}},"id":"last"}`)
	for _, want := range []any{2.0, "last"} {
		m := r.reply()
		e, _ := m["error"].(map[string]any)
		if m["id"] != want || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "exceeds the stdio limit") {
			t.Fatalf("oversized call %v: got %v, want a JSON-RPC error with that id naming the limit", want, m)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"gui_cursor_position","arguments":{}}}`)
	m := r.reply()
	res, _ := m["result"].(map[string]any)
	if m["id"] != 3.0 || res == nil || res["isError"] == true {
		t.Fatalf("the call after the oversized ones: got %v, want a result", m)
	}
	r.in.Close()
	if err := r.wait(); err != nil {
		t.Fatalf("guiagent exited with %v after stdin closed, want a clean exit", err)
	}
}
