package hosting

import (
	"bytes"
	"encoding/json"
	"sync"
)

// maxCallsInFlight is how many stdio calls may be read and not yet answered.
// At the cap the server reads no further request until one is answered, and
// it reads none while an answer waits to be written: a client that stops
// reading stdout (or floods requests) cannot make the server run and buffer
// calls without bound.
const maxCallsInFlight = 32

// maxTrackedID is the longest id (in JSON) the stdio transport counts; a
// call with a longer id is served but not counted.
const maxTrackedID = 256

// flight is the stdio backpressure state, shared by the writer (answers
// written) and the line reader (calls read).
type flight struct {
	mu      sync.Mutex
	changed *sync.Cond
	calls   map[string]bool // canonical ids of calls read and not answered
	busy    int             // writes under way
}

func (f *flight) lockedInit() {
	if f.changed == nil {
		f.changed = sync.NewCond(&f.mu)
		f.calls = map[string]bool{}
	}
}

func (f *flight) writing(d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lockedInit()
	f.busy += d
	f.changed.Broadcast()
}

// pendingWrites is the number of writes under way.
func (f *flight) pendingWrites() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.busy
}

// wait returns once no write is under way and fewer than maxCallsInFlight
// calls are unanswered. A write to a client that reads takes microseconds.
func (f *flight) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lockedInit()
	for f.busy > 0 || len(f.calls) >= maxCallsInFlight {
		f.changed.Wait()
	}
}

// read notes a message passed on to the SDK: a call is now in flight, and a
// cancellation ends the call it names (the SDK may never answer that one).
func (f *flight) read(msg []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lockedInit()
	if id, ok := canonicalID(m.ID); ok {
		f.calls[id] = true
	}
	if m.Method == "notifications/cancelled" {
		if id, ok := canonicalID(m.Params.RequestID); ok {
			delete(f.calls, id)
			f.changed.Broadcast()
		}
	}
}

// answered notes the responses in one written message.
func (f *flight) answered(p []byte) {
	ids := responseIDs(p)
	if len(ids) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lockedInit()
	for _, id := range ids {
		delete(f.calls, id)
	}
	f.changed.Broadcast()
}

// responseIDs returns the ids of the responses in a message the server
// writes. The SDK writes "jsonrpc", "id", then "method" (a request or
// notification of its own) or "result"/"error" (a response), so a single
// message is told from its first tokens without decoding a large result.
func responseIDs(p []byte) []string {
	p = bytes.TrimSpace(p)
	if len(p) == 0 {
		return nil
	}
	if p[0] == '[' { // a batch's answers (protocols before 2025-06-18)
		var items []struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		var ids []string
		if json.Unmarshal(p, &items) == nil {
			for _, it := range items {
				if id, ok := canonicalID(it.ID); ok && it.Method == nil {
					ids = append(ids, id)
				}
			}
		}
		return ids
	}
	dec := json.NewDecoder(bytes.NewReader(p[:min(len(p), 2*maxTrackedID+64)]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var id string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		switch key {
		case "jsonrpc":
			if _, err := dec.Token(); err != nil {
				return nil
			}
		case "id":
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return nil
			}
			var ok bool
			if id, ok = canonicalID(raw); !ok {
				return nil
			}
		case "result", "error":
			if id == "" {
				return nil
			}
			return []string{id}
		default:
			return nil
		}
	}
	return nil
}

// canonicalID is an id as the SDK writes it back (5.0 and 5 are one id), or
// false for none, null, or one too long to count.
func canonicalID(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || len(raw) > maxTrackedID || string(raw) == "null" {
		return "", false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch x := v.(type) {
	case float64:
		b, _ := json.Marshal(int64(x))
		return string(b), true
	case string:
		b, _ := json.Marshal(x)
		return string(b), true
	}
	return "", false
}
