package main

import (
	"runtime/debug"

	"github.com/guiagent/guiagent"
)

// versionString is what `guiagent --version` and doctor print: the version
// and the commit the binary was built from (its build information's
// vcs.revision, with "-dirty" when it had uncommitted changes), or a note
// that the build recorded none.
func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	return guiagent.Version + " " + commitOf(bi)
}

// commitOf reads the commit from a binary's build information.
func commitOf(bi *debug.BuildInfo) string {
	var rev, modified string
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	if rev == "" {
		return "(commit unknown: built without version control information, e.g. by go run, go test or -buildvcs=false)"
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return "(commit " + rev + ")"
}
