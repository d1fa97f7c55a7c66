package llm

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// MaxResponseBytes caps the body of one provider response. A screenshot
// agent's answer is a few kilobytes; 32 MiB leaves room for verbose
// reasoning models while keeping a runaway or hostile server from filling
// memory (a 200 MB body once took the server to 2.7 GB).
const MaxResponseBytes = 32 << 20

// ErrResponseTooLarge is wrapped by the error of a provider response whose
// body exceeds its cap. It is not retried: the same request would most
// likely get the same answer.
var ErrResponseTooLarge = errors.New("provider response too large")

// LimitResponses returns a client that behaves like hc (nil: a zero
// http.Client) except that every response body is capped at max
// bytes: a declared Content-Length beyond it fails at once, and reading past
// it fails, both with an error wrapping ErrResponseTooLarge. hc is not changed.
func LimitResponses(hc *http.Client, max int64) *http.Client {
	c := &http.Client{}
	if hc != nil {
		cp := *hc
		c = &cp
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &limitTransport{next: next, max: max}
	return c
}

type limitTransport struct {
	next http.RoundTripper
	max  int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if resp.ContentLength > t.max {
		_ = resp.Body.Close()
		return nil, tooLarge(t.max, fmt.Sprintf("it declares %d bytes", resp.ContentLength))
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

func tooLarge(max int64, detail string) error {
	return fmt.Errorf("%w: %s, over the %d MiB cap (the provider or a proxy misbehaves; check the model's base URL)", ErrResponseTooLarge, detail, max>>20)
}

// limitedBody reads at most max bytes of rc and fails past them.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, tooLarge(b.max, "its body goes on past the cap")
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
