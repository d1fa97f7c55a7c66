package hosting

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Health endpoints (Kubernetes liveness and readiness probes) and metrics.
const (
	// HealthzPath answers 200 while the process serves HTTP (liveness).
	HealthzPath = "/healthz"
	// ReadyzPath answers 200 when the desktop (or every live desktop) answers
	// a capture, else 503 (readiness).
	ReadyzPath = "/readyz"
	// MetricsPath serves the Prometheus text format.
	MetricsPath = "/metrics"
)

// readyTimeout bounds one readiness check.
const readyTimeout = 5 * time.Second

// handleHealth registers /healthz, /readyz and, when o.Metrics is set,
// /metrics on mux. The health endpoints need no token and say nothing but
// "ok" or that the desktop does not answer; /metrics needs the token unless
// o.MetricsPublic.
func (g Guard) handleHealth(mux *http.ServeMux, o HTTPOptions, ready func(context.Context) error) {
	mux.HandleFunc(HealthzPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc(ReadyzPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := ready(ctx); err != nil {
			// The reason goes to the log only: the endpoint has no token.
			g.Log.Warn("readiness check failed", "err", err)
			http.Error(w, "not ready: the desktop does not answer a capture", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	if o.Metrics == nil {
		return
	}
	if o.MetricsPublic {
		mux.Handle(MetricsPath, o.Metrics)
	} else {
		mux.Handle(MetricsPath, g.RequireToken(o.Token, o.Metrics))
	}
}
