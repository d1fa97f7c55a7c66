package platform

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"sync"
	"time"
)

// Command is an application started on a display (the --session-command of a
// desktop-per-session server), with its process group.
type Command struct {
	cmd      *exec.Cmd
	exited   chan struct{}
	stopOnce sync.Once
}

// StartCommand runs cmdline through the shell (sh -c) with DISPLAY set to
// display and every other variable inherited; its standard output and error go
// to out. The command and everything it starts form one process group that
// Stop ends.
func StartCommand(display, cmdline string, out io.Writer) (*Command, error) {
	return StartCommandIn("", display, cmdline, out)
}

// StartCommandIn is StartCommand in the working directory dir ("" = the
// current one).
func StartCommandIn(dir, display, cmdline string, out io.Writer) (*Command, error) {
	if cmdline == "" {
		return nil, errors.New("the session command is empty")
	}
	shell, flag := "/bin/sh", "-c"
	if runtime.GOOS == "windows" {
		shell, flag = "cmd.exe", "/C"
	}
	cmd := exec.Command(shell, flag, cmdline)
	cmd.Env = append(cmd.Environ(), "DISPLAY="+display) // the inherited environment, DISPLAY replaced (the last one wins)
	cmd.Stdout, cmd.Stderr, cmd.Dir = out, out, dir
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the session command %q: %w", cmdline, err)
	}
	c := &Command{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.exited) }()
	return c, nil
}

// Exited is closed when the command's process has exited and been reaped.
func (c *Command) Exited() <-chan struct{} { return c.exited }

// ExitCode is the command's exit status once Exited is closed (-1 when a
// signal ended it), and -1 while it runs.
func (c *Command) ExitCode() int {
	select {
	case <-c.exited:
		return c.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Pid returns the process id of the shell running the command.
func (c *Command) Pid() int { return c.cmd.Process.Pid }

// Stop terminates the command's process group (SIGTERM, then SIGKILL after
// 2 s) and waits until the command has been reaped. It is safe to call more
// than once.
func (c *Command) Stop() {
	if c == nil {
		return
	}
	c.stopOnce.Do(func() {
		signalGroup(c.cmd, terminateSignal)
		select {
		case <-c.exited:
		case <-time.After(2 * time.Second):
			signalGroup(c.cmd, killSignal)
			<-c.exited
		}
		signalGroup(c.cmd, killSignal) // children that outlived the shell
	})
}
