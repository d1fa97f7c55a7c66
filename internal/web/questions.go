package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/ask"
)

// MaxAnswerBytes bounds the body of POST /api/questions/{id}.
const MaxAnswerBytes = 16 << 10

// The questions API serves Options.Questions, the broker of the questions
// that runs put to a person:
//
//	GET  /api/questions             {"available", "pending": [questions], "recent": [events]}
//	GET  /api/questions/events      server-sent events "asked", "answered", "expired" (ask.Event)
//	GET  /api/questions/{id}/image  the pending question's screenshot
//	POST /api/questions/{id}        {"action": "accept"|"decline"|"cancel", "value": "..."}
//
// The page reloads GET /api/questions on each streamed event (and every few
// seconds, in case the stream dropped one). A secret answer's value goes to
// the broker and nowhere else: neither a response nor the log holds it.
func (d *Dashboard) mountQuestions() {
	d.mux.Handle("GET /api/questions", d.auth(http.HandlerFunc(d.questions)))
	d.mux.Handle("GET /api/questions/events", d.auth(http.HandlerFunc(d.questionEvents)))
	d.mux.Handle("GET /api/questions/{id}/image", d.auth(http.HandlerFunc(d.questionImage)))
	d.mux.Handle("POST /api/questions/{id}", d.auth(d.sameOrigin(http.HandlerFunc(d.answerQuestion))))
}

// questions lists the pending and the recently finished questions. Without a
// broker it answers 200 with available false, so the page can say so without
// a failed request.
func (d *Dashboard) questions(w http.ResponseWriter, r *http.Request) {
	b := d.opts.Questions
	if b == nil {
		d.writeJSON(w, http.StatusOK, map[string]any{"available": false, "pending": []ask.Question{}, "recent": []ask.Event{}})
		return
	}
	d.writeJSON(w, http.StatusOK, map[string]any{"available": true, "pending": b.Pending(), "recent": b.Recent()})
}

// questionImage serves a pending question's screenshot.
func (d *Dashboard) questionImage(w http.ResponseWriter, r *http.Request) {
	if d.opts.Questions == nil {
		d.unavailable(w, "asking questions")
		return
	}
	q, ok := d.opts.Questions.Get(r.PathValue("id"))
	if !ok || len(q.Image) == 0 {
		d.writeJSON(w, http.StatusNotFound, map[string]string{"error": "no screenshot: the question is not pending, or came without one"})
		return
	}
	mime := q.ImageMIME
	if !strings.HasPrefix(mime, "image/") {
		mime = http.DetectContentType(q.Image)
	}
	if !strings.HasPrefix(mime, "image/") {
		mime = "application/octet-stream" // never rendered as a page
	}
	w.Header().Set("Content-Type", mime)
	w.Write(q.Image)
}

// answerRequest is the body of POST /api/questions/{id}.
type answerRequest struct {
	Action ask.Outcome `json:"action"`
	Value  string      `json:"value"`
}

// answerQuestion answers a pending question from the dashboard: 200 when
// this answer won, 409 when the question was answered already or expired,
// 400 when the answer does not fit the question.
func (d *Dashboard) answerQuestion(w http.ResponseWriter, r *http.Request) {
	b := d.opts.Questions
	if b == nil {
		d.unavailable(w, "asking questions")
		return
	}
	id := r.PathValue("id")
	var req answerRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxAnswerBytes))
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			d.writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": fmt.Sprintf("the answer is larger than %d bytes: send a shorter one", MaxAnswerBytes)})
			return
		}
		d.writeJSON(w, http.StatusBadRequest, map[string]string{"error": `the body is not an answer: send JSON {"action": "accept", "value": "..."} (or "decline", "cancel")`})
		return
	}
	q, known := b.Get(id)
	a := ask.Answer{Outcome: req.Action, Value: req.Value, By: ask.ByDashboard}
	err := b.Answer(id, a)
	switch {
	case errors.Is(err, ask.ErrNotPending):
		d.writeJSON(w, http.StatusConflict, map[string]string{"error": d.notPendingMessage(id)})
		return
	case err != nil:
		msg := err.Error()
		if known && q.Secret && req.Value != "" && a.Outcome == ask.Accept {
			msg = "the answer does not fit this " + string(q.Kind) + " question" // never echo a secret
		}
		d.writeJSON(w, http.StatusBadRequest, map[string]string{"error": msg})
		return
	}
	checked, _ := q.Check(a) // as the broker recorded it: trimmed, "yes"/"no" for a confirm
	shown := checked.Value
	if q.Secret && checked.Outcome == ask.Accept {
		shown = ask.Masked(checked.Value)
	}
	d.log.Info("web: question answered from the dashboard", "question", id, "action", string(a.Outcome), "remote", r.RemoteAddr)
	d.writeJSON(w, http.StatusOK, map[string]string{"answered": id, "action": string(a.Outcome), "value": shown, "by": ask.ByDashboard})
}

// notPendingMessage says why question id cannot be answered, from the
// broker's recent events when it knows the question.
func (d *Dashboard) notPendingMessage(id string) string {
	recent := d.opts.Questions.Recent()
	i := slices.IndexFunc(recent, func(ev ask.Event) bool { return ev.Question.ID == id })
	if i < 0 {
		return "the question " + id + " is not pending: it was answered already, expired, or never asked"
	}
	ev := recent[i]
	if ev.Kind == ask.EvExpired || ev.Answer == nil {
		return "the question expired unanswered (timed out, or its run stopped waiting) at " + ev.Time.Format(time.TimeOnly)
	}
	msg := "the question was answered already"
	switch ev.Answer.By {
	case ask.ByClient:
		msg += " from the MCP client"
	case ask.ByDashboard:
		msg += " from the dashboard"
	case "":
	default:
		msg += " by " + ev.Answer.By
	}
	switch ev.Answer.Outcome {
	case ask.Accept:
		msg += ": " + ev.Answer.Value // masked by the broker for a secret
	case ask.Decline:
		msg += " (declined)"
	case ask.Cancel:
		msg += " (cancelled)"
	}
	return msg
}

// questionEvents streams the broker's events as server-sent events named by
// their kind, with a heartbeat like /api/events.
func (d *Dashboard) questionEvents(w http.ResponseWriter, r *http.Request) {
	b := d.opts.Questions
	if b == nil {
		d.unavailable(w, "asking questions")
		return
	}
	live, cancel := b.Subscribe()
	defer cancel()
	st := d.openStream(w)
	pump(st, r, live, func(ev ask.Event) error {
		data, err := json.Marshal(ev)
		if err != nil {
			data, _ = json.Marshal(map[string]string{"kind": ev.Kind, "error": err.Error()})
		}
		return st.send(ev.Kind, data)
	})
}
