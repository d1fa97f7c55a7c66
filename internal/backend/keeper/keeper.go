// Package keeper starts a clipboard keeper for the X11 and Wayland backends:
// a detached copy of this executable that goes on offering a clipboard the
// backend held when it closed (a selection dies with its owner), and exits as
// soon as another client takes the clipboard or the display goes away. What
// the keeper does is the backend's; starting it and knowing when it holds the
// clipboard are here.
package keeper

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// StartTimeout bounds the wait for a keeper to hold the clipboard.
const StartTimeout = 5 * time.Second

// Owned is the line a keeper prints on its standard output once it holds
// the clipboard; anything else it prints is why it could not.
const Owned = "owned"

// RunIfAsked, called from a backend's init, makes this process the keeper
// when it was started as one (Start with arg first): it runs run with the
// second argument, the standard input and output, and exits with its code.
func RunIfAsked(arg string, run func(display string, r io.Reader, w io.Writer) int) {
	if len(os.Args) == 3 && os.Args[1] == arg {
		os.Exit(run(os.Args[2], os.Stdin, os.Stdout))
	}
}

// Start runs this executable with args and env (only what connecting to the
// display needs: a keeper gets no API keys), in a session of its own and in
// the temporary directory, hands it content gob-encoded on its standard
// input, and returns once it says Owned. Otherwise the keeper is killed and
// the error says why.
func Start(args, env []string, content any) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this executable to start a clipboard keeper: %w", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = env
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would be this process's environment
	}
	cmd.Dir = os.TempDir() // do not keep the caller's directory busy
	cmd.SysProcAttr = detached()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start a clipboard keeper: %w", err)
	}
	werr := gob.NewEncoder(stdin).Encode(content)
	stdin.Close()
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- strings.TrimSpace(line)
	}()
	select {
	case line := <-ready:
		if line == Owned && werr == nil {
			go func() { _ = cmd.Wait() }() // reap it if this process outlives it
			return nil
		}
		err = fmt.Errorf("the clipboard keeper failed: %w", errors.Join(werr, errors.New(line)))
	case <-time.After(StartTimeout):
		err = fmt.Errorf("the clipboard keeper did not take the clipboard within %v", StartTimeout)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return err
}
