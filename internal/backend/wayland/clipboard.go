package wayland

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// clipReadTimeout bounds a read of the clipboard's owner.
const clipReadTimeout = 5 * time.Second

// textMimes are the text types served, and read in this order of preference.
var textMimes = []string{"text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "TEXT", "STRING"}

// clipboard is the session's data-control device on the seat.
type clipboard struct {
	opMu sync.Mutex // one read or write at a time

	mu     sync.Mutex
	mgr    uint32
	dev    uint32
	err    error
	offers map[uint32][]string // live offers and their mime types
	sel    uint32              // offer of the current selection; 0 when empty
	srcs   map[uint32]map[string][]byte
	// owned is the source of ours that is the selection (0 once another
	// client took the clipboard), content what it serves.
	owned   uint32
	content []mimeData
}

// startClipboard binds data control (ext first, else wlr) and gets the seat's device.
func (b *Backend) startClipboard() error {
	cb := &b.clip
	cb.mu.Lock()
	defer cb.mu.Unlock()
	cb.offers, cb.srcs = map[uint32][]string{}, map[uint32]map[string][]byte{}
	iface := ifDataControlExt
	if _, ok := b.find(iface); !ok {
		iface = ifDataControlWlr
	}
	mgr, _, err := b.bind(iface, nil)
	if err != nil {
		cb.err = b.missing(ifDataControlExt, ifDataControlWlr)
		return cb.err
	}
	b.regMu.Lock()
	seat := b.bound[ifSeat]
	b.regMu.Unlock()
	cb.mgr = mgr
	if err := b.c.send(mgr, 1, newObj{h: b.deviceEvent, out: &cb.dev}, seat); err != nil {
		cb.err = err
		return err
	}
	return nil
}

func (b *Backend) deviceEvent(op uint16, d *decoder) {
	cb := &b.clip
	switch op {
	case 0: // data_offer(new_id)
		id := d.uint()
		cb.mu.Lock()
		cb.offers[id] = nil
		cb.mu.Unlock()
		b.c.register(id, "data_control_offer", func(op uint16, d *decoder) {
			if op == 0 {
				mime := d.string()
				cb.mu.Lock()
				if _, live := cb.offers[id]; live {
					cb.offers[id] = append(cb.offers[id], mime)
				}
				cb.mu.Unlock()
			}
		})
	case 1, 3: // selection(offer), primary_selection(offer)
		id := d.uint()
		cb.mu.Lock()
		old := cb.sel
		if op == 3 {
			old = id // the primary selection is not used
		} else {
			cb.sel = id
		}
		if old != 0 && (op == 3 || old != id) {
			b.dropOffer(old)
		}
		cb.mu.Unlock()
	case 2: // finished
		cb.mu.Lock()
		cb.err = fmt.Errorf("wayland: %s ended the clipboard device (data control finished)", b.compositor)
		cb.mu.Unlock()
	}
}

// dropOffer destroys an offer. Caller holds clip.mu.
func (b *Backend) dropOffer(id uint32) {
	delete(b.clip.offers, id)
	_ = b.c.send(id, 1)
	b.c.forget(id)
}

func (cb *clipboard) ready() error {
	if cb.err != nil {
		return cb.err
	}
	if cb.dev == 0 {
		return errors.New("wayland: the clipboard is not started (no wl_seat)")
	}
	return nil
}

// ReadClipboard returns the clipboard's text through data control ("" when
// the clipboard is empty). A clipboard holding no text type is an error
// naming the types it holds.
func (b *Backend) ReadClipboard(ctx context.Context) (string, error) {
	cb := &b.clip
	cb.opMu.Lock()
	defer cb.opMu.Unlock()
	if err := b.c.roundtrip(ctx); err != nil {
		return "", err
	}
	cb.mu.Lock()
	if err := cb.ready(); err != nil {
		cb.mu.Unlock()
		return "", err
	}
	offer, mimes := cb.sel, slices.Clone(cb.offers[cb.sel])
	cb.mu.Unlock()
	if offer == 0 {
		return "", nil
	}
	mime := ""
	for _, m := range textMimes {
		if slices.Contains(mimes, m) {
			mime = m
			break
		}
	}
	if mime == "" {
		return "", fmt.Errorf("wayland: the clipboard holds no text (it offers %q)", mimes)
	}
	data, err := b.receive(ctx, offer, mime)
	return string(data), err
}

// receive reads one mime type of an offer through a pipe.
func (b *Backend) receive(ctx context.Context, offer uint32, mime string) ([]byte, error) {
	r, w, err := pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	err = b.c.send(offer, 0, mime, fdArg(int(w.Fd())))
	w.Close()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, clipReadTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	defer stop()
	data, err := io.ReadAll(r)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, fmt.Errorf("wayland: the clipboard's owner sent no %s within %v: %w", mime, clipReadTimeout, ctx.Err())
		}
		return nil, fmt.Errorf("wayland: read the clipboard: %w", err)
	}
	return data, nil
}

// WriteClipboard puts text on the clipboard as the usual text types and
// serves it until another client takes the clipboard; at Close a clipboard
// the backend still holds is handed to a keeper process (handoff.go).
func (b *Backend) WriteClipboard(ctx context.Context, text string) error {
	content := make([]mimeData, len(textMimes))
	for i, m := range textMimes {
		content[i] = mimeData{Mime: m, Data: []byte(text)}
	}
	return b.writeContent(ctx, content)
}

// mimeData is one type of a clipboard's content.
type mimeData struct {
	Mime string
	Data []byte
}

// writeContent offers content as the clipboard's selection and waits until
// the compositor has made it so.
func (b *Backend) writeContent(ctx context.Context, content []mimeData) error {
	cb := &b.clip
	cb.opMu.Lock()
	defer cb.opMu.Unlock()
	cb.mu.Lock()
	err := cb.ready()
	mgr, dev := cb.mgr, cb.dev
	cb.mu.Unlock()
	if err != nil {
		return err
	}
	byMime := map[string][]byte{}
	for _, c := range content {
		byMime[c.Mime] = c.Data
	}
	var src uint32
	if err := b.c.send(mgr, 0, newObj{h: func(op uint16, d *decoder) { b.sourceEvent(src, op, d) }, out: &src}); err != nil {
		return err
	}
	cb.mu.Lock()
	cb.srcs[src] = byMime
	cb.owned, cb.content = src, content
	cb.mu.Unlock()
	for _, c := range content {
		if err := b.c.send(src, 0, c.Mime); err != nil {
			return err
		}
	}
	if err := b.c.send(dev, 0, src); err != nil { // set_selection
		return err
	}
	return b.c.roundtrip(ctx)
}

// sourceEvent serves our sources: send(mime, fd) and cancelled.
func (b *Backend) sourceEvent(src uint32, op uint16, d *decoder) {
	cb := &b.clip
	switch op {
	case 0:
		mime, fd := d.string(), d.fd()
		if d.err != nil {
			return
		}
		cb.mu.Lock()
		data := cb.srcs[src][mime]
		cb.mu.Unlock()
		f := os.NewFile(uintptr(fd), "clipboard")
		go func() {
			_ = f.SetWriteDeadline(time.Now().Add(clipReadTimeout))
			_, _ = f.Write(data)
			_ = f.Close()
		}()
	case 1:
		cb.mu.Lock()
		delete(cb.srcs, src)
		if cb.owned == src {
			cb.owned, cb.content = 0, nil
		}
		cb.mu.Unlock()
		_ = b.c.send(src, 1)
		b.c.forget(src)
	}
}
