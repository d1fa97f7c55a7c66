package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/hosting"
)

// benchClick measures gui_click round trips through cs and reports the median
// and 95th percentile in milliseconds. The fake desktop adds no delay, so this
// is the server's own cost plus the transport.
func benchClick(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "gui_click", Arguments: map[string]any{"x": 100, "y": 200}}
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		b.Fatalf("warm-up click: %v %v", err, res)
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, params)
		times = append(times, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatalf("click: %v %v", err, res)
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
}

func benchServer(b *testing.B) *Server {
	srv, err := New(Options{Screen: fake.New(fake.Options{}), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

func BenchmarkClickInMemory(b *testing.B) {
	benchClick(b, benchClient(b, nil, nil))
}

// benchClient connects an in-memory client with copts and sopts to a bench server.
func benchClient(b *testing.B, copts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	srv := benchServer(b)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, copts).Connect(context.Background(), ct, sopts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkClickInMemoryEliciting is BenchmarkClickInMemory with a client
// that declares elicitation and speaks 2026-07-28, so every input call runs
// resumable (as a job that could end with input_required): its cost against
// BenchmarkClickInMemory.
func BenchmarkClickInMemoryEliciting(b *testing.B) {
	handler := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	benchClick(b, benchClient(b, &mcp.ClientOptions{ElicitationHandler: handler}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"}))
}

// BenchmarkClickStdio runs the server on newline-delimited JSON over OS pipes,
// the stdio wire format.
func BenchmarkClickStdio(b *testing.B) {
	srv := benchServer(b)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.MCP().Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchClick(b, cs)
}

func BenchmarkClickHTTP(b *testing.B) {
	srv := benchServer(b)
	h, err := srv.NewHTTPHandler(hosting.HTTPOptions{Token: testToken})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + hosting.MCPPath,
		HTTPClient: &http.Client{Transport: bearer{testToken, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchClick(b, cs)
}

// BenchmarkFindImageInMemory measures one gui_find_image call on a 1920x1080
// fake display (capture, scale, PNG encode for the record, template match).
func BenchmarkFindImageInMemory(b *testing.B) {
	srv := benchServer(b)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	tmpl := image.NewRGBA(image.Rect(0, 0, 24, 24))
	for i := range tmpl.Pix {
		tmpl.Pix[i] = byte(i * 7)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, tmpl); err != nil {
		b.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "gui_find_image", Arguments: map[string]any{"template": base64.StdEncoding.EncodeToString(buf.Bytes())}}
	b.ResetTimer()
	for range b.N {
		if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
			b.Fatalf("find_image: %v %v", err, res)
		}
	}
}
