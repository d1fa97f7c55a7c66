package windows

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	win "golang.org/x/sys/windows"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Backend drives the interactive desktop of the Windows session it runs in.
// It is safe for concurrent use; input and clipboard calls are serialized
// internally.
type Backend struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex // guards started and dpiMode
	started bool
	dpiMode string

	capMu sync.Mutex // serializes GDI captures

	inMu    sync.Mutex                 // serializes SendInput batches and the held maps
	keys    map[desktop.Key][]input    // release events for keys KeyDown pressed
	buttons map[desktop.Button][]input // release events for buttons ButtonDown pressed

	clipMu sync.Mutex // serializes clipboard access within the process

	closeOnce sync.Once
	closeErr  error
}

// Capability guards.
var (
	_ desktop.Screen    = (*Backend)(nil)
	_ desktop.Pointer   = (*Backend)(nil)
	_ desktop.Keyboard  = (*Backend)(nil)
	_ desktop.Clipboard = (*Backend)(nil)
	_ desktop.Windows   = (*Backend)(nil)
	_ desktop.Describer = (*Backend)(nil)
)

// New returns a backend for the current session's desktop. It has no side
// effects; call Start.
func New(o Options) *Backend {
	l := o.Logger
	if l == nil {
		l = slog.Default()
	}
	return &Backend{opts: o, log: l.With("backend", "windows"),
		keys: map[desktop.Key][]input{}, buttons: map[desktop.Button][]input{}}
}

// Name returns "windows".
func (b *Backend) Name() string { return "windows" }

// DisplayName returns "": Windows has one interactive desktop per session.
func (b *Backend) DisplayName() string { return "" }

// Start makes the process per-monitor DPI aware, checks that the Win32 entry
// points exist and that the session has a monitor. On error the backend is
// left closable.
func (b *Backend) Start(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started {
		return errors.New("windows backend already started")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, p := range requiredProcs {
		if err := p.Find(); err != nil {
			return fmt.Errorf("windows: %s is missing (%v): this backend needs Windows 10 version 1703 or later", p.Name, err)
		}
	}
	mode, err := ensurePerMonitorDPI()
	if err != nil {
		return err
	}
	b.dpiMode = mode
	ms, err := monitors()
	if err != nil {
		return err
	}
	if _, err := buildLayout(ms); err != nil {
		return err
	}
	b.started = true
	return nil
}

func (b *Backend) ready() error {
	if b == nil {
		return errors.New("windows backend is nil: create it with New and call Start")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started {
		return errors.New("windows backend is not started: call Start first")
	}
	return nil
}

// Close releases every key and button that KeyDown and ButtonDown left
// pressed. It is safe after a partial Start and when called more than once.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		started := b.started
		b.started = false
		b.mu.Unlock()
		if !started {
			return
		}
		b.inMu.Lock()
		defer b.inMu.Unlock()
		var release []input
		for k, ev := range b.keys {
			release = append(release, ev...)
			delete(b.keys, k)
		}
		for bt, ev := range b.buttons {
			release = append(release, ev...)
			delete(b.buttons, bt)
		}
		if len(release) > 0 {
			b.closeErr = b.send(release)
		}
	})
	return b.closeErr
}

// Describe reports the Windows version, DPI awareness and the display layout.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	d := map[string]string{"status": "conformance-tested under Wine in CI; not yet on a real Windows desktop"}
	v := win.RtlGetVersion()
	d["os"] = fmt.Sprintf("Windows %d.%d build %d", v.MajorVersion, v.MinorVersion, v.BuildNumber)
	if b.ready() != nil {
		d["state"] = "not started"
		return d
	}
	b.mu.Lock()
	d["dpi_awareness"] = b.dpiMode
	b.mu.Unlock()
	d["capture"] = "GDI BitBlt (CAPTUREBLT)"
	d["input"] = "SendInput"
	vs := virtualScreen()
	d["virtual_screen_physical"] = fmt.Sprintf("%dx%d%+d%+d", vs.W, vs.H, vs.X, vs.Y)
	if l, err := b.currentLayout(ctx); err == nil {
		d["displays"] = strconv.Itoa(len(l.Displays))
		d["layout"] = l.describe()
	} else {
		d["displays"] = "error: " + err.Error()
	}
	return d
}
