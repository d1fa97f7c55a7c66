package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
)

func listedTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		m[tool.Name] = tool
	}
	return m
}

func readJSON(t *testing.T, cs *mcp.ClientSession, uri string) (string, map[string]any) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &v); err != nil {
		t.Fatal(err)
	}
	return res.Contents[0].Text, v
}

// Every tool the server can register belongs to exactly one group.
func TestEveryToolHasOneGroup(t *testing.T) {
	e := newEnv(t, nil, Options{Tasks: &scriptedRunner{}})
	seen := map[string]int{}
	for _, g := range ToolGroups() {
		for _, tool := range g.Tools {
			seen[tool]++
		}
	}
	for name := range listedTools(t, e.cs) {
		if seen[name] != 1 {
			t.Errorf("tool %s is in %d groups, want 1", name, seen[name])
		}
	}
}

// --read-only is the observe group: what a client sees is read-only tools only.
func TestObserveGroupIsReadOnly(t *testing.T) {
	e := newEnv(t, nil, Options{Tasks: &scriptedRunner{}, Tools: []string{GroupObserve}})
	tools := listedTools(t, e.cs)
	for _, want := range []string{"gui_list_displays", "gui_screenshot", "gui_zoom", "gui_cursor_position", "gui_find_image"} {
		if tools[want] == nil {
			t.Errorf("observe lacks %s", want)
		}
	}
	for name, tool := range tools {
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("observe offers %s, which is not read-only", name)
		}
	}
	_, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_click", Arguments: map[string]any{"x": 1, "y": 1}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("gui_click under observe: %v, want unknown tool", err)
	}
	if n := len(e.desk.Events()); n != 0 {
		t.Fatalf("the desktop received %d events", n)
	}
}

func TestToolSelectionByNameAndGroup(t *testing.T) {
	e := newEnv(t, nil, Options{Tools: []string{"clipboard", "gui_screenshot"}})
	var got []string
	for name := range listedTools(t, e.cs) {
		got = append(got, name)
	}
	slices.Sort(got)
	if strings.Join(got, ",") != "gui_clipboard,gui_screenshot" {
		t.Fatalf("tools = %v, want gui_clipboard and gui_screenshot", got)
	}
	_, st := readJSON(t, e.cs, StatusURI)
	if tools, _ := json.Marshal(st["tools"]); string(tools) != `["gui_screenshot","gui_clipboard"]` {
		t.Fatalf("gui://status tools = %s", tools)
	}
}

func TestUnknownToolNameListsTheValidOnes(t *testing.T) {
	_, err := New(Options{Screen: fake.New(fake.Options{}), Tools: []string{"observe", "gui_clik"}})
	if err == nil {
		t.Fatal("an unknown tool name was accepted")
	}
	for _, want := range []string{`"gui_clik" is neither a tool nor a group`, "observe, input, clipboard, task, flows", "gui_click"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = New(Options{Screen: fake.New(fake.Options{}), Tools: []string{"task"}})
	if err == nil || !strings.Contains(err.Error(), "selects no tool") || !strings.Contains(err.Error(), "needs a model") {
		t.Fatalf("--tools task without a model: %v", err)
	}
}

// Without a model, gui_execute_task is not listed and gui://status says so;
// an empty audit is [] rather than null.
func TestNoModelNoTaskToolAndEmptyAudit(t *testing.T) {
	e := newEnv(t, nil, Options{})
	if listedTools(t, e.cs)["gui_execute_task"] != nil {
		t.Fatal("gui_execute_task is listed without a model")
	}
	_, st := readJSON(t, e.cs, StatusURI)
	if st["task_tool"] != false {
		t.Fatalf("gui://status task_tool = %v without a model", st["task_tool"])
	}
	raw, audit := readJSON(t, e.cs, AuditURI)
	if entries, ok := audit["entries"].([]any); !ok || len(entries) != 0 {
		t.Fatalf("empty gui://audit = %s, want \"entries\": []", raw)
	}
	e2 := newEnv(t, nil, Options{Tasks: &scriptedRunner{}})
	if _, st := readJSON(t, e2.cs, StatusURI); st["task_tool"] != true {
		t.Fatalf("gui://status task_tool = %v with a model", st["task_tool"])
	}
}
