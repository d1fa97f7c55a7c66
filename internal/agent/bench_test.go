package agent

import (
	"context"
	"image/color"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// busyDesk returns a 1920x1080 fake desktop covered in small coloured blocks
// (text-like detail, so encoding costs what it costs on a real screen).
func busyDesk() *fake.Backend {
	fb := fake.New(fake.Options{Background: color.RGBA{250, 250, 250, 255}})
	rng := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < 1080; y += 12 {
		for x := 0; x < 1920; x += 9 {
			if rng.IntN(3) == 0 {
				continue
			}
			c := uint8(rng.IntN(200))
			fb.Fill(geom.Rect{X: x, Y: y, W: 1 + rng.IntN(7), H: 1 + rng.IntN(9)}, color.RGBA{c, c / 2, 255 - c, 255})
		}
	}
	return fb
}

// BenchmarkStepOverhead measures the per-step time outside the model call at
// 1920x1080 with settling off: capture, scale, encode, observation, resolve,
// execute a two-action batch, record. The target is a median under 50 ms.
func BenchmarkStepOverhead(b *testing.B) {
	for _, tc := range []struct{ name, model string }{
		{"1920x1080-to-1920-jpeg", "gpt-4o"},
		{"1920x1080-to-1456-anthropic", "claude-sonnet-4-5"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			fb := busyDesk()
			var mu sync.Mutex
			var enter, exit []time.Time
			n := 0
			steps := b.N + 1
			script := newScript(geom.ProfileFor(tc.model), func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
				mu.Lock()
				defer mu.Unlock()
				enter = append(enter, time.Now())
				defer func() { exit = append(exit, time.Now()) }()
				n++
				if n >= steps {
					return &llm.Decision{Status: llm.Done}, nil
				}
				x := float64(100 + (n*97)%1000)
				return &llm.Decision{Status: llm.Continue, Actions: raws(
					action.Raw{Kind: action.Click, At: []float64{x, 300}}, action.Raw{Kind: action.TypeText, Text: "hello"})}, nil
			})
			r, err := New(Options{Input: desktop.NewInput(fb), Adapter: script, MaxSteps: steps,
				Settle: Settle{MaxWait: -1}, Stuck: Stuck{Steps: 1 << 30}, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			res := r.Run(context.Background(), Task{Task: "benchmark"}, nil)
			b.StopTimer()
			if res.Status != Completed {
				b.Fatalf("%s: %s", res.Status, res.Summary)
			}
			var over []float64
			for i := 0; i+1 < len(enter); i++ {
				over = append(over, float64(enter[i+1].Sub(exit[i]).Microseconds())/1000)
			}
			if len(over) > 0 {
				slices.Sort(over)
				b.ReportMetric(over[len(over)/2], "median-ms/step")
				b.ReportMetric(over[len(over)*9/10], "p90-ms/step")
			}
		})
	}
}

// BenchmarkInputTokens reports the estimated input tokens of step 1 and step
// 30 of a long scripted run (text/4 + 800 per image, as the fake providers count).
func BenchmarkInputTokens(b *testing.B) {
	var tokens []int
	for range b.N {
		tokens = runLong(b, 30)
	}
	b.ReportMetric(float64(tokens[0]), "tokens-step1")
	b.ReportMetric(float64(tokens[29]), "tokens-step30")
}
