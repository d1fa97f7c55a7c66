// The writer queue of a Run: events are queued on the caller's goroutine
// and written, one line each, by the run's writer goroutine.

package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm"
)

func (r *Run) enqueue(it item) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.queue = append(r.queue, it)
	if it.line.Kind == string(agent.EvFinish) {
		r.finishSeen = true
	}
	if it.line.Step > r.liveSteps && (r.kind == KindTask || it.line.Kind == KindTool) {
		r.liveSteps = it.line.Step
	}
	r.lastActivity = time.Now()
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// live returns the step under way (task runs) or the tool calls so far
// (session runs), and when the run last got an event.
func (r *Run) live() (steps int, last time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastActivity.IsZero() {
		return r.liveSteps, r.started
	}
	return r.liveSteps, r.lastActivity
}

// Flush waits until every event queued so far is written.
func (r *Run) Flush() {
	r.mu.Lock()
	for (len(r.queue) > 0 || r.busy) && !r.finished() {
		r.idle.Wait()
	}
	r.mu.Unlock()
}

func (r *Run) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// writer drains the queue until Close, then finalizes the run.
func (r *Run) writer() {
	var timer *time.Timer
	var timerC <-chan time.Time
	dirty := false
	for {
		select {
		case <-r.wake:
		case <-timerC:
			timerC = nil
			if dirty && r.onIdle != nil {
				r.onIdle()
				dirty = false
			}
			continue
		}
		for {
			r.mu.Lock()
			batch := r.queue
			r.queue = nil
			closed := r.closed
			r.busy = len(batch) > 0
			if len(batch) == 0 {
				r.idle.Broadcast()
			}
			r.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					r.finalize()
					r.mu.Lock()
					r.busy = false
					close(r.done)
					r.idle.Broadcast()
					r.mu.Unlock()
					return
				}
				break
			}
			for _, it := range batch {
				r.write(it)
			}
			dirty = true
		}
		if r.onIdle != nil && dirty {
			if timer == nil {
				timer = time.NewTimer(r.onIdleWait)
			} else {
				timer.Reset(r.onIdleWait)
			}
			timerC = timer.C
		}
	}
}

func (r *Run) fail(what string, err error) {
	if err == nil {
		return
	}
	err = fmt.Errorf("trace: run %s: %s: %w", r.id, what, err)
	if r.err == nil {
		r.err = err
		r.log.Error("trace: recording failed; the run record will be incomplete (check free disk space and permissions of the runs folder)", "run", r.id, "err", err)
	}
}

// write processes one event on the writer goroutine.
func (r *Run) write(it item) {
	ln := it.line
	switch ln.Kind {
	case string(agent.EvScreenshot):
		if it.img != nil {
			rec := r.storeImage(it.img, ln.Step)
			ln.Image = &rec
		}
		if ln.Step > r.meta.Steps && r.kind == KindTask {
			r.meta.Steps = ln.Step
		}
	case string(agent.EvModel):
		ln.Files = r.writeModelFiles(ln.Step, ln.Decision, it.req, it.resp)
		ln.Decision = clipRecord(ln.Decision, MaxRecordLineBytes)
	case string(agent.EvStep):
		r.appendLine(ln)
		r.stepDone(ln)
		return
	case string(agent.EvFinish):
		r.result = ln.Result
	case KindTool:
		if it.img != nil {
			rec := r.storeImage(it.img, ln.Step)
			ln.Image = &rec
		}
		r.meta.Steps = ln.Step
		r.appendLine(ln)
		r.drawToolOverlay(ln, it)
		return
	default:
		if it.img != nil {
			rec := r.storeImage(it.img, ln.Step)
			ln.Image = &rec
		}
	}
	r.appendLine(ln)
}

func (r *Run) appendLine(ln Line) {
	if r.events == nil {
		return
	}
	b, err := json.Marshal(ln)
	if err != nil {
		r.fail("encode event", err)
		return
	}
	b = append(r.scrub.Bytes(b), '\n')
	_, err = r.events.Write(b) // one write per line: a killed process leaves whole lines
	r.fail("append to "+EventsFile, err)
}

// writeModelFiles writes steps/NNN/{request,response,parsed,usage}.json.
func (r *Run) writeModelFiles(step int, decision json.RawMessage, req, resp []byte) []string {
	r.modelCalls[step]++
	n := r.modelCalls[step]
	suffix := ""
	if n > 1 {
		suffix = fmt.Sprintf("-%d", n)
	}
	rel := path.Join(StepsDir, fmt.Sprintf("%03d", step))
	dir := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.fail("create step folder", err)
		return nil
	}
	var files []string
	put := func(name string, b []byte) {
		if b == nil {
			return
		}
		name = name + suffix + ".json"
		b = r.scrub.Bytes(clipRecord(prettyJSON(b), MaxRecordFileBytes))
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			r.fail("write "+name, err)
			return
		}
		files = append(files, path.Join(rel, name))
	}
	put("request", r.rewriteRefs(req))
	put("response", resp)
	put("parsed", decision)
	var d llm.Decision
	if json.Unmarshal(decision, &d) == nil {
		put("usage", mustJSON(map[string]any{"usage": d.Usage}))
	}
	return files
}

// rewriteRefs points image references of a request body at the stored files.
func (r *Run) rewriteRefs(body []byte) []byte {
	if len(body) == 0 || len(r.refs) == 0 {
		return body
	}
	olds := make([]string, 0, len(r.refs))
	for o := range r.refs {
		olds = append(olds, o)
	}
	sort.Slice(olds, func(i, j int) bool { return len(olds[i]) > len(olds[j]) })
	pairs := make([]string, 0, 2*len(olds))
	for _, o := range olds {
		pairs = append(pairs, `"`+o+`"`, `"`+r.refs[o]+`"`)
	}
	return []byte(strings.NewReplacer(pairs...).Replace(string(body)))
}

func prettyJSON(b []byte) []byte {
	if !json.Valid(b) {
		return b
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return b
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// stepDone writes the step's usage and timings and its overlay.
func (r *Run) stepDone(ln Line) {
	var st agent.StepTrace
	if json.Unmarshal(ln.StepTrace, &st) != nil {
		return
	}
	if st.Step == 0 {
		st.Step = ln.Step
	}
	if st.Step > r.meta.Steps {
		r.meta.Steps = st.Step
	}
	rel := path.Join(StepsDir, fmt.Sprintf("%03d", st.Step))
	dir := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(dir, 0o700); err == nil {
		acts := make([]map[string]any, len(st.Actions))
		for i, a := range st.Actions {
			acts[i] = map[string]any{"kind": a.Action.Kind, "outcome": a.Outcome, "ms": a.Millis}
		}
		u := mustJSON(map[string]any{"usage": st.Usage, "model_ms": st.ModelMillis, "step_ms": st.StepMillis, "actions": acts})
		r.fail("write usage.json", os.WriteFile(filepath.Join(dir, "usage.json"), prettyJSON(u), 0o600))
	}
	r.drawOverlayFor(st)
}
