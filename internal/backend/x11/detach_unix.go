//go:build unix

package x11

import "syscall"

// detached puts the clipboard keeper in its own session, so that a signal to
// guiagent's process group (Ctrl+C in a terminal) does not end it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
