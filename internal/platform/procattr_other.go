//go:build !linux

package platform

import (
	"os"
	"os/exec"
)

// terminateSignal asks an X server to shut down.
var terminateSignal = os.Kill

// setProcAttr has nothing to add outside Linux.
func setProcAttr(cmd *exec.Cmd) {}

// killSignal ends a process at once.
var killSignal = os.Kill

// signalGroup sends sig to cmd's process (there are no process groups to use here).
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
