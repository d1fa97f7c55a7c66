package platform_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/platform"
)

// With VNC set, Open dials that server instead of any X display, and its
// error names the server.
func TestOpenVNCUsesTheVNCBackend(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, closer, err := platform.Open(context.Background(), platform.Options{VNC: addr, Session: platform.Session{XDisplay: ":9999"}})
	if err == nil {
		closer()
		t.Fatalf("Open(VNC %s) on a closed port returned backend %q", addr, s.Name())
	}
	if !strings.Contains(err.Error(), "vnc") || !strings.Contains(err.Error(), addr) {
		t.Errorf("Open(VNC %s) = %v; want the VNC backend's error naming the server", addr, err)
	}
}
