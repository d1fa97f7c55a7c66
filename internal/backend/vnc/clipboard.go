package vnc

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Extended Clipboard pseudo-encoding flags: formats in the low 16 bits,
// actions in the high 8.
const (
	clipText    = 1 << 0
	clipCaps    = 1 << 24
	clipRequest = 1 << 25
	clipPeek    = 1 << 26
	clipNotify  = 1 << 27
	clipProvide = 1 << 28

	clipActions = clipCaps | clipRequest | clipPeek | clipNotify | clipProvide

	// clipAutoMax is the largest text the server may push unasked.
	clipAutoMax = 1 << 20
)

// clipboard is the remote clipboard as this client knows it.
type clipboard struct {
	mu          sync.Mutex
	serverFlags uint32 // the server's extended clipboard caps; 0 means plain cut text
	serverMax   uint32 // largest text the server accepts unasked
	owned       bool   // this client wrote last and the server announced nothing since
	ours        string // what this client wrote
	remote      string // the last text the server sent
	stale       bool   // the server announced text it has not sent yet
	seq         int    // server clipboard messages seen
	changed     chan struct{}
	err         error
}

// wake signals waiters. Caller holds mu.
func (c *clipboard) wake() {
	c.seq++
	if c.changed != nil {
		close(c.changed)
	}
	c.changed = make(chan struct{})
}

// waitCh returns a channel closed at the next server clipboard message. Caller holds mu.
func (c *clipboard) waitCh() <-chan struct{} {
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

func (c *clipboard) extended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serverFlags&clipCaps != 0
}

// stop records why the connection ended and wakes waiters.
func (c *clipboard) stop(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
	c.wake()
}

// serverText handles plain ServerCutText.
func (c *clipboard) serverText(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remote, c.owned, c.stale = s, false, false
	c.wake()
}

// serverExtended handles an Extended Clipboard message from the server. It
// runs on the reader goroutine.
func (c *clipboard) serverExtended(b *Backend, data []byte) {
	if len(data) < 4 {
		b.log.Warn("extended clipboard message without flags ignored")
		return
	}
	flags := binary.BigEndian.Uint32(data)
	rest := data[4:]
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case flags&clipCaps != 0:
		c.serverFlags = flags
		if flags&clipText != 0 && len(rest) >= 4 {
			c.serverMax = binary.BigEndian.Uint32(rest) // sizes follow in format order; text is first
		}
		// Answer with our own caps: UTF-8 text, every action.
		var caps [8]byte
		binary.BigEndian.PutUint32(caps[0:], clipText|clipActions)
		binary.BigEndian.PutUint32(caps[4:], clipAutoMax)
		if err := b.writeMsg(cutTextMsg(-int32(len(caps)), caps[:])); err != nil {
			b.log.Warn("send clipboard caps", "err", err)
		}
	case flags&clipRequest != 0:
		if flags&clipText != 0 && c.owned {
			if err := b.writeMsg(provideMsg(c.ours)); err != nil {
				b.log.Warn("provide clipboard", "err", err)
			}
		}
	case flags&clipPeek != 0:
		var avail uint32
		if c.owned {
			avail = clipText
		}
		if err := b.writeMsg(extMsg(clipNotify | avail)); err != nil {
			b.log.Warn("answer clipboard peek", "err", err)
		}
	case flags&clipNotify != 0:
		c.owned = false
		if flags&clipText != 0 {
			c.stale = true
		} else {
			c.remote, c.stale = "", false
		}
		c.wake()
	case flags&clipProvide != 0:
		text, err := decodeProvide(flags, rest)
		if err != nil {
			b.log.Warn("bad clipboard data from the server ignored", "err", err)
			return
		}
		c.remote, c.owned, c.stale = text, false, false
		c.wake()
	}
}

// extMsg is an Extended Clipboard message made of flags alone.
func extMsg(flags uint32) []byte {
	var f [4]byte
	binary.BigEndian.PutUint32(f[:], flags)
	return cutTextMsg(-4, f[:])
}

// provideMsg carries text as UTF-8 with CRLF line ends and a terminating NUL,
// zlib-compressed, as the Extended Clipboard provide action wants it.
func provideMsg(text string) []byte {
	body := []byte(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n"))
	body = append(body, 0)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(body)))
	_, _ = zw.Write(n[:])
	_, _ = zw.Write(body)
	_ = zw.Close()
	payload := make([]byte, 4, 4+z.Len())
	binary.BigEndian.PutUint32(payload, clipProvide|clipText)
	payload = append(payload, z.Bytes()...)
	return cutTextMsg(-int32(len(payload)), payload)
}

// decodeProvide returns the text of a provide action's compressed payload.
func decodeProvide(flags uint32, payload []byte) (string, error) {
	if flags&clipText == 0 {
		return "", nil
	}
	zr, err := zlib.NewReader(bytes.NewReader(payload))
	if err != nil {
		return "", fmt.Errorf("clipboard data is not zlib: %w", err)
	}
	defer zr.Close()
	var n [4]byte
	if _, err := io.ReadFull(zr, n[:]); err != nil {
		return "", fmt.Errorf("clipboard data length: %w", err)
	}
	l := binary.BigEndian.Uint32(n[:])
	if l > maxCutText {
		return "", fmt.Errorf("clipboard text of %d bytes exceeds the %d byte limit", l, maxCutText)
	}
	body := make([]byte, l)
	if _, err := io.ReadFull(zr, body); err != nil {
		return "", fmt.Errorf("clipboard text: %w", err)
	}
	if i := bytes.IndexByte(body, 0); i >= 0 {
		body = body[:i]
	}
	if !utf8.Valid(body) {
		return "", fmt.Errorf("clipboard text is not valid UTF-8")
	}
	return strings.ReplaceAll(string(body), "\r\n", "\n"), nil
}

// WriteClipboard sets the remote clipboard to text. With the Extended
// Clipboard pseudo-encoding any Unicode text goes as UTF-8; with plain RFB cut
// text only Latin-1 can be sent, and other text is rejected with an error.
func (b *Backend) WriteClipboard(ctx context.Context, text string) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &b.clip
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.serverFlags&clipCaps != 0 && c.serverFlags&clipText != 0 && c.serverFlags&clipNotify != 0 {
		if err := b.writeMsg(extMsg(clipNotify | clipText)); err != nil {
			return err
		}
		c.owned, c.ours = true, text
		// Send the text at once when the server accepts it unasked; otherwise
		// it asks (request) when an application pastes.
		if c.serverFlags&clipProvide != 0 && int64(len(text))+1 <= int64(c.serverMax) {
			return b.writeMsg(provideMsg(text))
		}
		return nil
	}
	latin := make([]byte, 0, len(text))
	for _, r := range strings.ReplaceAll(text, "\r\n", "\n") {
		if r > 0xff {
			return fmt.Errorf("vnc: %s supports only plain RFB cut text, which is Latin-1, and the text contains %q (U+%04X): write Latin-1 text, or use a server with the Extended Clipboard extension (TigerVNC 1.11 or later)", b.addr, r, r)
		}
		latin = append(latin, byte(r))
	}
	if err := b.writeMsg(cutTextMsg(int32(len(latin)), latin)); err != nil {
		return err
	}
	c.owned, c.ours = true, text
	return nil
}

// ReadClipboard returns the remote clipboard's text. When this client wrote
// it last, that text. Otherwise, with the Extended Clipboard pseudo-encoding,
// it asks the server (peek, then request) and waits for the answer (at most
// Options.UpdateTimeout); with plain cut text it returns what the server last
// pushed, or "" if it pushed nothing yet.
func (b *Backend) ReadClipboard(ctx context.Context) (string, error) {
	if err := b.ready(); err != nil {
		return "", err
	}
	c := &b.clip
	deadline := time.Now().Add(b.opts.UpdateTimeout)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owned {
		return c.ours, nil
	}
	f := c.serverFlags
	if f&clipCaps == 0 {
		return c.remote, nil
	}
	// waitFor sends msg and waits until cond holds after a server message.
	waitFor := func(msg []byte, what string, cond func() bool) error {
		seq := c.seq
		if err := b.writeMsg(msg); err != nil {
			return err
		}
		for !(c.seq > seq && cond()) {
			if c.err != nil {
				return c.err
			}
			ch := c.waitCh()
			c.mu.Unlock()
			var err error
			select {
			case <-ch:
			case <-ctx.Done():
				err = ctx.Err()
			case <-time.After(time.Until(deadline)):
				err = fmt.Errorf("vnc: %s did not answer the clipboard %s within %v: the server may not serve its clipboard (TigerVNC: -SendCutText); check its options", b.addr, what, b.opts.UpdateTimeout)
			}
			c.mu.Lock()
			if err != nil {
				return err
			}
		}
		return nil
	}
	if f&clipPeek != 0 && f&clipNotify != 0 {
		if err := waitFor(extMsg(clipPeek), "peek", func() bool { return true }); err != nil {
			return "", err
		}
	}
	if c.owned {
		return c.ours, nil
	}
	if c.stale && f&clipRequest != 0 {
		if err := waitFor(extMsg(clipRequest|clipText), "request", func() bool { return !c.stale || c.owned }); err != nil {
			return "", err
		}
	}
	if c.owned {
		return c.ours, nil
	}
	return c.remote, nil
}
