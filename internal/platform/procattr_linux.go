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

// killSignal ends a process at once.
var killSignal = syscall.SIGKILL

// signalGroup sends sig to cmd's process group (setProcAttr made it a group leader).
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
