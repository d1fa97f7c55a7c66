package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/config"
)

// The fleet case: a server with a private desktop per session, two sessions
// at a time making the soak's calls, opened and closed for fleetRounds rounds.
const fleetRounds = 3

// fleetSessionCalls is the calls per session and round for a soak of n
// calls: 150 in a full soak, 20 in a short one.
func fleetSessionCalls(n int) int { return min(150, max(20, n/60)) }

// fleetResult is what the fleet case measured: the calls and tool errors,
// whether each session read back its own clipboard and saw nothing of the
// other's (its session id in gui://status, gui://runs or gui://audit), the
// server's memory after the first and the last round, and the private X
// servers alive while two sessions ran and once every session had ended.
type fleetResult struct {
	Rounds             int               `json:"rounds"`
	CallsPerSession    int               `json:"calls_per_session_round"`
	Calls              int               `json:"calls"`
	ToolErrors         map[string]int    `json:"tool_errors_by_tool"`
	FirstErrors        map[string]string `json:"first_errors"`
	ClipboardsOwn      int               `json:"clipboards_read_back_own"`
	OtherSessionSeen   int               `json:"reads_showing_the_other_session"`
	DesktopsDuring     int               `json:"x_servers_with_two_sessions"`
	DesktopsAfter      int               `json:"x_servers_after_every_session_ended"`
	RSSAfterFirstKB    int64             `json:"rss_after_first_round_kb"`
	RSSAfterLastKB     int64             `json:"rss_after_last_round_kb"`
	GoroutinesAfterEnd int               `json:"goroutines_after_last_round"`
}

// soakFleet starts `guiagent serve --http --desktop-per-session` and runs
// fleetRounds rounds of two sessions.
func soakFleet(ctx context.Context, self string, perSession int, stderr io.Writer) (fleetResult, error) {
	r := fleetResult{Rounds: fleetRounds, CallsPerSession: perSession, ToolErrors: map[string]int{}, FirstErrors: map[string]string{}}
	state, err := os.MkdirTemp("", "guiagent-soak-fleet-")
	if err != nil {
		return r, err
	}
	addr, err := freeAddr()
	if err != nil {
		return r, err
	}
	token := strconv.FormatInt(time.Now().UnixNano(), 36) + "-soak-fleet"
	srv := &soakServer{name: "fleet", state: state, errors: r.ToolErrors, firstErrors: r.FirstErrors}
	srv.cmd = exec.Command(self, "serve", "--http", "--addr", addr, "--desktop-per-session", "1024x768", "--max-desktops", "2")
	srv.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state,
		config.Var("RunsDir") + "=" + filepath.Join(state, "runs"), config.Var("LogLevel") + "=warn", config.Var("HTTPToken") + "=" + token}
	srv.cmd.Stderr = stderr
	if err := srv.cmd.Start(); err != nil {
		return r, err
	}
	defer srv.stop()
	if err := waitListening(addr); err != nil {
		return r, err
	}
	for round := range fleetRounds {
		t0 := time.Now()
		if err := fleetRound(ctx, srv, "http://"+addr+"/mcp", token, round, &r); err != nil {
			return r, err
		}
		t1 := time.Now()
		if r.DesktopsAfter = waitXServers(srv.cmd.Process.Pid, 0, 15*time.Second); r.DesktopsAfter != 0 {
			return r, fmt.Errorf("round %d: %d private X servers still run 15 s after both sessions ended", round+1, r.DesktopsAfter)
		}
		fmt.Fprintf(stderr, "soak: fleet round %d: sessions %.1f s, their desktops gone %.1f s later\n", round+1, t1.Sub(t0).Seconds(), time.Since(t1).Seconds())
		rss := rssKB(srv.cmd.Process.Pid)
		if round == 0 {
			r.RSSAfterFirstKB = rss
		}
		r.RSSAfterLastKB = rss
	}
	r.GoroutinesAfterEnd = fleetGoroutines(ctx, "http://"+addr+"/mcp", token)
	return r, nil
}

// fleetRound opens two sessions, makes the soak's calls on both, checks
// what each sees, and ends them.
func fleetRound(ctx context.Context, srv *soakServer, url, token string, round int, r *fleetResult) error {
	var cs [2]*httpClient
	for i := range cs {
		cs[i] = &httpClient{url: url, token: token, hc: &http.Client{Timeout: time.Minute}}
		if err := cs[i].reconnect(ctx); err != nil {
			return fmt.Errorf("round %d: opening session %d: %w", round+1, i+1, err)
		}
		defer cs[i].close()
	}
	r.DesktopsDuring = countXServers(srv.cmd.Process.Pid)
	for i := range 2 * r.CallsPerSession {
		c := soakCalls[(i/2)%len(soakCalls)]
		res, err := cs[i%2].request(ctx, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
		if err != nil {
			return fmt.Errorf("round %d: session %d call %s: %w", round+1, i%2+1, c.tool, err)
		}
		r.Calls++
		srv.noteError(c.tool, res)
	}
	for i, c := range cs {
		text := fmt.Sprintf("fleet session %d round %d", i+1, round+1)
		if _, err := c.request(ctx, "tools/call", map[string]any{"name": "gui_clipboard", "arguments": map[string]any{"action": "set", "text": text}}); err != nil {
			return err
		}
	}
	for i, c := range cs {
		res, err := c.request(ctx, "tools/call", map[string]any{"name": "gui_clipboard", "arguments": map[string]any{"action": "get"}})
		if err != nil {
			return err
		}
		if strings.Contains(string(res), fmt.Sprintf("fleet session %d round %d", i+1, round+1)) {
			r.ClipboardsOwn++
		}
		other := cs[1-i].session
		for _, uri := range []string{"gui://status", "gui://runs", "gui://audit"} {
			res, err := c.request(ctx, "resources/read", map[string]any{"uri": uri})
			if err != nil {
				return fmt.Errorf("round %d: session %d reading %s: %w", round+1, i+1, uri, err)
			}
			if strings.Contains(string(res), other) {
				r.OtherSessionSeen++
			}
		}
	}
	for _, c := range cs {
		if err := c.close(); err != nil {
			return err
		}
		c.session = ""
	}
	return nil
}

// fleetGoroutines opens a session to read gui://status's goroutine count
// (the whole process's), then ends it; -1 when it cannot be read.
func fleetGoroutines(ctx context.Context, url, token string) int {
	c := &httpClient{url: url, token: token, hc: &http.Client{Timeout: time.Minute}}
	if c.reconnect(ctx) != nil {
		return -1
	}
	defer c.close()
	rt, err := statusRuntime(ctx, c)
	if err != nil {
		return -1
	}
	return rt.Goroutines
}

// countXServers counts the X servers (Xvfb, Xorg) whose parent is pid.
func countXServers(pid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		comm, rest := s[open+1:close], strings.Fields(s[close+1:])
		if len(rest) > 1 && rest[1] == strconv.Itoa(pid) && (comm == "Xvfb" || comm == "Xorg") {
			n++
		}
	}
	return n
}

// waitXServers waits until pid has want X servers, or d has passed, and
// returns how many it has.
func waitXServers(pid, want int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := countXServers(pid)
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitListening waits up to 30 s for addr to accept connections.
func waitListening(addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("guiagent serve --http did not listen on %s within 30 s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
