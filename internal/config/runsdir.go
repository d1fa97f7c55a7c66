package config

import (
	"path"
	"strings"
)

// RunsDirFor returns where guiagent keeps its run records on the operating
// system goos (runtime.GOOS values), following that system's conventions:
//
//   - windows: %LOCALAPPDATA%\guiagent\runs, or home\AppData\Local\guiagent\runs
//     when LOCALAPPDATA is unset;
//   - darwin: home/Library/Application Support/guiagent/runs;
//   - others: $XDG_STATE_HOME/guiagent/runs when XDG_STATE_HOME is an absolute
//     path (the XDG spec ignores relative ones), else home/.local/state/guiagent/runs.
//
// getenv reads the environment and home is the user's home folder. It is a
// pure function of its arguments.
func RunsDirFor(goos string, getenv func(string) string, home string) string {
	switch goos {
	case "windows":
		base := getenv("LOCALAPPDATA")
		if base == "" {
			base = windowsJoin(home, "AppData", "Local")
		}
		return windowsJoin(base, "guiagent", "runs")
	case "darwin":
		return path.Join(home, "Library", "Application Support", "guiagent", "runs")
	}
	if d := getenv("XDG_STATE_HOME"); strings.HasPrefix(d, "/") {
		return path.Join(d, "guiagent", "runs")
	}
	return path.Join(home, ".local", "state", "guiagent", "runs")
}

// windowsJoin joins path elements with backslashes, whatever OS runs it.
func windowsJoin(base string, elems ...string) string {
	return strings.TrimRight(base, `\/`) + `\` + strings.Join(elems, `\`)
}
