package mcpserver

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/guiagent/guiagent/internal/config"
)

// Tool groups that Options.Tools (--tools, GUI_AGENT_TOOLS) selects by name.
const (
	GroupObserve   = "observe"   // see the screen; changes nothing (--read-only)
	GroupInput     = "input"     // mouse and keyboard
	GroupClipboard = "clipboard" // read and replace the clipboard
	GroupTask      = "task"      // gui_execute_task: the agent loop
	GroupFlows     = "flows"     // recorded flows
	GroupBrowser   = "browser"   // pages and tabs: only on the browser backend
	GroupPhone     = "phone"     // apps: only on the phone backends
)

// groupOrder lists the groups in the order help and errors show them.
var groupOrder = []string{GroupObserve, GroupInput, GroupClipboard, GroupTask, GroupFlows, GroupBrowser, GroupPhone}

// toolRow is one tool and the group its definition declares.
type toolRow struct{ tool, group string }

// toolGroups lists every tool of the catalogue with the group its
// constructor declares (newTool's group argument), in catalogue order. It
// builds the definitions on a server with no desktop; nothing is registered.
var toolGroups = sync.OnceValue(func() []toolRow {
	var rows []toolRow
	for _, t := range (&Server{}).catalogue() {
		rows = append(rows, toolRow{t.name, t.group})
	}
	return rows
})

// ToolGroup is a group of tools --tools can select by its name.
type ToolGroup struct {
	Name  string
	Tools []string
}

// ToolGroups lists every group with its tools, in help order.
func ToolGroups() []ToolGroup {
	var out []ToolGroup
	for _, g := range groupOrder {
		tg := ToolGroup{Name: g}
		for _, r := range toolGroups() {
			if r.group == g {
				tg.Tools = append(tg.Tools, r.tool)
			}
		}
		out = append(out, tg)
	}
	return out
}

func groupOf(tool string) (string, bool) {
	for _, r := range toolGroups() {
		if r.tool == tool {
			return r.group, true
		}
	}
	return "", false
}

// toolSelection is the set of tool names Options.Tools selects; nil selects all.
type toolSelection map[string]bool

// selectTools resolves names (tool names or group names) into a selection.
// An unknown name is an error listing the valid ones.
func selectTools(names []string) (toolSelection, error) {
	if len(names) == 0 {
		return nil, nil
	}
	sel := toolSelection{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if slices.Contains(groupOrder, n) {
			for _, r := range toolGroups() {
				if r.group == n {
					sel[r.tool] = true
				}
			}
			continue
		}
		if _, ok := groupOf(n); !ok {
			return nil, fmt.Errorf("--tools/"+config.Var("Tools")+": %q is neither a tool nor a group: the groups are %s; the tools are %s",
				n, strings.Join(groupOrder, ", "), strings.Join(allToolNames(), ", "))
		}
		sel[n] = true
	}
	return sel, nil
}

// ResolveTools returns the tools names selects (tool or group names), in
// table order; nil or empty selects every tool. An unknown name is the error
// New would return. Whether a tool is then offered also depends on the server
// (gui_execute_task needs Options.Tasks).
func ResolveTools(names []string) ([]string, error) {
	sel, err := selectTools(names)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range toolGroups() {
		if sel.has(r.tool) {
			out = append(out, r.tool)
		}
	}
	return out, nil
}

// Serving says what a server has that some tools need to be offered: a
// vision model (gui_locate, gui_query, gui_assert and gui_wait_for), a task
// runner (gui_execute_task), flows (gui_run_flow) and an element source
// (gui_snapshot).
type Serving struct {
	Vision, Tasks, Flows, Elements bool
	// Pages, Tabs, Uploads and Apps: the backend is a browser
	// (desktop.Navigator, Tabber, Uploader) or a phone (desktop.Apps).
	Pages, Tabs, Uploads, Apps bool
}

// serves reports whether a server with sv can offer tool.
func (sv Serving) serves(tool string) bool {
	switch {
	case slices.Contains(visionTools, tool):
		return sv.Vision
	case tool == "gui_execute_task":
		return sv.Tasks
	case tool == "gui_run_flow":
		return sv.Flows
	case tool == "gui_snapshot":
		return sv.Elements
	case tool == "gui_navigate":
		return sv.Pages
	case tool == "gui_tabs":
		return sv.Tabs
	case tool == "gui_upload":
		return sv.Uploads
	case tool == "gui_apps":
		return sv.Apps
	}
	return true
}

// OfferedTools returns the tools a server with sv offers for the selection
// names (tool or group names; nil or empty selects every tool), in table
// order: the tools New registers. An unknown name, or a selection of which
// sv serves no tool, is the error New returns.
func OfferedTools(names []string, sv Serving) ([]string, error) {
	selected, err := ResolveTools(names)
	if err != nil {
		return nil, err
	}
	offered := slices.DeleteFunc(selected, func(t string) bool { return !sv.serves(t) })
	if len(offered) == 0 {
		why := ""
		if !sv.Tasks {
			why = " (gui_execute_task needs a model: none is configured)"
		}
		return nil, fmt.Errorf("--tools/%s=%s selects no tool this server offers%s", config.Var("Tools"), strings.Join(names, ","), why)
	}
	return offered, nil
}

func allToolNames() []string {
	names := make([]string, len(toolGroups()))
	for i, r := range toolGroups() {
		names[i] = r.tool
	}
	return names
}

// has reports whether tool is selected.
func (sel toolSelection) has(tool string) bool { return sel == nil || sel[tool] }
