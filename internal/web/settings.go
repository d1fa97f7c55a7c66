package web

import "net/http"

// mountSettings serves Options.Settings at /api/settings (GET, PUT) and
// /api/displays (GET), behind the same authentication as every dashboard API:
// the bearer token of /mcp or the dashboard's session cookie. A PUT changes
// state, so it must also be same-origin, like POST /api/stop.
func (d *Dashboard) mountSettings() {
	h := d.opts.Settings
	if h == nil {
		unavailable := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "503 the settings API is not available in this server", http.StatusServiceUnavailable)
		})
		h = unavailable
	}
	d.mux.Handle("GET /api/settings", d.auth(h))
	d.mux.Handle("PUT /api/settings", d.auth(d.sameOrigin(h)))
	d.mux.Handle("GET /api/displays", d.auth(h))
}
