package testenv

import (
	"os/exec"
	"syscall"
)

// DieWithTest has the kernel kill cmd (set before it starts) when the test
// binary dies: a test that panics (a -timeout, say) runs no cleanup, and
// the applications and buses it started would otherwise live on, a GTK
// application drawing its animations and taking processor time from the
// tests and benchmarks that come after.
func DieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
