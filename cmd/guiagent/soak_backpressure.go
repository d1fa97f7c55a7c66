package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// backpressureShape is the stdout-backpressure case for a soak of n calls:
// that many screenshot calls are sent while the client reads none of the
// answers for that long. A full soak sends 2000 and holds them 8 s; a short
// one (the e2e test's -n 60) sends 200 and holds them 2 s, which is still
// six times the server's 32 calls in flight.
func backpressureShape(n int) (calls int, hold time.Duration) {
	calls = min(2000, max(200, n/5))
	return calls, min(8*time.Second, max(2*time.Second, time.Duration(calls)*4*time.Millisecond))
}

// backpressureResult is what the case measured: the server's resident memory
// before the flood, after holding the answers unread, and once they were
// read; how many calls the server had taken when the hold ended (the rest
// waited in the pipe); and whether every call was answered.
type backpressureResult struct {
	RSSBeforeKB   int64 `json:"rss_before_kb"`
	RSSHeldKB     int64 `json:"rss_while_unread_kb"`
	RSSAfterKB    int64 `json:"rss_after_kb"`
	Sent          int   `json:"calls_sent"`
	SentWhileHeld int   `json:"calls_taken_while_unread"`
	Answered      int   `json:"calls_answered"`
}

// soakBackpressure floods the stdio server with screenshot calls while not
// reading its stdout, then reads every answer. A server without backpressure
// keeps reading calls and buffering screenshots (about 100 MB/s); with it,
// its memory stays flat while its answers go unread.
func soakBackpressure(ctx context.Context, s *soakServer, calls int, hold time.Duration) (backpressureResult, error) {
	c, ok := s.client.(*stdioClient)
	if !ok {
		return backpressureResult{}, fmt.Errorf("the backpressure case needs the stdio server")
	}
	var r backpressureResult
	r.RSSBeforeKB = rssKB(s.cmd.Process.Pid)
	first := c.nextID + 1
	sent := make(chan int, 1)
	var taken int64
	go func() {
		n := 0
		for ; n < calls; n++ {
			c.nextID++
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": "tools/call",
				"params": map[string]any{"name": "gui_screenshot", "arguments": map[string]any{"format": "png"}}})
			if _, err := c.in.Write(append(b, '\n')); err != nil {
				break
			}
			taken = int64(n + 1)
		}
		sent <- n
	}()
	select {
	case <-time.After(hold):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	r.RSSHeldKB, r.SentWhileHeld = rssKB(s.cmd.Process.Pid), int(taken)
	for r.Answered < calls {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return r, fmt.Errorf("reading the held answers: %w", err)
		}
		var resp rpcResponse
		if json.Unmarshal(line, &resp) == nil && resp.ID != nil && *resp.ID >= first {
			r.Answered++
		}
	}
	r.Sent = <-sent
	r.RSSAfterKB = rssKB(s.cmd.Process.Pid)
	return r, nil
}

// rssKB is a process's resident memory in KiB (0 when unknown).
func rssKB(pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if k, v, _ := strings.Cut(line, ":"); k == "VmRSS" {
			if f := strings.Fields(v); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}
