package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/trace"
)

// HeartbeatInterval is how often an idle event stream sends a comment to keep
// proxies and browsers from closing it.
const HeartbeatInterval = 15 * time.Second

// events streams the current task's events as server-sent events: first what
// the run record of the running task already holds (so a page opened mid-task
// shows its earlier steps), then live events. Each SSE event is named by the
// event kind and carries the event as JSON (images are not included; the live
// screen has its own endpoint).
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request) {
	if d.opts.Subscribe == nil {
		d.unavailable(w, "the live event stream")
		return
	}
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	live, cancel := d.opts.Subscribe()
	defer cancel()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(kind string, data []byte) error {
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, d.clean(data)); err != nil {
			return err
		}
		return rc.Flush()
	}

	// Backfill from the record of the running task.
	var replayedRun string
	var replayedUntil time.Time
	if d.opts.Runs != nil {
		for _, id := range d.opts.Runs.Active() {
			info, err := d.opts.Runs.Get(id)
			if err != nil || info.Kind != trace.KindTask {
				continue
			}
			lines, _, err := trace.ReadLines(info.Dir)
			if err != nil {
				break
			}
			for _, ln := range lines {
				if ln.Kind == trace.KindOverlay {
					continue
				}
				b, _ := json.Marshal(ln)
				if send(ln.Kind, b) != nil {
					return
				}
				replayedRun, replayedUntil = ln.RunID, ln.Time
			}
			break
		}
	}
	if send("ready", []byte(`{}`)) != nil {
		return
	}

	tick := time.NewTicker(HeartbeatInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case ev, ok := <-live:
			if !ok {
				send("end", []byte(`{}`))
				return
			}
			if replayedRun != "" && ev.RunID == replayedRun && !ev.Time.After(replayedUntil) {
				continue // already sent from the record
			}
			if send(string(ev.Kind), eventJSON(ev)) != nil {
				return
			}
		}
	}
}

// eventJSON encodes ev for the stream. Screenshots carry only their frame.
func eventJSON(ev agent.Event) []byte {
	type frameOnly struct {
		Width  int    `json:"width"`
		Height int    `json:"height"`
		Frame  string `json:"frame_id,omitempty"`
	}
	out := struct {
		agent.Event
		Image *frameOnly `json:"image,omitempty"`
	}{Event: ev}
	if ev.Image != nil {
		s := ev.Image.Frame.ImageSize()
		out.Image = &frameOnly{s.W, s.H, ev.Image.Frame.ID}
	}
	b, err := json.Marshal(out)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"kind": string(ev.Kind), "error": err.Error()})
	}
	return b
}
