package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/hosting"
)

// stuckStdioEnv makes the re-executed test binary serve stdio with a tool
// that never returns and ignores its context.
const stuckStdioEnv = "GUIAGENT_TEST_STUCK_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(stuckStdioEnv) != "" {
		serveStuckStdio()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serveStuckStdio() {
	srv, err := New(Options{Screen: fake.New(fake.Options{}), Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	mcp.AddTool(srv.MCP(), &mcp.Tool{Name: "stuck", Description: "never returns"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "STUCK")
			select {}
		})
	err = srv.ServeStdio(context.Background())
	fmt.Fprintln(os.Stderr, "SERVED", err)
}

// When the client closes stdin while a call that ignores its context runs,
// ServeStdio returns after hosting.StdioDrain instead of waiting for it forever (so
// serve can release input and exit).
func TestStdinEOFEndsServeStdioDespiteAStuckCall(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stuckStdioEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stuck","arguments":{}}}`,
	} {
		if _, err := stdin.Write([]byte(m + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	var log []string
	waitFor := func(what string, limit time.Duration) bool {
		deadline := time.After(limit)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return false
				}
				log = append(log, l)
				if strings.HasPrefix(l, what) {
					return true
				}
			case <-deadline:
				return false
			}
		}
	}
	if !waitFor("STUCK", 30*time.Second) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the stuck tool never ran:\n%s", strings.Join(log, "\n"))
	}
	stdin.Close()
	ok := waitFor("SERVED", hosting.StdioDrain+15*time.Second)
	cmd.Process.Kill()
	cmd.Wait()
	if !ok {
		t.Fatalf("ServeStdio did not return %s after stdin closed while a call was stuck:\n%s", hosting.StdioDrain+15*time.Second, strings.Join(log, "\n"))
	}
}
