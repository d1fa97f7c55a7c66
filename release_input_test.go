package guiagent_test

import (
	"context"
	"io"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent"

	"github.com/guiagent/guiagent/internal/testenv"
)

// ReleaseInput lets go of a button the agent holds (what serve calls first
// when it shuts down), as the X server sees it.
func TestReleaseInputReleasesAHeldButton(t *testing.T) {
	testenv.NeedX(t)
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		VirtualDisplay: guiagent.Size{Width: 320, Height: 240}, AlwaysVirtualDisplay: true,
		RunsDir: t.TempDir(), StateDir: t.TempDir(), Log: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c, err := xgb.NewConnDisplay(a.DisplayName())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pressed := func() bool {
		p, err := xproto.QueryPointer(c, xproto.Setup(c).DefaultScreen(c).Root).Reply()
		if err != nil {
			t.Fatal(err)
		}
		return p.Mask&xproto.ButtonMask1 != 0
	}
	if err := a.MouseDown(ctx, guiagent.ScreenPoint(10, 10), "left"); err != nil {
		t.Fatal(err)
	}
	if !pressed() {
		t.Fatal("MouseDown left nothing pressed; the test exercises nothing")
	}
	if err := a.ReleaseInput(); err != nil {
		t.Fatal(err)
	}
	if pressed() {
		t.Error("after ReleaseInput the left button is still pressed")
	}
}
