package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

// FuzzToolArguments sends arbitrary JSON arguments to every tool but
// gui_wait (which would only sleep) over an in-memory MCP session with a fake
// desktop. Properties: no call panics (a recovered panic is reported as an
// internal error) or breaks the session, and a call that succeeds had every
// string argument within its schema's maxLength.
func FuzzToolArguments(f *testing.F) {
	srv, err := New(Options{Screen: fake.New(fake.Options{Displays: []geom.Display{
		{ID: "0", Bounds: geom.Rect{W: 320, H: 240}, Scale: 1, Primary: true}}}), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		f.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fuzz", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { cs.Close(); ss.Close() })
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		f.Fatal(err)
	}
	caps := map[string]map[string]int{}
	var names []string
	for _, tl := range tools.Tools {
		if tl.Name == "gui_wait" {
			continue
		}
		names = append(names, tl.Name)
		var sc struct {
			Properties map[string]struct {
				MaxLength *int `json:"maxLength"`
			} `json:"properties"`
		}
		b, _ := json.Marshal(tl.InputSchema)
		if err := json.Unmarshal(b, &sc); err != nil {
			f.Fatal(err)
		}
		caps[tl.Name] = map[string]int{}
		for p, s := range sc.Properties {
			if s.MaxLength != nil {
				caps[tl.Name][p] = *s.MaxLength
			}
		}
	}
	slices.Sort(names)
	for i, args := range []string{
		`{"x":1,"y":1}`, `{"keys":["ctrl","alt","\b"]}`, `{"key":"ctrl+alt+\u0008"}`, `{"text":"héllo"}`,
		`{"x":1e308,"y":-1e308,"space":"screen"}`, `{"action":"set","text":"x"}`, `{"template":"data:image/png;base64,AAAA"}`,
		`{"x":1,"y":1,"modifiers":["alt","\u007f"]}`, `{"direction":"down","amount":5,"x":3,"y":3}`, `{"region":[0,0,1e9,1e9]}`,
	} {
		f.Add(uint8(i*3), []byte(args))
	}
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		var obj map[string]any
		if json.Unmarshal(args, &obj) != nil || obj == nil {
			return
		}
		name := names[int(tool)%len(names)]
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s(%s): protocol error %v", name, args, err)
		}
		if strings.Contains(text(res), "internal error in") {
			t.Fatalf("%s(%s) panicked: %s", name, args, text(res))
		}
		if res.IsError {
			return
		}
		for p, max := range caps[name] {
			if s, ok := obj[p].(string); ok && utf8.RuneCountInString(s) > max {
				t.Fatalf("%s accepted %s of %d characters, over its cap %d", name, p, utf8.RuneCountInString(s), max)
			}
		}
	})
}
