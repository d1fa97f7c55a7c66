package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/vision"
)

// toolsListBudget is what tools/list may cost a host: every tool a
// configuration offers, as the client receives it (issue 21: at most 12 KB),
// with an element source and OCR too (gui_snapshot, gui_find_text,
// gui_read_text, ref and target on the input tools): short descriptions, no
// maxLength beside an enum, the title once (annotations.title), and no
// additionalProperties (the instructions say unknown arguments are refused).
const toolsListBudget = 12 << 10

// toolsListBudgetWithModel bounds tools/list when a model adds the vision
// tools, gui_execute_task and the target properties.
const toolsListBudgetWithModel = 16<<10 + 512

// The budgets above count what a host puts in its model's context: each
// tool's name, description, annotations and input schema. Hosts give models
// no output schema (Anthropic's and OpenAI's tool definitions have no place
// for one), so the input tools' output schema (InputResult: located_by,
// point, box, frame_id) is counted apart, against outputSchemaBudget: one
// definition shared by the input tools, without descriptions.
const outputSchemaBudget = 2<<10 + 256

type nopTasks struct{}

func (nopTasks) Run(context.Context, agent.Task, func(agent.Event)) agent.Result {
	return agent.Result{Status: agent.Failed}
}

type nopFlows struct{}

func (nopFlows) Run(context.Context, *flow.Flow, map[string]string, *flow.Cache) flow.Result {
	return flow.Result{}
}

type nopSeer struct{ vision.Seer }

func (nopSeer) Locate(context.Context, llm.Image, string) (vision.Location, llm.Usage, error) {
	return vision.Location{}, llm.Usage{}, nil
}

// toolsListBytes is tools/list as the client receives it, without the tools'
// output schemas (see outputSchemaBudget), the tools as received, and the
// bytes of their output schemas.
func toolsListBytes(t *testing.T, cs *mcp.ClientSession) ([]byte, []*mcp.Tool, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	bare := *res
	bare.Tools = nil
	for _, tl := range res.Tools {
		c := *tl
		c.OutputSchema = nil
		bare.Tools = append(bare.Tools, &c)
	}
	b, err := json.Marshal(bare)
	if err != nil {
		t.Fatal(err)
	}
	return b, res.Tools, len(whole) - len(b)
}

// targetTools are the input tools that take an element in words.
var targetTools = map[string]bool{"gui_move": true, "gui_click": true, "gui_double_click": true, "gui_mouse_down": true,
	"gui_drag": true, "gui_scroll": true, "gui_type": true}

// TestToolsListBudget: tools/list stays within toolsListBudget bytes with
// every tool the default configuration offers (no model: 20 tools), and
// within toolsListBudgetWithModel with every tool; `target` is advertised
// only when a vision model can serve it, and the shared concepts (space,
// frame_id, display) are explained once, in the server's instructions, with
// one short phrase on each tool.
func TestToolsListBudget(t *testing.T) {
	for _, c := range []struct {
		name     string
		opts     Options
		elements bool
		budget   int
		target   bool
	}{
		{"default (no model)", Options{Flows: nopFlows{}}, false, toolsListBudget, false},
		{"accessibility tree and OCR (no model)", Options{Flows: nopFlows{}, OCR: ocr.NewReader(nil, 0)}, true, toolsListBudget, true},
		{"with a model", Options{Flows: nopFlows{}, Tasks: nopTasks{}, Vision: nopSeer{}}, false, toolsListBudgetWithModel, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnvWith(t, twoDisplays, c.opts, func(b *fake.Backend) {
				if c.elements {
					b.SetElements(formElements())
				}
			})
			b, tools, outBytes := toolsListBytes(t, e.cs)
			t.Logf("%d tools, %d bytes of tools/list and %d of output schemas", len(tools), len(b), outBytes)
			if len(b) > c.budget {
				t.Errorf("tools/list is %d bytes for %d tools, over the %d-byte budget", len(b), len(tools), c.budget)
			}
			if outBytes > outputSchemaBudget {
				t.Errorf("the tools' output schemas are %d bytes, over their %d-byte budget", outBytes, outputSchemaBudget)
			}
			for _, tool := range tools {
				sc, _ := json.Marshal(tool.InputSchema)
				var schema struct {
					Properties map[string]struct {
						Description string `json:"description"`
					} `json:"properties"`
				}
				if err := json.Unmarshal(sc, &schema); err != nil {
					t.Fatal(err)
				}
				_, hasTarget := schema.Properties["target"]
				_, hasFrom := schema.Properties["from_target"]
				_, hasRef := schema.Properties["ref"]
				_, hasFromRef := schema.Properties["from_ref"]
				if targetTools[tool.Name] && (hasRef || hasFromRef) != c.elements {
					t.Errorf("%s advertises ref: %v, want %v (only with an element source)", tool.Name, hasRef || hasFromRef, c.elements)
				}
				if targetTools[tool.Name] && (hasTarget || hasFrom) != c.target {
					t.Errorf("%s advertises target: %v, want %v", tool.Name, hasTarget || hasFrom, c.target)
				}
				if !targetTools[tool.Name] && tool.Name != "gui_locate" && (hasTarget || hasFrom) {
					t.Errorf("%s advertises target", tool.Name)
				}
				for _, shared := range []string{"space", "frame_id", "display"} {
					if p, ok := schema.Properties[shared]; ok && len(p.Description) > 80 {
						t.Errorf("%s explains %s again (%d bytes: %q); the server's instructions say it once", tool.Name, shared, len(p.Description), p.Description)
					}
				}
			}
			if got := slices.ContainsFunc(tools, func(tl *mcp.Tool) bool { return tl.Name == "gui_snapshot" }); got != c.elements {
				t.Errorf("gui_snapshot offered: %v, want %v (only with an element source)", got, c.elements)
			}
			instr := e.cs.InitializeResult().Instructions
			for _, want := range []string{"frame_id", "normalized-1000", "screen", "32", "gui_list_displays"} {
				if !strings.Contains(instr, want) {
					t.Errorf("the server's instructions do not explain %q: %s", want, instr)
				}
			}
		})
	}
}
