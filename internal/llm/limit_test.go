package llm_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/anthropic"
	"github.com/guiagent/guiagent/internal/llm/openai"
	"github.com/guiagent/guiagent/internal/llm/responses"
)

// hugeServer answers every request with 200 and a body of n bytes (a JSON
// string that never ends), declaring its length or streaming it chunked.
func hugeServer(t *testing.T, n int, declare bool) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if declare {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		copy(chunk, `{"id":"`)
		for sent := 0; sent < n; sent += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), n-sent)]); err != nil {
				return // the client hung up, as it should
			}
			chunk = bytes.Repeat([]byte("a"), 64<<10)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestLimitResponsesCutsBodies(t *testing.T) {
	for _, declare := range []bool{true, false} {
		srv, _ := hugeServer(t, 3<<20, declare)
		c := llm.LimitResponses(nil, 1<<20)
		resp, err := c.Get(srv.URL)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if !errors.Is(err, llm.ErrResponseTooLarge) || !strings.Contains(err.Error(), "1 MiB") {
			t.Errorf("declared length %v: err %v, want ErrResponseTooLarge naming the 1 MiB cap", declare, err)
		}
		if llm.Retryable(err) {
			t.Errorf("declared length %v: a too large response is retried", declare)
		}
	}
	srv, _ := hugeServer(t, 1<<20, false)
	resp, err := llm.LimitResponses(nil, 1<<20).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 1<<20 {
		t.Errorf("a body of exactly the cap: %d bytes, %v", len(b), err)
	}
}

// TestAdaptersRefuseHugeResponses holds hole 7 of issue 9: each provider
// adapter, answered with 100 MB, fails with "response too large" after one
// attempt, without holding the body in memory.
func TestAdaptersRefuseHugeResponses(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 64, 48))); err != nil {
		t.Fatal(err)
	}
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 64, H: 48}, Scale: 1, Primary: true}
	shot := llm.Image{MIME: "image/png", Data: buf.Bytes(), Frame: geom.Frame{ID: "f1", Display: d, Region: d.Bounds,
		Content: geom.Size{W: 64, H: 48}, Prepared: geom.Size{W: 64, H: 48}}}
	adapters := map[string]func(llm.Config) (llm.Adapter, error){
		"openai": openai.NewGeneric, "anthropic": anthropic.New, "responses": responses.New,
	}
	models := map[string]string{"openai": "gpt-4o", "anthropic": "claude-sonnet-4-5", "responses": "computer-use-preview"}
	for name, newAdapter := range adapters {
		t.Run(name, func(t *testing.T) {
			srv, hits := hugeServer(t, 100<<20, false)
			base := srv.URL
			if name != "anthropic" {
				base += "/v1"
			}
			ad, err := newAdapter(llm.Config{Model: models[name], APIKey: "sk-test-0123456789", BaseURL: base})
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = ad.NewSession("task").Next(context.Background(), llm.Observation{Step: 1, Task: "task", Screenshot: shot})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, llm.ErrResponseTooLarge) || !strings.Contains(err.Error(), "too large") {
				t.Fatalf("err = %v, want ErrResponseTooLarge", err)
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("the request was sent %d times, want once (a too large answer is not retried)", n)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 5*llm.MaxResponseBytes { // reading up to the cap by doubling buffers allocates about 3.5 times it
				t.Errorf("reading the refused response allocated %d MB", n>>20)
			}
		})
	}
}
