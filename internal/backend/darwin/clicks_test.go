package darwin

import (
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
)

func TestClickStatesCountUpLikeARealMouse(t *testing.T) {
	c := clickCounter{interval: 500 * time.Millisecond}
	t0 := time.Unix(1000, 0)
	var got []int
	// desktop.Input.Click(count=3): down/up three times at one place.
	for i := range 3 {
		now := t0.Add(time.Duration(i) * 60 * time.Millisecond)
		got = append(got, c.down(desktop.Left, 100, 200, now), c.up(desktop.Left))
	}
	want := []int{1, 1, 2, 2, 3, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("click states %v, want %v", got, want)
		}
	}
}

func TestClickSequenceBreaks(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name   string
		second func(c *clickCounter) int
		want   int
	}{
		{"too slow", func(c *clickCounter) int { return c.down(desktop.Left, 100, 200, t0.Add(600*time.Millisecond)) }, 1},
		{"other button", func(c *clickCounter) int { return c.down(desktop.Right, 100, 200, t0.Add(50*time.Millisecond)) }, 1},
		{"far away", func(c *clickCounter) int { return c.down(desktop.Left, 140, 200, t0.Add(50*time.Millisecond)) }, 1},
		{"jitter within slop", func(c *clickCounter) int { return c.down(desktop.Left, 102, 197, t0.Add(50*time.Millisecond)) }, 2},
		{"moved away and back", func(c *clickCounter) int {
			c.moved(300, 300)
			c.moved(100, 200)
			return c.down(desktop.Left, 100, 200, t0.Add(50*time.Millisecond))
		}, 1},
		{"clock went back", func(c *clickCounter) int { return c.down(desktop.Left, 100, 200, t0.Add(-time.Second)) }, 1},
	}
	for _, tc := range cases {
		c := clickCounter{interval: 500 * time.Millisecond}
		c.down(desktop.Left, 100, 200, t0)
		c.up(desktop.Left)
		if got := tc.second(&c); got != tc.want {
			t.Errorf("%s: click state %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestClickCounterDefaultsAndUnseenRelease(t *testing.T) {
	var c clickCounter // zero interval means the 500 ms default
	t0 := time.Unix(1000, 0)
	c.down(desktop.Left, 0, 0, t0)
	if got := c.down(desktop.Left, 0, 0, t0.Add(400*time.Millisecond)); got != 2 {
		t.Fatalf("second press after 400 ms with the default interval: state %d, want 2", got)
	}
	if got := c.up(desktop.Middle); got != 1 {
		t.Fatalf("release of a button never pressed: state %d, want 1", got)
	}
}
