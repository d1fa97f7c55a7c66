package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/testenv"
)

// `guiagent bench soak` drives two real servers (stdio and HTTP) through
// every kind of atomic call and reports each at the start, middle and end;
// the only failed calls are the two it makes on purpose (a point off every
// display, a key name with a control character).
func TestBenchSoakReportsBothServers(t *testing.T) {
	testenv.NeedX(t)
	cmd := exec.Command(binary, "bench", "soak", "-n", "60")
	cmd.Env = serverEnv(t)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench soak: %v\n%s", err, stderr.String())
	}
	var r struct {
		N            int `json:"n"`
		Backpressure struct {
			Sent     int `json:"calls_sent"`
			Answered int `json:"calls_answered"`
		} `json:"stdout_backpressure"`
		Fleet struct {
			Rounds        int `json:"rounds"`
			PerSession    int `json:"calls_per_session_round"`
			Calls         int `json:"calls"`
			ClipboardsOwn int `json:"clipboards_read_back_own"`
			OtherSeen     int `json:"reads_showing_the_other_session"`
			XAfter        int `json:"x_servers_after_every_session_ended"`
		} `json:"fleet"`
		Servers map[string]struct {
			Calls   int            `json:"calls"`
			Errors  map[string]int `json:"tool_errors_by_tool"`
			Samples []struct {
				At         string `json:"at"`
				RSSKB      int64  `json:"rss_kb"`
				OpenFiles  int    `json:"open_files"`
				Goroutines int    `json:"goroutines"`
			} `json:"samples"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench soak output is not JSON: %v\n%s", err, out)
	}
	// A short soak keeps its fixed cases short too: 200 held screenshots,
	// 20 calls per fleet session and round.
	if bp := r.Backpressure; bp.Sent != 200 || bp.Answered != bp.Sent {
		t.Errorf("backpressure: %d calls sent, %d answered; want 200 and every one answered", bp.Sent, bp.Answered)
	}
	if f := r.Fleet; f.Rounds != 3 || f.PerSession != 20 || f.Calls != 2*20*3 || f.ClipboardsOwn != 2*3 || f.OtherSeen != 0 || f.XAfter != 0 {
		t.Errorf("fleet: %+v; want 3 rounds of 2x20 calls, every clipboard its session's own, nothing of the other session seen, no X server left", f)
	}
	for _, name := range []string{"stdio", "http"} {
		s, ok := r.Servers[name]
		if !ok || s.Calls != 30 {
			t.Errorf("%s: %d calls, want 30 (half of -n 60)", name, s.Calls)
			continue
		}
		for tool, n := range s.Errors {
			if tool != "gui_click" && tool != "gui_hotkey" || n > 2 {
				t.Errorf("%s: %d failed %s calls; only the deliberate bad click and hotkey should fail", name, n, tool)
			}
		}
		if len(s.Samples) != 3 || s.Samples[0].At != "start" || s.Samples[2].At != "end" {
			t.Fatalf("%s: samples %+v, want start, middle and end", name, s.Samples)
		}
		for _, sm := range s.Samples {
			if sm.RSSKB <= 0 || sm.OpenFiles <= 0 || sm.Goroutines <= 0 {
				t.Errorf("%s: an empty measurement %+v", name, sm)
			}
		}
	}
}
