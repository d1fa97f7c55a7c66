package midscene

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/flow"
)

// Start serves Plan.Serve on loopback (127.0.0.1, a free port) when the
// script has serve:, and points the start navigation at the served page;
// stop ends the server. Without serve: it does nothing.
func (pl *Plan) Start() (stop func(), err error) {
	if pl.Serve == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serving %s: %w", pl.Serve, err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(pl.Serve)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	u := "http://" + ln.Addr().String() + "/" + strings.TrimPrefix(pl.URL, "/")
	if pl.navStep >= 0 && pl.navStep < len(pl.Flow.Steps) {
		pl.Flow.Steps[pl.navStep].Target = u
	}
	return func() { _ = srv.Close() }, nil
}

// StartURL is the page the script opens first ("" when none).
func (pl *Plan) StartURL() string {
	if pl.navStep >= 0 && pl.navStep < len(pl.Flow.Steps) {
		return pl.Flow.Steps[pl.navStep].Target
	}
	return ""
}

// assertResult is aiAssert's output entry, as Midscene's player writes it.
type assertResult struct {
	Pass    bool   `json:"pass"`
	Thought string `json:"thought,omitempty"`
	Message string `json:"message,omitempty"`
}

// Answers is the JSON object Midscene's player writes to its output file:
// each answer under its item's name, or under the next number ("0", "1",
// ...) when it has none, numbers first as JavaScript orders an object's
// keys; a step that did not run, or failed without an answer, has none.
func (pl *Plan) Answers(res flow.Result) json.RawMessage {
	byStep := map[int]flow.StepResult{}
	for _, s := range res.Steps {
		byStep[s.Step] = s
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	next := 0
	for _, r := range pl.Results {
		sr, ok := byStep[r.Step]
		if !ok {
			continue
		}
		var v json.RawMessage
		switch r.Kind {
		case ResultAssert:
			if sr.Status != flow.Passed && sr.Value == "" {
				continue // no verdict: the model could not be asked
			}
			a := assertResult{Pass: sr.Status == flow.Passed, Thought: sr.Value}
			if !a.Pass {
				a.Message = "Assertion failed: " + r.Message + "\nReason: " + sr.Value
			}
			v, _ = json.Marshal(a)
		default:
			if sr.Status != flow.Passed || len(sr.Data) == 0 {
				continue
			}
			v = sr.Data
		}
		key := r.Name
		if key == "" {
			key = strconv.Itoa(next)
			next++
		}
		if _, dup := vals[key]; !dup {
			keys = append(keys, key)
		}
		vals[key] = v
	}
	// JavaScript puts integer-like keys first, ascending; the rest keep
	// their order.
	sort.SliceStable(keys, func(i, j int) bool {
		a, aok := arrayIndex(keys[i])
		b, bok := arrayIndex(keys[j])
		if aok && bok {
			return a < b
		}
		return aok && !bok
	})
	var buf bytes.Buffer
	buf.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			buf.WriteString(",")
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteString(":")
		buf.Write(vals[k])
	}
	buf.WriteString("}")
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return buf.Bytes()
	}
	return out.Bytes()
}

// arrayIndex reports whether k is a canonical non-negative integer.
func arrayIndex(k string) (int, bool) {
	n, err := strconv.Atoi(k)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == k
}

// WriteOutput writes Answers(res) to Plan.Output (its folder made), when
// the script names one.
func (pl *Plan) WriteOutput(res flow.Result) error {
	if pl.Output == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(pl.Output), 0o755); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if err := os.WriteFile(pl.Output, pl.Answers(res), 0o644); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}
