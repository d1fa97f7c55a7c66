package config

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

// A desktop per session: flags and environment, defaults, and the clear
// errors for what cannot work.
func TestDesktopPerSession(t *testing.T) {
	c, _, err := Load("serve", []string{"--http", "--desktop-per-session", "1024x768", "--session-command", "xterm", "--max-desktops", "6", "--metrics-public", "--log-format", "json"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.DesktopPerSession != (geom.Size{W: 1024, H: 768}) || c.SessionCommand != "xterm" || c.MaxDesktops != 6 || !c.MetricsPublic || c.LogFormat != "json" {
		t.Errorf("flags not applied: %+v", c)
	}
	c, _, err = Load("serve", []string{"--http"}, env(map[string]string{"GUI_AGENT_DESKTOP_PER_SESSION": "800x600",
		"GUI_AGENT_SESSION_KEEPALIVE_S": "3", "GUI_AGENT_LOG_FORMAT": "json", "GUI_AGENT_METRICS_PUBLIC": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DesktopPerSession != (geom.Size{W: 800, H: 600}) || c.SessionKeepAlive != 3*time.Second || c.MaxDesktops != runtime.NumCPU() || !c.MetricsPublic {
		t.Errorf("environment not applied or defaults wrong: %+v", c)
	}

	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--desktop-per-session", "800x600"}, nil, "needs serve --http"},
		{[]string{"--http", "--session-command", "xterm"}, nil, "needs --desktop-per-session"},
		{[]string{"--http", "--desktop-per-session", "800x600", "--vnc", "host:5900"}, nil, "exclude each other"},
		{[]string{"--http", "--desktop-per-session", "800x600", "--max-desktops", "0"}, nil, "--max-desktops/GUI_AGENT_MAX_DESKTOPS=0"},
		{[]string{"--http", "--desktop-per-session", "big"}, nil, "--desktop-per-session"},
		{[]string{"--http"}, map[string]string{"GUI_AGENT_DESKTOP_PER_SESSION": "0x0"}, "GUI_AGENT_DESKTOP_PER_SESSION"},
		{[]string{"--http"}, map[string]string{"GUI_AGENT_MAX_DESKTOPS": "5000"}, "GUI_AGENT_MAX_DESKTOPS"},
		{[]string{"--http"}, map[string]string{"GUI_AGENT_LOG_FORMAT": "xml"}, "GUI_AGENT_LOG_FORMAT"},
	} {
		_, _, err := Load("serve", tc.args, env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%v, %v): err %v, want one naming %q", tc.args, tc.env, err, tc.want)
		}
	}
}
