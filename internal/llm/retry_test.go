package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// fakeClock replaces the retry wait: it records waits without sleeping.
func fakeClock(t *testing.T) *[]time.Duration {
	var waits []time.Duration
	old := sleepCtx
	sleepCtx = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	t.Cleanup(func() { sleepCtx = old })
	return &waits
}

func failing(errs ...error) (func(context.Context) error, *int) {
	n := 0
	return func(context.Context) error {
		n++
		if n <= len(errs) {
			return errs[n-1]
		}
		return nil
	}, &n
}

func TestDoHonoursRetryAfterCappedByMax(t *testing.T) {
	waits := fakeClock(t)
	fn, n := failing(
		&APIError{StatusCode: 429, RetryAfter: 2 * time.Second},
		&APIError{StatusCode: 503, RetryAfter: time.Hour},
	)
	if err := Do(context.Background(), RetryPolicy{Max: 10 * time.Second}, fn); err != nil {
		t.Fatal(err)
	}
	if *n != 3 || len(*waits) != 2 || (*waits)[0] != 2*time.Second || (*waits)[1] != 10*time.Second {
		t.Fatalf("calls %d, waits %v; want 3 calls waiting 2s then the 10s cap", *n, *waits)
	}
}

func TestDoBackoffIsCappedExponentialJitter(t *testing.T) {
	waits := fakeClock(t)
	oldJ := jitter
	jitter = func(n int64) int64 { return n - 1 } // the top of each range
	t.Cleanup(func() { jitter = oldJ })
	errs := []error{}
	for range 5 {
		errs = append(errs, &APIError{StatusCode: 500})
	}
	fn, n := failing(errs...)
	err := Do(context.Background(), RetryPolicy{Attempts: 6, Base: 100 * time.Millisecond, Max: time.Second}, fn)
	if err != nil || *n != 6 {
		t.Fatalf("err %v after %d calls", err, *n)
	}
	want := []time.Duration{100, 200, 400, 800, 1000}
	for i, w := range want {
		if got := (*waits)[i]; got != w*time.Millisecond-1 {
			t.Fatalf("wait %d = %v, want just under %v (waits %v)", i, got, w*time.Millisecond, *waits)
		}
	}
}

func TestDoStopsOnNonRetryable(t *testing.T) {
	waits := fakeClock(t)
	for _, e := range []error{
		&APIError{StatusCode: 401, Type: "invalid_api_key"},
		&APIError{StatusCode: 429, Type: "insufficient_quota"},
		&APIError{StatusCode: 400},
		fmt.Errorf("%w: missing status", ErrBadOutput),
		context.Canceled,
	} {
		fn, n := failing(e, e)
		err := Do(context.Background(), RetryPolicy{}, fn)
		if *n != 1 || !errors.Is(err, e) {
			t.Fatalf("%v: %d calls, err %v; want one call returning it", e, *n, err)
		}
	}
	if len(*waits) != 0 {
		t.Fatalf("waited %v for non-retryable errors", *waits)
	}
}

func TestDoGivesUpAfterAttempts(t *testing.T) {
	fakeClock(t)
	e := &APIError{StatusCode: 529, Type: "overloaded_error"}
	fn, n := failing(e, e, e, e, e)
	err := Do(context.Background(), RetryPolicy{Attempts: 3}, fn)
	var ae *APIError
	if *n != 3 || !errors.As(err, &ae) || ae.StatusCode != 529 {
		t.Fatalf("%d calls, err %v; want 3 calls and the 529", *n, err)
	}
}

func TestDoRetriesTimeoutsAndResets(t *testing.T) {
	fakeClock(t)
	fn, n := failing(
		fmt.Errorf("attempt: %w", context.DeadlineExceeded),
		fmt.Errorf("read: %w", syscall.ECONNRESET),
		io.ErrUnexpectedEOF,
	)
	if err := Do(context.Background(), RetryPolicy{}, fn); err != nil || *n != 4 {
		t.Fatalf("err %v after %d calls; want success on the 4th", err, *n)
	}
}

func TestDoCancelInterruptsWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	fn, n := failing(&APIError{StatusCode: 429, RetryAfter: time.Minute})
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	err := Do(ctx, RetryPolicy{Max: time.Hour}, fn)
	if !errors.Is(err, context.Canceled) || *n != 1 {
		t.Fatalf("err %v after %d calls; want Canceled", err, *n)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the one-minute wait was not interrupted (%v)", el)
	}
}

func TestDoCallerDeadlineIsNotRetried(t *testing.T) {
	fakeClock(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	fn, n := failing(ctx.Err(), ctx.Err())
	if err := Do(ctx, RetryPolicy{}, fn); !errors.Is(err, context.DeadlineExceeded) || *n != 1 {
		t.Fatalf("err %v after %d calls", err, *n)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 0.5 ", 500 * time.Millisecond, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"soon", 0, false},
		{"-4", 0, false},
	} {
		got, ok := ParseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %v,%v want %v,%v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	h := http.Header{}
	h.Set("Retry-After", "7")
	h.Set("Retry-After-Ms", "250")
	if got := RetryAfterFrom(h, now); got != 250*time.Millisecond {
		t.Errorf("RetryAfterFrom prefers retry-after-ms: got %v", got)
	}
}
