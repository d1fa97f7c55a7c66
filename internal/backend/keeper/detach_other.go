//go:build !unix

package keeper

import "syscall"

// detached has nothing to add where there are no sessions.
func detached() *syscall.SysProcAttr { return nil }
