//go:build unix

package keeper

import "syscall"

// detached puts the keeper in its own session, so that a signal to
// guiagent's process group (Ctrl+C in a terminal) does not end it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
