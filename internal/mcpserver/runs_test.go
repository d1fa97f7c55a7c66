package mcpserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type memRuns map[string]map[string]any

func (m memRuns) ListRuns() (any, error) {
	var out []map[string]any
	for _, r := range m {
		out = append(out, r)
	}
	return out, nil
}

func (m memRuns) GetRun(id string) (any, error) {
	if r, ok := m[id]; ok {
		return r, nil
	}
	return nil, errors.New("run not found")
}

func TestRunResources(t *testing.T) {
	runs := memRuns{"20261130-000000-abcdef": {"id": "20261130-000000-abcdef", "status": "completed", "task": "fill the form"}}
	e := newEnv(t, nil, Options{Runs: runs})
	ctx := context.Background()
	res, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: RunsURI})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Contents[0].Text; !strings.Contains(txt, `"fill the form"`) || !strings.Contains(txt, `"runs"`) {
		t.Fatalf("gui://runs = %s", txt)
	}
	res, err = e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: RunsURI + "/20261130-000000-abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Contents[0].Text; !strings.Contains(txt, `"completed"`) {
		t.Fatalf("gui://runs/{id} = %s", txt)
	}
	if _, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: RunsURI + "/nope"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown run: err = %v", err)
	}
	tmpls, err := e.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != RunURITemplate {
		t.Fatalf("templates %+v, %v", tmpls, err)
	}
}
