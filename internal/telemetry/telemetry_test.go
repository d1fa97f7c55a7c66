package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

type stubAdapter struct{ answers []stubAnswer }

type stubAnswer struct {
	dec *llm.Decision
	err error
}

func (s *stubAdapter) Name() string          { return "stub" }
func (s *stubAdapter) Profile() geom.Profile { return geom.Profile{} }
func (s *stubAdapter) NewSession(string) llm.Session {
	return &stubSession{s}
}

type stubSession struct{ a *stubAdapter }

func (s *stubSession) Next(context.Context, llm.Observation) (*llm.Decision, error) {
	a := s.a.answers[0]
	s.a.answers = s.a.answers[1:]
	return a.dec, a.err
}

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// What the server, the task loop and the model adapter report shows up in
// the Prometheus text format with the right labels and counts.
func TestMetricsCount(t *testing.T) {
	sessions, desktops := 3, 2
	m := New(Options{Sessions: func() int { return sessions }, Desktops: func() int { return desktops }})
	m.ToolCall("gui_click", false, 20*time.Millisecond, 0)
	m.ToolCall("gui_click", true, 5*time.Millisecond, 0)
	m.ToolCall("gui_screenshot", false, 40*time.Millisecond, 1234)

	obs := m.Observer()
	obs.OnEvent(agent.Event{Kind: agent.EvScreenshot, Image: &llm.Image{Data: make([]byte, 1000)}})
	obs.OnEvent(agent.Event{Kind: agent.EvFinish, Result: &agent.Result{Status: agent.Completed}})
	obs.OnEvent(agent.Event{Kind: agent.EvFinish, Result: &agent.Result{Status: agent.Failed}})

	ad := m.Adapter(&stubAdapter{answers: []stubAnswer{
		{dec: &llm.Decision{Usage: llm.Usage{Calls: 2, InputTokens: 700, OutputTokens: 30}}},
		{err: errors.New("HTTP 529 overloaded")},
	}})
	if ad.Name() != "stub" {
		t.Errorf("the wrapped adapter is named %q", ad.Name())
	}
	sess := ad.NewSession("task")
	_, _ = sess.Next(context.Background(), llm.Observation{})
	if _, err := sess.Next(context.Background(), llm.Observation{}); err == nil {
		t.Errorf("the wrapper swallowed the model's error")
	}

	out := scrape(t, m)
	for _, want := range []string{
		`guiagent_tool_calls_total{outcome="ok",tool="gui_click"} 1`,
		`guiagent_tool_calls_total{outcome="error",tool="gui_click"} 1`,
		`guiagent_tool_duration_seconds_count{tool="gui_click"} 2`,
		`guiagent_screenshot_bytes_total{source="tool"} 1234`,
		`guiagent_screenshot_bytes_total{source="task"} 1000`,
		`guiagent_tasks_total{status="completed"} 1`,
		`guiagent_tasks_total{status="failed"} 1`,
		`guiagent_model_calls_total{outcome="ok"} 2`,
		`guiagent_model_calls_total{outcome="error"} 1`,
		`guiagent_model_tokens_total{kind="input"} 700`,
		`guiagent_model_tokens_total{kind="output"} 30`,
		`guiagent_model_duration_seconds_count 2`,
		`guiagent_sessions 3`,
		`guiagent_desktops 2`,
		`go_goroutines`,
	} {
		if !strings.Contains(out, want+"\n") && !strings.Contains(out, want+" ") {
			t.Errorf("metrics lack %q", want)
		}
	}
	desktops = 5
	if !strings.Contains(scrape(t, m), "guiagent_desktops 5\n") {
		t.Errorf("the desktops gauge is not read at scrape time")
	}
}
