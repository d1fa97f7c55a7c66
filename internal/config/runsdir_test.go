package config

import "testing"

func TestRunsDirFor(t *testing.T) {
	cases := []struct {
		goos string
		env  map[string]string
		home string
		want string
	}{
		{"windows", map[string]string{"LOCALAPPDATA": `C:\Users\ann\AppData\Local`}, `C:\Users\ann`, `C:\Users\ann\AppData\Local\guiagent\runs`},
		{"windows", map[string]string{"LOCALAPPDATA": `D:\data\`, "XDG_STATE_HOME": "/s"}, `C:\Users\ann`, `D:\data\guiagent\runs`},
		{"windows", nil, `C:\Users\ann`, `C:\Users\ann\AppData\Local\guiagent\runs`},
		{"darwin", map[string]string{"XDG_STATE_HOME": "/s"}, "/Users/ann", "/Users/ann/Library/Application Support/guiagent/runs"},
		{"linux", nil, "/home/ann", "/home/ann/.local/state/guiagent/runs"},
		{"linux", map[string]string{"XDG_STATE_HOME": "/var/state"}, "/home/ann", "/var/state/guiagent/runs"},
		{"linux", map[string]string{"XDG_STATE_HOME": "relative/state"}, "/home/ann", "/home/ann/.local/state/guiagent/runs"},
		{"freebsd", map[string]string{"XDG_STATE_HOME": "/st"}, "/home/ann", "/st/guiagent/runs"},
	}
	for _, c := range cases {
		if got := RunsDirFor(c.goos, env(c.env), c.home); got != c.want {
			t.Errorf("RunsDirFor(%s, %v, %q) = %q, want %q", c.goos, c.env, c.home, got, c.want)
		}
	}
}
