package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop"
)

// The browser and phone groups: what only a browser (pages, tabs, file
// inputs) or a phone (apps) has. Each tool is offered only when the backend
// has the capability (desktop.Navigator, Tabber, Uploader, Apps).

// NavigateArgs are gui_navigate's arguments.
type NavigateArgs struct {
	URL      string  `json:"url,omitempty" jsonschema:"the address to open in the active tab"`
	Action   string  `json:"action,omitempty" jsonschema:"instead of url"`
	Wait     string  `json:"wait,omitempty" jsonschema:"default load"`
	TimeoutS float64 `json:"timeout_s,omitempty" jsonschema:"default 30"`
}

// maxNavigateTimeout caps gui_navigate's timeout_s.
const maxNavigateTimeout = 300

func (s *Server) navigateTool() toolDef {
	return newTool(s, GroupBrowser, "gui_navigate", "Navigate",
		"Open a URL in the active tab, or go back, forward or reload; returns the final URL, title and HTTP status.",
		changesDesk, func(sc *jsonschema.Schema) {
			enum(sc, "action", "back", "forward", "reload")
			enum(sc, "wait", "load", "domcontentloaded", "networkidle")
			between(sc, "timeout_s", 0, maxNavigateTimeout)
		},
		func(ctx context.Context, c *call, in NavigateArgs) (*mcp.CallToolResult, error) {
			nav, ok := desktop.CapabilityOf[desktop.Navigator](s.screen)
			if !ok {
				return nil, fmt.Errorf("gui_navigate: %w (backend %s): it needs the browser backend (--backend browser)", desktop.ErrUnsupported, s.screen.Name())
			}
			n := desktop.Navigation{URL: in.URL, Action: desktop.NavAction(in.Action), Wait: desktop.Wait(in.Wait)}
			switch {
			case in.URL == "" && in.Action == "":
				return nil, fmt.Errorf("gui_navigate needs a url, or an action: back, forward or reload")
			case in.URL != "" && in.Action != "":
				return nil, fmt.Errorf("gui_navigate takes a url or an action, not both")
			}
			if in.TimeoutS < 0 || in.TimeoutS > maxNavigateTimeout {
				return nil, fmt.Errorf("timeout_s %v is out of range: use 0 to %d seconds (0: 30)", in.TimeoutS, maxNavigateTimeout)
			}
			n.Timeout = time.Duration(in.TimeoutS * float64(time.Second))
			if err := s.killGate(ctx); err != nil {
				return nil, err
			}
			page, err := nav.Navigate(ctx, n)
			if err != nil {
				return nil, err
			}
			return jsonResult(page)
		})
}

// TabsArgs are gui_tabs's arguments.
type TabsArgs struct {
	Action string `json:"action" jsonschema:"list, new, select or close"`
	URL    string `json:"url,omitempty" jsonschema:"for new"`
	Tab    string `json:"tab,omitempty" jsonschema:"a tab id from list, for select and close"`
}

func (s *Server) tabsTool() toolDef {
	return newTool(s, GroupBrowser, "gui_tabs", "Tabs",
		"List the browser's tabs, open one, bring one to the front, or close one. Tools act on the tab in front.",
		changesDesk, func(sc *jsonschema.Schema) { enum(sc, "action", "list", "new", "select", "close") },
		func(ctx context.Context, c *call, in TabsArgs) (*mcp.CallToolResult, error) {
			tb, ok := desktop.CapabilityOf[desktop.Tabber](s.screen)
			if !ok {
				return nil, fmt.Errorf("gui_tabs: %w (backend %s): it needs the browser backend (--backend browser)", desktop.ErrUnsupported, s.screen.Name())
			}
			if in.Action != "list" {
				if err := s.killGate(ctx); err != nil {
					return nil, err
				}
			}
			switch in.Action {
			case "list":
				tabs, err := tb.Tabs(ctx)
				if err != nil {
					return nil, err
				}
				return jsonResult(struct {
					Tabs []desktop.Tab `json:"tabs"`
				}{tabs})
			case "new":
				tab, err := tb.NewTab(ctx, in.URL)
				if err != nil {
					return nil, err
				}
				return jsonResult(tab)
			case "select", "close":
				if in.Tab == "" {
					return nil, fmt.Errorf("gui_tabs %s needs tab: an id from gui_tabs list", in.Action)
				}
				if in.Action == "close" {
					if err := tb.CloseTab(ctx, in.Tab); err != nil {
						return nil, err
					}
					return textResult("closed tab %s", in.Tab), nil
				}
				tab, err := tb.SelectTab(ctx, in.Tab)
				if err != nil {
					return nil, err
				}
				return jsonResult(tab)
			}
			return nil, fmt.Errorf("unknown gui_tabs action %q: use list, new, select or close", in.Action)
		})
}

// UploadArgs are gui_upload's arguments.
type UploadArgs struct {
	Ref   string   `json:"ref" jsonschema:"the file input, a ref of the latest gui_snapshot"`
	Paths []string `json:"paths" jsonschema:"files on this machine, inside the folders the server allows"`
}

func (s *Server) uploadTool() toolDef {
	return newTool(s, GroupBrowser, "gui_upload", "Upload files",
		"Set the files of a file input (by ref) to files on this machine.",
		changesDesk, nil,
		func(ctx context.Context, c *call, in UploadArgs) (*mcp.CallToolResult, error) {
			up, ok := desktop.CapabilityOf[desktop.Uploader](s.screen)
			if !ok {
				return nil, fmt.Errorf("gui_upload: %w (backend %s): it needs the browser backend (--backend browser)", desktop.ErrUnsupported, s.screen.Name())
			}
			if len(in.Paths) == 0 {
				return nil, fmt.Errorf("gui_upload needs paths: the files to set")
			}
			el, _, err := s.snaps.lookup(c.ss, in.Ref)
			if err != nil {
				return nil, err
			}
			if err := s.killGate(ctx); err != nil {
				return nil, err
			}
			if err := up.Upload(ctx, el.Handle, in.Paths); err != nil {
				return nil, err
			}
			return textResult("set %d file(s) on %s %s %q", len(in.Paths), in.Ref, el.Role, el.Name), nil
		})
}

// AppsArgs are gui_apps's arguments.
type AppsArgs struct {
	Action  string `json:"action" jsonschema:"list, launch, stop or open"`
	Package string `json:"package,omitempty" jsonschema:"the app's id (Android package, iOS or HarmonyOS bundle), for launch and stop"`
	URL     string `json:"url,omitempty" jsonschema:"for open: a web address or an app's link"`
}

func (s *Server) appsTool() toolDef {
	return newTool(s, GroupPhone, "gui_apps", "Apps",
		"List the phone's apps, launch or stop one, or open a URL in the app that handles it.",
		changesDesk, func(sc *jsonschema.Schema) { enum(sc, "action", "list", "launch", "stop", "open") },
		func(ctx context.Context, c *call, in AppsArgs) (*mcp.CallToolResult, error) {
			apps, ok := desktop.CapabilityOf[desktop.Apps](s.screen)
			if !ok {
				return nil, fmt.Errorf("gui_apps: %w (backend %s): it needs a phone backend (--backend android)", desktop.ErrUnsupported, s.screen.Name())
			}
			if in.Action != "list" {
				if err := s.killGate(ctx); err != nil {
					return nil, err
				}
			}
			switch in.Action {
			case "list":
				list, err := apps.ListApps(ctx)
				if err != nil {
					return nil, err
				}
				return jsonResult(struct {
					Apps []desktop.App `json:"apps"`
				}{list})
			case "launch", "stop":
				if in.Package == "" {
					return nil, fmt.Errorf("gui_apps %s needs package: the app's id (see gui_apps list)", in.Action)
				}
				var err error
				if in.Action == "launch" {
					err = apps.LaunchApp(ctx, in.Package)
				} else {
					err = apps.StopApp(ctx, in.Package)
				}
				if err != nil {
					return nil, err
				}
				if in.Action == "launch" {
					return textResult("launched %s", in.Package), nil
				}
				return textResult("stopped %s", in.Package), nil
			case "open":
				if in.URL == "" {
					return nil, fmt.Errorf("gui_apps open needs url")
				}
				if err := apps.OpenURL(ctx, in.URL); err != nil {
					return nil, err
				}
				return textResult("opened %s", in.URL), nil
			}
			return nil, fmt.Errorf("unknown gui_apps action %q: use list, launch, stop or open", in.Action)
		})
}

// withPageEvents adds what the page raised during a call (a dialog it
// answered, a download) to the call's result, so the call that raised it
// tells it.
func (s *Server) withPageEvents(res *mcp.CallToolResult) {
	pe, ok := desktop.CapabilityOf[desktop.PageEvents](s.screen)
	if !ok || res == nil {
		return
	}
	if evs := pe.TakeEvents(); len(evs) > 0 {
		res.Content = append(res.Content, &mcp.TextContent{Text: "page events: " + strings.Join(evs, "; ")})
	}
}
