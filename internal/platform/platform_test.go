package platform_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/testenv"
)

func rootSize(t *testing.T, display string) geom.Size {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("connect %s: %v", display, err)
	}
	defer c.Close()
	s := xproto.Setup(c).DefaultScreen(c)
	return geom.Size{W: int(s.WidthInPixels), H: int(s.HeightInPixels)}
}

func TestStartXvfbConcurrentAndClose(t *testing.T) {
	testenv.NeedX(t)
	const n = 4
	var wg sync.WaitGroup
	vds := make([]*platform.VirtualDisplay, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			vds[i], errs[i] = platform.StartXvfb(context.Background(), platform.XvfbOptions{Width: 640 + 16*i, Height: 480})
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("StartXvfb %d: %v", i, errs[i])
		}
		defer vds[i].Close()
		if seen[vds[i].Display] {
			t.Fatalf("two servers got display %s", vds[i].Display)
		}
		seen[vds[i].Display] = true
		want := geom.Size{W: 640 + 16*i, H: 480}
		if vds[i].Size != want {
			t.Errorf("Size = %v, want %v", vds[i].Size, want)
		}
		if got := rootSize(t, vds[i].Display); got != want {
			t.Errorf("server %s root is %v, want %v", vds[i].Display, got, want)
		}
	}
	vd := vds[0]
	num := strings.TrimPrefix(vd.Display, ":")
	if err := vd.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := vd.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := xgb.NewConnDisplay(vd.Display); err == nil {
		t.Fatalf("display %s still accepts connections after Close", vd.Display)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := os.Stat("/tmp/.X" + num + "-lock")
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lock file /tmp/.X%s-lock remains after Close", num)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStartXvfbDefaultsSize(t *testing.T) {
	testenv.NeedX(t)
	vd, err := platform.StartXvfb(context.Background(), platform.XvfbOptions{WindowManager: true})
	if err != nil {
		t.Fatal(err)
	}
	defer vd.Close()
	if got := rootSize(t, vd.Display); got != (geom.Size{W: 1280, H: 800}) {
		t.Fatalf("default root size %v, want 1280x800", got)
	}
}

func TestStartXvfbMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := platform.StartXvfb(context.Background(), platform.XvfbOptions{})
	if !errors.Is(err, platform.ErrXvfbMissing) || !strings.Contains(err.Error(), "apt-get install xvfb") {
		t.Fatalf("err = %v, want ErrXvfbMissing naming apt-get install xvfb", err)
	}
}

func TestOpenWithoutDisplayExplains(t *testing.T) {
	_, _, err := platform.Open(context.Background(), platform.Options{})
	if !errors.Is(err, platform.ErrNoDisplay) {
		t.Fatalf("err = %v, want ErrNoDisplay", err)
	}
	for _, want := range []string{"DISPLAY", "--virtual-display 1280x800"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	_, _, err = platform.Open(context.Background(), platform.Options{Session: platform.Session{XDisplay: ":999"}})
	if !errors.Is(err, platform.ErrNoDisplay) || !strings.Contains(err.Error(), ":999") {
		t.Fatalf("unreachable display: err = %v, want ErrNoDisplay naming :999", err)
	}
}

func TestOpenStartsVirtualDisplayWhenNoneReachable(t *testing.T) {
	testenv.NeedX(t)
	s, closeFn, err := platform.Open(context.Background(), platform.Options{Session: platform.Session{XDisplay: ":999"}, VirtualDisplay: geom.Size{W: 800, H: 600}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := s.Displays(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Bounds != (geom.Rect{W: 800, H: 600}) {
		t.Fatalf("displays %+v, want one 800x600", ds)
	}
	if err := closeFn(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func TestOpenUsesReachableDisplay(t *testing.T) {
	vd := xvfbtest.Start(t, 1024, 768)
	s, closeFn, err := platform.Open(context.Background(), platform.Options{Session: platform.Session{XDisplay: vd.Display}, VirtualDisplay: geom.Size{W: 640, H: 480}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	ds, err := s.Displays(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "x11" || ds[0].Bounds.Size() != (geom.Size{W: 1024, H: 768}) {
		t.Fatalf("Open used %s with %+v; want x11 on the reachable 1024x768 display, not a new virtual one", s.Name(), ds)
	}
	s2, close2, err := platform.Open(context.Background(), platform.Options{Session: platform.Session{XDisplay: vd.Display}, ForceVirtual: true})
	if err != nil {
		t.Fatal(err)
	}
	defer close2()
	ds, _ = s2.Displays(context.Background())
	if ds[0].Bounds.Size() != (geom.Size{W: 1280, H: 800}) {
		t.Fatalf("ForceVirtual gave %+v, want a fresh 1280x800 display", ds)
	}
}

func TestStartXorgDummyTwoMonitors(t *testing.T) {
	vd := xvfbtest.StartDual(t)
	c, err := xgb.NewConnDisplay(vd.Display)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := randr.Init(c); err != nil {
		t.Fatal(err)
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	rep, err := randr.GetMonitors(c, root, true).Reply()
	if err != nil {
		t.Fatal(err)
	}
	var got []geom.Rect
	for _, m := range rep.Monitors {
		got = append(got, geom.Rect{X: int(m.X), Y: int(m.Y), W: int(m.Width), H: int(m.Height)})
	}
	if len(got) != 2 || !containsRect(got, xvfbtest.DualMonitors[0]) || !containsRect(got, xvfbtest.DualMonitors[1]) {
		t.Fatalf("monitors %v, want %v", got, xvfbtest.DualMonitors)
	}
}

func containsRect(rs []geom.Rect, r geom.Rect) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}
