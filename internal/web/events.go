package web

import (
	"encoding/json"
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
	live, cancel := d.opts.Subscribe()
	defer cancel()
	st := d.openStream(w)
	send := st.send

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
	pump(st, r, live, func(ev agent.Event) error {
		if replayedRun != "" && ev.RunID == replayedRun && !ev.Time.After(replayedUntil) {
			return nil // already sent from the record
		}
		return send(string(ev.Kind), eventJSON(ev))
	})
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
