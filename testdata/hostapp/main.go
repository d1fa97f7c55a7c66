// Command hostapp is a program outside the guiagent module that imports only
// its public package, as a host application would. guiagent's tests build
// and run it (see hostapp_test.go at the module root).
//
// It starts guiagent on a private display, starts the application to operate
// there (the command in HOSTAPP_APP, given the display as its last
// argument), runs a task with the model GUI_AGENT_* names, takes a
// screenshot and clicks at a point of it. It prints one JSON object per line:
// what it did and what the application reported.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/guiagent/guiagent"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hostapp:", err)
		os.Exit(1)
	}
}

func say(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o, _, err := guiagent.LoadOptions(nil, os.Getenv)
	if err != nil {
		return err
	}
	o.VirtualDisplay, o.AlwaysVirtualDisplay = guiagent.Size{Width: 1024, Height: 768}, true
	a, err := guiagent.New(ctx, o)
	if err != nil {
		return err
	}
	defer a.Close()
	say(map[string]any{"display": a.DisplayName()})

	events, stop, err := startApp(ctx, append(strings.Fields(os.Getenv("HOSTAPP_APP")), a.DisplayName()))
	if err != nil {
		return err
	}
	defer stop()
	if _, err := next(events, "ready"); err != nil {
		return err
	}

	res, err := a.Execute(ctx, "click the middle of the screen")
	if err != nil {
		return err
	}
	say(map[string]any{"task": res.Status, "steps": res.Steps, "result": res.Result})
	ev, err := next(events, "click")
	if err != nil {
		return err
	}
	say(map[string]any{"app_saw_task_click": ev})

	shot, err := a.Screenshot(ctx, guiagent.ScreenshotOptions{MaxLongEdge: 512})
	if err != nil {
		return err
	}
	p := shot.Point(100, 50)
	if err := a.Click(ctx, p, guiagent.ClickOptions{}); err != nil {
		return err
	}
	say(map[string]any{"screenshot": []int{shot.Width, shot.Height}, "clicked": p.String()})
	ev, err = next(events, "click")
	if err != nil {
		return err
	}
	say(map[string]any{"app_saw_click": ev})
	return nil
}

// startApp runs the application and returns its JSON event lines.
func startApp(ctx context.Context, argv []string) (<-chan map[string]any, func(), error) {
	if len(argv) < 2 {
		return nil, nil, fmt.Errorf("set HOSTAPP_APP to the application's command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	ch := make(chan map[string]any, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				ch <- ev
			}
		}
	}()
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	return ch, stop, nil
}

// next waits for the application's next event of this kind.
func next(events <-chan map[string]any, kind string) (map[string]any, error) {
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("the application exited before reporting %q", kind)
			}
			if ev["event"] == kind {
				return ev, nil
			}
		case <-timeout:
			return nil, fmt.Errorf("the application reported no %q in 30 s", kind)
		}
	}
}
