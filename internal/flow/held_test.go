package flow

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

// cachedAct builds an act step's cache entry replaying acts.
func cachedAct(t *testing.T, path, task string, acts ...action.Action) *Cache {
	t.Helper()
	cache, err := OpenCache(path, ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	var cas []CachedAction
	for _, a := range acts {
		b, err := a.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		cas = append(cas, CachedAction{Action: a, Text: a.String(), JSON: string(b)})
	}
	cache.store(&CacheEntry{Step: 1, Kind: Act, Description: task, Actions: cas})
	return cache
}

// TestReplayedMouseDownIsReleasedWhenTheFlowEnds: a cached act step that
// pressed a button (mouse_down) and never released it leaves nothing held
// once the flow returns, whether the flow passed or failed after the press.
func TestReplayedMouseDownIsReleasedWhenTheFlowEnds(t *testing.T) {
	const task = "hold the slider"
	down := action.Action{Kind: action.MouseDown, Button: 1}
	zoom := action.Action{Kind: action.Zoom, At: &action.Point{Space: geom.SpaceImage, X: 1, Y: 1}, To: &action.Point{Space: geom.SpaceImage, X: 9, Y: 9}}
	for _, c := range []struct {
		name   string
		acts   []action.Action
		status string
	}{
		{"passes", []action.Action{down}, Passed},
		{"fails after the press", []action.Action{down, zoom}, Failed},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := fakeDesk(t)
			r := fakeRunner(t, b, nil, nil, nil)
			f := mustParse(t, "name: hold\nsteps:\n  - act: "+task+"\n", nil)
			cache := cachedAct(t, filepath.Join(t.TempDir(), "hold.cache.yaml"), task, c.acts...)
			res := r.Run(context.Background(), f, nil, cache)
			if res.Status != c.status {
				t.Fatalf("flow %s (%s), want %s", res.Status, res.Summary, c.status)
			}
			if len(res.Steps) != 1 || len(res.Steps[0].Actions) == 0 || res.Steps[0].Actions[0].Action.Kind != action.MouseDown || !res.Steps[0].Actions[0].OK() {
				t.Fatalf("the cached mouse_down was not replayed: %+v", res.Steps)
			}
			if keys, buttons := b.Pressed(); len(keys)+len(buttons) > 0 {
				t.Errorf("after the flow returned, the desktop still holds keys %v and buttons %v", keys, buttons)
			}
		})
	}
}

// TestReplayedMoveWithoutAPointFails: a cached move with no point used to do
// nothing and pass; it is an action the executor cannot perform.
func TestReplayedMoveWithoutAPointFails(t *testing.T) {
	b := fakeDesk(t)
	r := fakeRunner(t, b, nil, nil, nil)
	f := mustParse(t, "name: move\nsteps:\n  - act: move somewhere\n", nil)
	cache := cachedAct(t, filepath.Join(t.TempDir(), "move.cache.yaml"), "move somewhere", action.Action{Kind: action.Move})
	res := r.Run(context.Background(), f, nil, cache)
	if res.Status != Failed || len(res.Steps) != 1 || res.Steps[0].Error == "" {
		t.Fatalf("a move without a point: flow %s (%s), want failed naming the missing point", res.Status, res.Summary)
	}
}
