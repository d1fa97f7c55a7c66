//go:build !unix

package x11

import "syscall"

// detached has nothing to add where there are no sessions.
func detached() *syscall.SysProcAttr { return nil }
