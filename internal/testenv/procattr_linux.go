package testenv

import (
	"os/exec"
	"syscall"
)

// DieWithTest has the kernel kill cmd, not started yet, when the test binary
// dies (its other process attributes are kept): a test that panics (a
// -timeout, say) runs no cleanup, and the applications and buses it started
// would otherwise live on, a GTK application drawing its animations and
// taking processor time from the tests and benchmarks that come after.
func DieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
