package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Retry policy defaults (see RetryPolicy).
const (
	DefaultAttempts  = 4
	DefaultRetryBase = 500 * time.Millisecond
	DefaultRetryMax  = 30 * time.Second
)

// withDefaults fills the zero fields of p.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultAttempts
	}
	if p.Base <= 0 {
		p.Base = DefaultRetryBase
	}
	if p.Max <= 0 {
		p.Max = DefaultRetryMax
	}
	return p
}

// Test seams: the wait and the jitter source.
var (
	sleepCtx = func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	jitter = func(n int64) int64 { return rand.Int64N(n) }
)

// Do calls fn until it succeeds, returns an error that is not retryable (see
// Retryable), ctx ends, or p.Attempts tries are used. Between tries it waits the
// error's Retry-After (capped by p.Max) or a full-jitter exponential backoff:
// a random duration in [0, min(p.Max, p.Base*2^(try-1))). The wait ends early,
// with ctx's error, when ctx is done. The last error is returned wrapped, so
// errors.As finds an *APIError and errors.Is finds ErrBadOutput.
func Do(ctx context.Context, p RetryPolicy, fn func(ctx context.Context) error) error {
	p = p.withDefaults()
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			if errors.Is(err, ctx.Err()) {
				return err
			}
			return fmt.Errorf("%w (stopped: %w)", err, ctx.Err())
		}
		if !Retryable(err) {
			return err
		}
		if attempt >= p.Attempts {
			return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		wait := backoff(p, attempt)
		var ae *APIError
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			wait = min(ae.RetryAfter, p.Max)
		}
		if p.OnRetry != nil {
			p.OnRetry(attempt, err, wait)
		}
		if werr := sleepCtx(ctx, wait); werr != nil {
			return fmt.Errorf("waiting %v to retry after %w: %w", wait.Round(time.Millisecond), err, werr)
		}
	}
}

// backoff returns the full-jitter wait after the given failed attempt (1-based).
func backoff(p RetryPolicy, attempt int) time.Duration {
	ceil := p.Max
	if shift := attempt - 1; shift < 32 {
		if d := p.Base << shift; d > 0 && d < ceil {
			ceil = d
		}
	}
	if ceil <= 0 {
		return 0
	}
	return time.Duration(jitter(int64(ceil)))
}

// Retryable reports whether a provider call that failed with err may succeed
// if repeated: a retryable *APIError (429, 5xx, overloaded; not quota or
// authentication), a timed-out attempt, a reset or refused connection, or a
// connection closed mid-response. Cancellation and ErrBadOutput are not retryable.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, ErrBadOutput) || errors.Is(err, ErrResponseTooLarge) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Retryable()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true // one attempt's timeout; Do checks the caller's own deadline first
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// ParseRetryAfter parses a Retry-After header value: delay seconds ("2",
// "1.5") or an HTTP date, relative to now. ok is false for an empty or
// malformed value; a date in the past gives 0 with ok true.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs > 1e7 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(0, t.Sub(now)), true
}

// RetryAfterFrom reads the server's requested wait from response headers:
// retry-after-ms (OpenAI) first, then Retry-After. Zero means none was given.
func RetryAfterFrom(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v >= 0 && v < 1e10 {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	d, _ := ParseRetryAfter(h.Get("Retry-After"), now)
	return d
}
