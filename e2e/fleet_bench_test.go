package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/testenv"
)

// fleetBench is one `guiagent serve --http --desktop-per-session` process
// with the sample form on every desktop and a fakellm model.
type fleetBench struct {
	addr, state string
	cmd         *exec.Cmd
	model       *fakellm.ChatServer
}

func startFleetBench(b *testing.B, maxDesktops int) *fleetBench {
	testenv.NeedX(b)
	b.Helper()
	fs := fakellm.NewChatServer(fleetBrain, fakellm.ChatOptions{})
	b.Cleanup(fs.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	state := b.TempDir()
	cmd := exec.Command(binary, "serve", "--http", "--addr", addr)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state,
		"GUI_AGENT_HTTP_TOKEN=" + httpToken, "GUI_AGENT_PROVIDER=openai", "GUI_AGENT_MODEL=" + testModel,
		"GUI_AGENT_BASE_URL=" + fs.Root + "/v1", "GUI_AGENT_API_KEY=sk-bench-0123456789",
		"GUI_AGENT_DESKTOP_PER_SESSION=1280x800", "GUI_AGENT_MAX_DESKTOPS=" + strconv.Itoa(maxDesktops),
		"GUI_AGENT_SESSION_COMMAND=echo \"display=$DISPLAY pid=$$\"; exec " + binary + " sample-app --scene form",
		"GUI_AGENT_LOG_LEVEL=warn", "GUI_AGENT_DEBUG_IMAGES=false"}
	logs := &testenv.Buffer{}
	cmd.Stderr = logs
	testenv.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	fb := &fleetBench{addr: addr, state: state, cmd: cmd, model: fs}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if !waitFor(30*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	}) {
		b.Fatalf("guiagent did not answer /healthz:\n%s", logs)
	}
	return fb
}

// connect opens a session (which starts its desktop) and waits until the
// sample app on it is ready.
func (fb *fleetBench) connect(b *testing.B) *mcp.ClientSession {
	b.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: "http://" + fb.addr + "/mcp",
		HTTPClient: &http.Client{Transport: teeTransport{token: httpToken, wire: discard{}}}}
	cs, err := dial(tr, client{name: "bench"}, 60*time.Second)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	log := filepath.Join(fb.state, "guiagent", "desktops", recordIDOf(b, cs), "session-command.log")
	if !waitFor(30*time.Second, func() bool {
		data, _ := os.ReadFile(log)
		return strings.Contains(string(data), `"event":"ready"`)
	}) {
		b.Fatalf("the sample app of session %s did not get ready", cs.ID())
	}
	return cs
}

// metric reads one sample of the server's /metrics.
func (fb *fleetBench) metric(b *testing.B, name string) float64 {
	b.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+fb.addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+httpToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	b.Fatalf("/metrics has no %s", name)
	return 0
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkFleetThroughput runs fakellm form-filling tasks on 1, 2, 4 and 8
// desktops of one server at once, each task in a new session on a clean
// desktop (start the desktop and the app, fill the form, end the session),
// and reports tasks per minute.
func BenchmarkFleetThroughput(b *testing.B) {
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("desktops=%d", n), func(b *testing.B) {
			fb := startFleetBench(b, n)
			var next atomic.Int64
			var failed atomic.Int64
			b.ResetTimer()
			start := time.Now()
			cpu0 := cpuSeconds(b, fb.cmd.Process.Pid)
			var peak atomic.Int64
			stopSampling := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				for {
					if p := treePSS(b, fb.cmd.Process.Pid); p > peak.Load() {
						peak.Store(p)
					}
					select {
					case <-stopSampling:
						return
					case <-time.After(100 * time.Millisecond):
					}
				}
			}()
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					for k := int(next.Add(1)); k <= b.N; k = int(next.Add(1)) {
						cs := fb.connect(b)
						f := fleetForm(k)
						ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
						res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gui_execute_task", Arguments: map[string]any{
							"task": fmt.Sprintf("Fill the form with name %s, email %s and city %s, then press Submit", f.Name, f.Email, f.City)}})
						cancel()
						if err != nil || res.IsError || !strings.Contains(textOf(res), `"status":"`+string(agent.Completed)+`"`) {
							failed.Add(1)
						}
						cs.Close()
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			close(stopSampling)
			<-sampled
			b.ReportMetric(float64(peak.Load())/(1<<20), "MB-peak")
			if failed.Load() > 0 {
				b.Fatalf("%d of %d tasks did not complete", failed.Load(), b.N)
			}
			b.ReportMetric(float64(b.N)/elapsed.Minutes(), "tasks/min")
			// Every desktop, app and Xvfb of a finished task has been reaped by
			// guiagent, so its own and its children's CPU time covers them.
			b.ReportMetric((cpuSeconds(b, fb.cmd.Process.Pid)-cpu0)/float64(b.N), "cpu-s/task")
			b.ReportMetric(fb.metric(b, `guiagent_screenshot_bytes_total{source="task"}`)/float64(b.N)/1024, "KB-sent-to-model/task")
		})
	}
}

// BenchmarkFleetDesktopReady measures the time from a new session's first
// request to its desktop answering a screenshot (initialize starts the Xvfb).
func BenchmarkFleetDesktopReady(b *testing.B) {
	fb := startFleetBench(b, 2)
	b.ResetTimer()
	for range b.N {
		tr := &mcp.StreamableClientTransport{Endpoint: "http://" + fb.addr + "/mcp",
			HTTPClient: &http.Client{Transport: teeTransport{token: httpToken, wire: discard{}}}}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cs, err := dial(tr, client{name: "bench"}, 60*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gui_screenshot", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			b.Fatalf("screenshot on a new desktop: %v %v", err, res)
		}
		b.StopTimer()
		cancel()
		cs.Close()
		b.StartTimer()
	}
}

// BenchmarkFleetDesktopMemory opens 8 sessions with the sample app on each
// and reports the proportional set size (PSS) the server's process tree
// (guiagent, the Xvfb servers, the apps) gains per desktop. It measures once,
// whatever b.N (run it with -benchtime=1x).
func BenchmarkFleetDesktopMemory(b *testing.B) {
	const n = 8
	fb := startFleetBench(b, n)
	time.Sleep(500 * time.Millisecond)
	base := treePSS(b, fb.cmd.Process.Pid)
	var css []*mcp.ClientSession
	for range n {
		cs := fb.connect(b)
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_screenshot", Arguments: map[string]any{}}); err != nil {
			b.Fatal(err)
		}
		css = append(css, cs)
	}
	time.Sleep(500 * time.Millisecond)
	full := treePSS(b, fb.cmd.Process.Pid)
	for _, cs := range css {
		cs.Close()
	}
	b.ReportMetric(float64(base)/(1<<20), "MB-server-idle")
	b.ReportMetric(float64(full-base)/n/(1<<20), "MB/desktop")
}

// cpuSeconds is the CPU time of pid and its reaped children (utime, stime,
// cutime, cstime of /proc/pid/stat), in seconds.
func cpuSeconds(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // fields 14-17 of stat, counted from the state field (3)
		v, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += v
	}
	return float64(ticks) / 100 // USER_HZ is 100 on Linux
}

// treePSS sums the Pss of pid and all its descendants (bytes).
func treePSS(b *testing.B, pid int) int64 {
	b.Helper()
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		data, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so parse after the last ')'.
		rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
		f := strings.Fields(rest)
		p, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	var total int64
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = append(queue[1:], children[p]...)
		total += pss(p)
	}
	return total
}

func pss(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
