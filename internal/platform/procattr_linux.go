package platform

import (
	"os/exec"
	"syscall"
)

// terminateSignal asks an X server to shut down cleanly.
var terminateSignal = syscall.SIGTERM

// setProcAttr puts child servers in their own process group and kills them
// when this process dies, so that no server outlives a crashed test binary.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
