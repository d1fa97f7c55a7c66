package vision

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
)

// stepClock is a fake Clock: After moves its time forward at once, so a
// wait's checks fall at exact instants however slow the machine is.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// screenAt is a display whose screen changes at one instant of clock: before
// it the condition does not hold, from then on it does. judge is the Seer.
type screenAt struct {
	clock   *stepClock
	start   time.Time
	changes time.Duration // < 0: never
	asserts int
}

func (s *screenAt) changed() bool {
	return s.changes >= 0 && s.clock.Now().Sub(s.start) >= s.changes
}

func (s *screenAt) thumb() imaging.Thumb {
	var th imaging.Thumb
	if s.changed() {
		th[0] = 200 // one cell far brighter: a changed screen
	}
	return th
}

func (s *screenAt) look() Look {
	return Look{
		Shoot: func(context.Context) (llm.Image, imaging.Thumb, error) {
			return llm.Image{}, s.thumb(), nil
		},
		Thumb: func(context.Context) (imaging.Thumb, error) { return s.thumb(), nil },
		Clock: s.clock,
	}
}

func (s *screenAt) Locate(context.Context, llm.Image, string) (Location, llm.Usage, error) {
	return Location{}, llm.Usage{}, errors.New("not used")
}

func (s *screenAt) Query(context.Context, llm.Image, string, json.RawMessage) (Answer, llm.Usage, error) {
	return Answer{}, llm.Usage{}, errors.New("not used")
}

// Assert passes when the screenshot was taken after the change.
func (s *screenAt) Assert(context.Context, llm.Image, string) (Verdict, llm.Usage, error) {
	s.asserts++
	if s.changed() {
		return Verdict{Pass: true, Reason: "it is there"}, llm.Usage{Calls: 1}, nil
	}
	return Verdict{Reason: "not yet"}, llm.Usage{Calls: 1}, nil
}

func newScreenAt(changes time.Duration) *screenAt {
	c := &stepClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	return &screenAt{clock: c, start: c.now, changes: changes}
}

func TestWaitForOnAStillScreenAsksOnceAndChecksEveryInterval(t *testing.T) {
	s := newScreenAt(-1)
	r, err := WaitFor(context.Background(), s, s.look(), "the OK button is visible", 1200*time.Millisecond, 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Checks at 0, 250, 500, 750 and 1000 ms; the next (1250 ms) is past the timeout.
	if r.Met || r.Checks != 5 || r.ModelCalls != 1 || s.asserts != 1 || r.Elapsed != time.Second {
		t.Fatalf("still screen: %+v (%d asserts); want not met after 5 checks and 1 model call in 1 s", r, s.asserts)
	}
	if !strings.HasPrefix(r.Reason, "not met after 1.0 s: not yet") {
		t.Errorf("reason %q", r.Reason)
	}
}

func TestWaitForAsksAgainWhenTheScreenChanges(t *testing.T) {
	s := newScreenAt(900 * time.Millisecond)
	r, err := WaitFor(context.Background(), s, s.look(), "the OK button is visible", 10*time.Second, 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Not met at 0 ms; the same screen at 250, 500, 750; changed at 1000 ms: asked again, met.
	if !r.Met || r.Checks != 5 || r.ModelCalls != 2 || s.asserts != 2 || r.Elapsed != time.Second || r.Reason != "it is there" {
		t.Fatalf("screen changing at 900 ms: %+v (%d asserts); want met at the 5th check with 2 model calls", r, s.asserts)
	}
}

func TestWaitForStopsWhenCancelled(t *testing.T) {
	s := newScreenAt(-1)
	ctx, cancel := context.WithCancel(context.Background())
	look := s.look()
	shoot := look.Shoot
	look.Shoot = func(ctx context.Context) (llm.Image, imaging.Thumb, error) {
		cancel() // cancelled while the first check runs
		return shoot(ctx)
	}
	look.Clock = blockedClock{}
	r, err := WaitFor(ctx, s, look, "the OK button is visible", 10*time.Second, 250*time.Millisecond)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled") || r.Checks != 1 {
		t.Fatalf("cancelled wait: %+v, %v", r, err)
	}
}

// blockedClock never lets an interval pass.
type blockedClock struct{}

func (blockedClock) Now() time.Time                       { return time.Unix(0, 0) }
func (blockedClock) After(time.Duration) <-chan time.Time { return nil }
