package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/mcpserver"
)

// printToolGroups lists the groups --tools accepts with their tools.
func printToolGroups(w io.Writer) {
	fmt.Fprintln(w, "\nTool groups for --tools (or name single tools):")
	for _, g := range mcpserver.ToolGroups() {
		tools := strings.Join(g.Tools, ", ")
		if tools == "" {
			tools = "(none in this version)"
		}
		fmt.Fprintf(w, "  %-10s %s\n", g.Name, tools)
	}
}

// toolsCheck is doctor's finding on the tools a server would offer.
func toolsCheck(c config.Config) check {
	names, err := mcpserver.ResolveTools(app.ToolSelection(c))
	if err != nil {
		return check{"FAIL", "tools", err.Error(), "correct --tools or " + config.Var("Tools")}
	}
	noTask := !app.ModelConfigured(c) && slices.Contains(names, "gui_execute_task")
	if noTask {
		names = slices.DeleteFunc(names, func(n string) bool { return n == "gui_execute_task" })
	}
	if len(names) == 0 {
		return check{"FAIL", "tools", "the selection offers no tool: gui_execute_task needs a model and none is configured", "select other tools, or configure a model"}
	}
	detail := fmt.Sprintf("%d offered: %s", len(names), strings.Join(names, ", "))
	if noTask {
		detail += "; gui_execute_task is not offered because no model is configured"
	}
	return check{"ok", "tools", detail, ""}
}
