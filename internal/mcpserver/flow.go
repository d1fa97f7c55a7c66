package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/flow"
)

// FlowRunner runs gui_run_flow's flows (*flow.Runner).
type FlowRunner interface {
	Run(ctx context.Context, f *flow.Flow, vars map[string]string, cache *flow.Cache) flow.Result
}

// RunFlowArgs are gui_run_flow's arguments.
type RunFlowArgs struct {
	YAML  string            `json:"yaml" jsonschema:"the flow's YAML text (not a path): name, display, steps; ${name} reads vars"`
	Vars  map[string]string `json:"vars,omitempty"`
	Cache string            `json:"cache,omitempty" jsonschema:"the cache of located elements; default read-write"`
}

func (s *Server) runFlowTool() toolDef {
	return newTool(s, GroupFlows, "gui_run_flow", "Run a flow",
		"Run a YAML flow of steps (act, click, type, key, hotkey, scroll, drag, locate, wait_for, assert, query, sleep). Located elements are cached and verified, so repeats need no model.",
		changesDesk,
		func(sc *jsonschema.Schema) {
			prop(sc, "yaml").MinLength = new(1)
			enum(sc, "cache", string(flow.ReadWrite), string(flow.ReadOnly), string(flow.WriteOnly), string(flow.CacheOff))
		},
		func(ctx context.Context, _ *call, in RunFlowArgs) (*mcp.CallToolResult, error) {
			strategy, err := flow.ParseStrategy(in.Cache)
			if err != nil {
				return nil, err
			}
			f, err := flow.Parse([]byte(in.YAML), in.Vars)
			if err != nil {
				return nil, err
			}
			cache, err := flow.OpenCache(flow.CachePath("", f.Name, s.opts.FlowCacheDir), strategy)
			if err != nil {
				return nil, err
			}
			res := s.opts.Flows.Run(ctx, f, in.Vars, cache) // recorded as its own run (res.RunID)
			b, err := json.Marshal(res)
			if err != nil {
				return nil, fmt.Errorf("encoding the flow result: %w", err)
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
				StructuredContent: json.RawMessage(b),
				IsError:           res.Status != flow.Passed,
			}, nil
		})
}
