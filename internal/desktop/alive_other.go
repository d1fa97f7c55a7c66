//go:build !unix && !windows

package desktop

// processAlive cannot tell on this system, so it assumes the process runs and
// its ledger is left alone.
func processAlive(pid int) bool { return true }
