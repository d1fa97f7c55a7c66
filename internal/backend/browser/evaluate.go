package browser

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Evaluate implements desktop.Evaluator: expression is evaluated in the
// active tab's page (a promise awaited) and its value returned by value.
func (b *Backend) Evaluate(ctx context.Context, expression string) (any, error) {
	t, err := b.current(ctx)
	if err != nil {
		return nil, err
	}
	return b.evalPage(ctx, t, expression)
}

var _ desktop.Evaluator = (*Backend)(nil)

// SetCookies implements desktop.CookieSetter through Storage.setCookies in
// the backend's browser context.
func (b *Backend) SetCookies(ctx context.Context, cookies []map[string]any) error {
	if _, err := b.current(ctx); err != nil { // the browser is up
		return err
	}
	b.mu.Lock()
	root, ctxID := b.root, b.ctxID
	b.mu.Unlock()
	p := map[string]any{"cookies": cookies}
	if ctxID != "" {
		p["browserContextId"] = ctxID
	}
	if err := root.call(ctx, "Storage.setCookies", p, nil); err != nil {
		return fmt.Errorf("setting cookies: %w", b.explain(err))
	}
	return nil
}

var _ desktop.CookieSetter = (*Backend)(nil)
