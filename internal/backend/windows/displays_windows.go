package windows

import (
	"context"
	"slices"
	"sync"
	"unsafe"

	win "golang.org/x/sys/windows"

	"github.com/guiagent/guiagent/internal/geom"
)

// monitorInfoEx is MONITORINFOEXW.
type monitorInfoEx struct {
	Size    uint32
	Monitor winRect
	Work    winRect
	Flags   uint32
	Device  [32]uint16
}

const (
	monitorInfoPrimary = 1 // MONITORINFOF_PRIMARY
	mdtEffectiveDPI    = 0 // MDT_EFFECTIVE_DPI
)

var (
	// enumMu serializes monitor enumeration, whose callback fills enumFound.
	enumMu    sync.Mutex
	enumFound []physMonitor
	// enumCallback is created once: Windows callbacks are never freed.
	enumCallback = sync.OnceValue(func() uintptr { return win.NewCallback(monitorEnumProc) })
)

// monitorEnumProc is the MONITORENUMPROC: it records one monitor.
func monitorEnumProc(hmon, hdc, rect, lparam uintptr) uintptr {
	mi := monitorInfoEx{Size: uint32(unsafe.Sizeof(monitorInfoEx{}))}
	if r, _, _ := procGetMonitorInfoW.Call(hmon, uintptr(unsafe.Pointer(&mi))); r == 0 {
		return 1 // skip it, keep enumerating
	}
	dpi := defaultDPI
	var dx, dy uint32
	if hr, _, _ := procGetDpiForMonitor.Call(hmon, mdtEffectiveDPI, uintptr(unsafe.Pointer(&dx)), uintptr(unsafe.Pointer(&dy))); hr == 0 && dx > 0 {
		dpi = int(dx)
	}
	r := mi.Monitor
	enumFound = append(enumFound, physMonitor{
		Name:    win.UTF16ToString(mi.Device[:]),
		Rect:    physRect{X: int(r.Left), Y: int(r.Top), W: int(r.Right - r.Left), H: int(r.Bottom - r.Top)},
		DPI:     dpi,
		Primary: mi.Flags&monitorInfoPrimary != 0,
	})
	return 1
}

// monitors lists the monitors of the current desktop in physical pixels.
func monitors() ([]physMonitor, error) {
	enumMu.Lock()
	defer enumMu.Unlock()
	enumFound = enumFound[:0]
	r, _, err := procEnumDisplayMonitors.Call(0, 0, enumCallback(), 0)
	if r == 0 {
		return nil, callErr("EnumDisplayMonitors", err)
	}
	return slices.Clone(enumFound), nil
}

// currentLayout enumerates the monitors and builds the logical layout. It is
// cheap (microseconds), so every call sees the current monitor setup.
func (b *Backend) currentLayout(ctx context.Context) (layout, error) {
	if err := b.ready(); err != nil {
		return layout{}, err
	}
	if err := ctx.Err(); err != nil {
		return layout{}, err
	}
	ms, err := monitors()
	if err != nil {
		return layout{}, err
	}
	return buildLayout(ms)
}

// Displays lists the monitors in global logical pixels: the primary at (0,0),
// Scale = effective DPI / 96, ordered left to right then top to bottom with
// ids "0", "1", ... and Name the GDI device name (`\\.\DISPLAY1`). See the
// package documentation for how mixed-DPI layouts are mapped.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	l, err := b.currentLayout(ctx)
	if err != nil {
		return nil, err
	}
	return l.Displays, nil
}
