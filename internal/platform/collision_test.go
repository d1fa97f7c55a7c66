package platform

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/guiagent/guiagent/internal/testenv"
)

// A server started on a display that another live server holds must be
// reported as a collision, never as started, even when it takes a while to
// notice the lock: the socket and the server answering on it are the other
// one's. The slow server is a shell that exits as Xvfb does on a taken display.
func TestTryServerOnTakenDisplayIsCollision(t *testing.T) {
	testenv.NeedX(t)
	ctx := context.Background()
	other, err := StartXvfb(ctx, XvfbOptions{Width: 320, Height: 240})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	n, err := strconv.Atoi(other.Display[1:])
	if err != nil {
		t.Fatal(err)
	}
	slow := []string{"-c", "sleep 0.3; echo 'Server is already active for display " + strconv.Itoa(n) + "' >&2; exit 1"}
	vd, err := tryServer(ctx, "Xvfb", "/bin/sh", slow, n, "")
	if err == nil {
		_ = vd.Close()
		t.Fatalf("tryServer on %s, held by another server, returned it as started", other.Display)
	}
	if !errors.Is(err, errCollision) {
		t.Fatalf("tryServer on a taken display: %v, want a collision", err)
	}
}
