package browser

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
)

// The clipboard is the browser's own, the one ctrl+c and ctrl+v in a page
// use: read and written through navigator.clipboard in the active tab
// (clipboard permissions are granted to the backend's browser context).
// Where a page cannot reach it (no focus, an opaque origin, an attached
// browser without the grant), the backend keeps the text itself.

// WriteClipboard implements desktop.Clipboard.
func (b *Backend) WriteClipboard(ctx context.Context, text string) error {
	b.mu.Lock()
	b.clip = text
	b.mu.Unlock()
	t, err := b.current(ctx)
	if err != nil {
		return err
	}
	q, _ := json.Marshal(text)
	_, err = b.evalPage(ctx, t, "navigator.clipboard.writeText("+string(q)+").then(() => true)")
	b.mu.Lock()
	b.clipLocal = err != nil
	b.mu.Unlock()
	return nil
}

// ReadClipboard implements desktop.Clipboard.
func (b *Backend) ReadClipboard(ctx context.Context) (string, error) {
	t, err := b.current(ctx)
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	local := b.clipLocal
	b.mu.Unlock()
	if local {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.clip, nil
	}
	v, err := b.evalPage(ctx, t, "navigator.clipboard.readText()")
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		return b.clip, nil
	}
	s, ok := v.(string)
	if !ok {
		return b.clip, nil
	}
	return s, nil
}

// evalPage runs a product-side expression in the page (awaiting a
// promise, as a user gesture) and returns its value.
func (b *Backend) evalPage(ctx context.Context, t *tab, expr string) (any, error) {
	var r evalResult
	err := t.s.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true,
		"userGesture": true, "returnByValue": true}, &r)
	if err != nil {
		return nil, b.explain(err)
	}
	if err := r.err(); err != nil {
		return nil, fmt.Errorf("the page: %w", err)
	}
	return r.Result.Value, nil
}

var _ desktop.Clipboard = (*Backend)(nil)
