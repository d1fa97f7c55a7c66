package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop"
)

// The clipboard group: read and replace the clipboard.

// ClipboardArgs are gui_clipboard's arguments.
type ClipboardArgs struct {
	Action string `json:"action"`
	Text   string `json:"text,omitempty" jsonschema:"for set"`
}

func (s *Server) clipboardTool() toolDef {
	return newTool(s, GroupClipboard, "gui_clipboard", "Clipboard",
		"Get the clipboard's text, or set it.",
		writesState, func(sc *jsonschema.Schema) { enum(sc, "action", "get", "set") },
		func(ctx context.Context, c *call, in ClipboardArgs) (*mcp.CallToolResult, error) {
			cb, ok := s.screen.(desktop.Clipboard)
			if !ok {
				return nil, fmt.Errorf("clipboard: %w (backend %s)", desktop.ErrUnsupported, s.screen.Name())
			}
			switch in.Action {
			case "get":
				text, err := cb.ReadClipboard(ctx)
				if err != nil {
					return nil, fmt.Errorf("reading the clipboard: %w", err)
				}
				// The clipboard may hold a password: the audit and the record keep its length only.
				c.private = fmt.Sprintf("read the clipboard (%d characters)", len([]rune(text)))
				return textResult("%s", text), nil
			case "set":
				if err := s.killGate(ctx); err != nil {
					return nil, err
				}
				if err := cb.WriteClipboard(ctx, in.Text); err != nil {
					return nil, fmt.Errorf("writing the clipboard: %w", err)
				}
				return textResult("clipboard set (%d characters)", len([]rune(in.Text))), nil
			}
			return nil, fmt.Errorf("unknown clipboard action %q: use get or set", in.Action)
		})
}
