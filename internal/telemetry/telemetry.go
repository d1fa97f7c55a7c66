// Package telemetry counts what guiagent does for Prometheus (GET /metrics):
// tool calls by tool and outcome with their latency, tasks by final status,
// model calls, tokens and latency, live sessions and desktops, and screenshot
// bytes. It uses github.com/prometheus/client_golang on a registry of its own.
package telemetry

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// Metrics holds guiagent's collectors. Create it with New; it is safe for
// concurrent use. *Metrics implements mcpserver.Metrics.
type Metrics struct {
	reg          *prometheus.Registry
	toolCalls    *prometheus.CounterVec
	toolSeconds  *prometheus.HistogramVec
	tasks        *prometheus.CounterVec
	modelCalls   *prometheus.CounterVec
	modelTokens  *prometheus.CounterVec
	modelSeconds prometheus.Histogram
	shotBytes    *prometheus.CounterVec
	liveSessions func() int
	liveDesktops func() int
}

// Options gives the live counts the gauges read at scrape time. Nil
// functions read as 0.
type Options struct {
	// Sessions returns the number of open MCP sessions.
	Sessions func() int
	// Desktops returns the number of live desktops (1 for a server with one
	// shared desktop).
	Desktops func() int
}

// New builds the collectors on a new registry, with the Go runtime and
// process collectors.
func New(o Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), liveSessions: o.Sessions, liveDesktops: o.Desktops}
	latency := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "guiagent_tool_calls_total",
		Help: "MCP tool calls by tool and outcome (ok or error)."}, []string{"tool", "outcome"})
	m.toolSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "guiagent_tool_duration_seconds",
		Help: "Duration of MCP tool calls.", Buckets: latency}, []string{"tool"})
	m.tasks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "guiagent_tasks_total",
		Help: "Finished gui_execute_task runs by final status."}, []string{"status"})
	m.modelCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "guiagent_model_calls_total",
		Help: "Model requests of the task loop by outcome (ok or error)."}, []string{"outcome"})
	m.modelTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "guiagent_model_tokens_total",
		Help: "Model tokens by kind (input or output)."}, []string{"kind"})
	m.modelSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "guiagent_model_duration_seconds",
		Help: "Latency of one model step (request, retries included, and parsing).", Buckets: latency})
	m.shotBytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "guiagent_screenshot_bytes_total",
		Help: "Encoded screenshot bytes sent, by source (tool: to MCP clients; task: to the model)."}, []string{"source"})
	gauge := func(name, help string, f *func() int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			if *f == nil {
				return 0
			}
			return float64((*f)())
		})
	}
	m.reg.MustRegister(m.toolCalls, m.toolSeconds, m.tasks, m.modelCalls, m.modelTokens, m.modelSeconds, m.shotBytes,
		gauge("guiagent_sessions", "Open MCP sessions.", &m.liveSessions),
		gauge("guiagent_desktops", "Live desktops.", &m.liveDesktops),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, s := range []string{"tool", "task"} {
		m.shotBytes.WithLabelValues(s)
	}
	for _, s := range []string{"ok", "error"} {
		m.modelCalls.WithLabelValues(s)
	}
	for _, k := range []string{"input", "output"} {
		m.modelTokens.WithLabelValues(k)
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry returns the registry (for tests and extra collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ToolCall counts one MCP tool call.
func (m *Metrics) ToolCall(tool string, failed bool, d time.Duration, screenshotBytes int) {
	outcome := "ok"
	if failed {
		outcome = "error"
	}
	m.toolCalls.WithLabelValues(tool, outcome).Inc()
	m.toolSeconds.WithLabelValues(tool).Observe(d.Seconds())
	if screenshotBytes > 0 {
		m.shotBytes.WithLabelValues("tool").Add(float64(screenshotBytes))
	}
}

// Observer counts a task run's final status and the screenshots it sent to
// the model; add it to every agent.Runner (Runner.AddObserver).
func (m *Metrics) Observer() agent.Observer {
	return agent.ObserverFunc(func(ev agent.Event) {
		switch ev.Kind {
		case agent.EvFinish:
			if ev.Result != nil {
				m.tasks.WithLabelValues(string(ev.Result.Status)).Inc()
			}
		case agent.EvScreenshot:
			if ev.Image != nil {
				m.shotBytes.WithLabelValues("task").Add(float64(len(ev.Image.Data)))
			}
		}
	})
}

// Adapter wraps a model adapter so that every step's model call is counted
// and timed, with its tokens.
func (m *Metrics) Adapter(a llm.Adapter) llm.Adapter { return countingAdapter{a, m} }

type countingAdapter struct {
	llm.Adapter
	m *Metrics
}

func (c countingAdapter) Name() string          { return c.Adapter.Name() }
func (c countingAdapter) Profile() geom.Profile { return c.Adapter.Profile() }

func (c countingAdapter) NewSession(task string) llm.Session {
	return countingSession{c.Adapter.NewSession(task), c.m}
}

type countingSession struct {
	s llm.Session
	m *Metrics
}

func (c countingSession) Next(ctx context.Context, obs llm.Observation) (*llm.Decision, error) {
	start := time.Now()
	dec, err := c.s.Next(ctx, obs)
	c.m.modelSeconds.Observe(time.Since(start).Seconds())
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	calls := 1
	if dec != nil {
		calls = max(dec.Usage.Calls, 1)
		c.m.modelTokens.WithLabelValues("input").Add(float64(dec.Usage.InputTokens))
		c.m.modelTokens.WithLabelValues("output").Add(float64(dec.Usage.OutputTokens))
	}
	c.m.modelCalls.WithLabelValues(outcome).Add(float64(calls))
	return dec, err
}
