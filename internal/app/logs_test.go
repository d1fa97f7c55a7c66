package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/secret"
)

// GUI_AGENT_LOG_FORMAT=json gives one JSON object per line, with the task run
// as run_id and the MCP session as session_id whichever package logged them.
func TestJSONLogs(t *testing.T) {
	c := config.Default()
	c.LogFormat = "json"
	c.APIKey = "sk-json-log-secret-0123456789"
	var buf bytes.Buffer
	scrub := secret.NewScrubber(c.Secrets()...)
	log, closeLog, err := newLogger(c, &buf, scrub)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	log.With("session", "s-1").Info("task finished", "run", "r-1", "status", "completed")
	log.Warn("provider said", "err", "bad key "+c.APIKey)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), buf.String())
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatalf("line %q is not JSON: %v", lines[0], err)
	}
	if first["run_id"] != "r-1" || first["session_id"] != "s-1" || first["msg"] != "task finished" || first["level"] != "INFO" {
		t.Errorf("first line %v: want run_id r-1, session_id s-1, msg, level", first)
	}
	var second map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatalf("line %q is not JSON after scrubbing: %v", lines[1], err)
	}
	if strings.Contains(lines[1], c.APIKey) {
		t.Errorf("the API key reached the JSON log: %s", lines[1])
	}
}

func TestCappedWriter(t *testing.T) {
	var buf bytes.Buffer
	w := &cappedWriter{w: &buf, left: 10}
	for _, s := range []string{"12345", "67890ab", "cdef", "ghi"} {
		if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v: want all of it accepted", s, n, err)
		}
	}
	got := buf.String()
	if !strings.HasPrefix(got, "1234567890\n[guiagent: ") || strings.Count(got, "guiagent:") != 1 || strings.Contains(got, "ab") {
		t.Errorf("capped output %q: want the first 10 bytes and one note", got)
	}
}

// TestDeprecationsAreLoggedAtStart: a configuration that relies on a
// deprecated use (GUI_AGENT_COORDINATE_MODE standing in for
// GUI_AGENT_MODEL_COORDINATES) says so, with the replacement, in the log.
func TestDeprecationsAreLoggedAtStart(t *testing.T) {
	c := config.Default()
	c.CoordinateMode = "normalized-1000"
	var buf bytes.Buffer
	a, err := newBase(c, Extra{Log: &buf})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if got := buf.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "GUI_AGENT_MODEL_COORDINATES=normalized-1000") {
		t.Errorf("start-up log %q: want a warning naming GUI_AGENT_MODEL_COORDINATES=normalized-1000", got)
	}
}
