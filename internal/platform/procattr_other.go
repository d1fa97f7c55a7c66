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
