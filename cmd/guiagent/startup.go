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

// toolsCheck is doctor's finding on the tools the server would offer: the
// list mcpserver.New registers for this configuration.
func toolsCheck(c config.Config) check {
	offered, err := app.OfferedTools(c)
	if err != nil {
		return check{level: "FAIL", name: "tools", detail: err.Error(), fix: "correct --tools or " + config.Var("Tools") + ", or configure a model"}
	}
	detail := fmt.Sprintf("%d offered: %s", len(offered), strings.Join(offered, ", "))
	selected, _ := mcpserver.ResolveTools(app.ToolSelection(c))
	if missing := slices.DeleteFunc(selected, func(n string) bool { return slices.Contains(offered, n) }); len(missing) > 0 {
		detail += fmt.Sprintf("; not offered: %s (see vision tools and model)", strings.Join(missing, ", "))
	}
	return check{level: "ok", name: "tools", detail: detail}
}
