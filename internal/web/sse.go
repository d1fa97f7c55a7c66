package web

import (
	"fmt"
	"net/http"
	"time"
)

// stream is one server-sent event stream of the dashboard.
type stream struct {
	d  *Dashboard
	w  http.ResponseWriter
	rc *http.ResponseController
}

// openStream starts an event stream on w: no write deadline (a stream
// outlives the server's write timeout), no proxy buffering.
func (d *Dashboard) openStream(w http.ResponseWriter) *stream {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &stream{d: d, w: w, rc: rc}
}

// send writes one event named kind whose data (JSON) goes through the
// dashboard's scrubber.
func (s *stream) send(kind string, data []byte) error {
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", kind, s.d.clean(data)); err != nil {
		return err
	}
	return s.rc.Flush()
}

// pump sends "ready", then each value of live through each until the request
// ends or a write fails, with a heartbeat every HeartbeatInterval; "end"
// when live closes.
func pump[T any](s *stream, r *http.Request, live <-chan T, each func(T) error) {
	if s.send("ready", []byte(`{}`)) != nil {
		return
	}
	tick := time.NewTicker(HeartbeatInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(s.w, ": keep-alive\n\n"); err != nil || s.rc.Flush() != nil {
				return
			}
		case v, ok := <-live:
			if !ok {
				s.send("end", []byte(`{}`))
				return
			}
			if each(v) != nil {
				return
			}
		}
	}
}
