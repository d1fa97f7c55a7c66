package guiagent_test

import (
	"context"
	"flag"
	"fmt"
	"image"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

// runsDir and modelURL are what the examples take from their surroundings:
// a scratch folder for run records, and a scripted OpenAI-compatible model
// (a real one would be https://api.openai.com/v1 with a key).
var runsDir, modelURL, visionURL string

func TestMain(m *testing.M) {
	flag.Parse()
	if sk := flag.Lookup("test.skip"); testing.Short() && sk != nil && sk.Value.String() == "" {
		// Examples cannot skip themselves: the short lane leaves out the ones
		// that start a virtual display (Xvfb), as testenv.NeedX does for tests.
		if err := sk.Value.Set(examplesWithADisplay); err != nil {
			log.Fatal(err)
		}
		fmt.Fprintln(os.Stderr, "-short: skipping the examples that start Xvfb:", examplesWithADisplay)
	}
	dir, err := os.MkdirTemp("", "guiagent-examples-")
	if err != nil {
		log.Fatal(err)
	}
	runsDir = dir + "/runs"
	// The scripted model clicks the middle of the screenshot it is sent, then
	// says it is done.
	model := fakellm.NewChatServer(fakellm.Script(
		func(t fakellm.Turn) fakellm.Reply {
			mid := image.Pt(t.ImageSize.W/2, t.ImageSize.H/2)
			return fakellm.Reply{Observation: "an empty desktop", Actions: []fakellm.BrainAction{fakellm.ClickAt(mid)}}
		},
		fakellm.Fixed(fakellm.Finish("clicked the middle of the screen")),
	), fakellm.ChatOptions{Model: "scripted"})
	modelURL = model.URL
	// The vision model finds the sample form's widgets by their colours.
	seer := fakellm.NewChatServer(fakellm.VisionBrain(fakellm.SampleAppWidgets), fakellm.ChatOptions{Model: "gpt-4.1"})
	visionURL = seer.URL
	code := m.Run()
	model.Close()
	seer.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// examplesWithADisplay matches the examples that start Xvfb (all but ExampleLoadOptions).
const examplesWithADisplay = `^Example(|Agent_(Execute|MCPServer|Handler|Locate|Query|Assert|WaitFor|RunFlow))$`

// An agent on a private virtual display takes a screenshot and clicks at a
// point of it: the point is in the screenshot's pixels, wherever the image
// was scaled.
func Example() {
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		VirtualDisplay:       guiagent.Size{Width: 1280, Height: 800},
		AlwaysVirtualDisplay: true, // never touch the user's screen
		RunsDir:              runsDir,
		Log:                  io.Discard,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	shot, err := a.Screenshot(ctx, guiagent.ScreenshotOptions{MaxLongEdge: 640})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(shot.Width, shot.Height, shot.MIME)

	p := shot.Point(320, 200) // the middle of the 640x400 image
	if err := a.Click(ctx, p, guiagent.ClickOptions{}); err != nil {
		log.Fatal(err)
	}
	pos, err := a.CursorPosition(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p, "landed at", pos)
	// Output:
	// 640 400 image/jpeg
	// image(320,200) landed at screen(641,401)
}

// Execute hands a whole goal to the vision agent. Here the model is a
// scripted one that clicks the middle of the screen, then says it is done.
func ExampleAgent_Execute() {
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		Provider: "openai", Model: "scripted", BaseURL: modelURL, APIKey: "sk-example",
		VirtualDisplay: guiagent.Size{Width: 1024, Height: 768}, AlwaysVirtualDisplay: true,
		RunsDir: runsDir, Log: io.Discard,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	reports := 0
	res, err := a.Execute(ctx, "click the middle of the screen",
		guiagent.WithMaxSteps(5),
		guiagent.WithProgress(func(guiagent.Progress) { reports++ }))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, "after", res.Steps, "steps:", res.Result)
	fmt.Println("first action:", string(res.Trace[0].Actions[0].Action))
	fmt.Println("progress reported:", reports > 0)
	pos, _ := a.CursorPosition(ctx)
	fmt.Println("pointer at", pos)
	// Output:
	// completed after 2 steps: clicked the middle of the screen
	// first action: {"kind":"click","at":[512,384],"space":"image"}
	// progress reported: true
	// pointer at screen(512,384)
}

// LoadOptions reads flags and GUI_AGENT_* variables exactly as the guiagent
// command does; flags win over the environment.
func ExampleLoadOptions() {
	env := map[string]string{"GUI_AGENT_PROVIDER": "anthropic", "GUI_AGENT_MODEL": "claude-sonnet-4-5", "GUI_AGENT_MAX_STEPS": "20"}
	o, rest, err := guiagent.LoadOptions([]string{"--model", "claude-opus-4-1", "serve"}, func(k string) string { return env[k] })
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.Provider, o.Model, o.MaxSteps, o.TaskTimeout, rest)
	// Output: anthropic claude-opus-4-1 20 10m0s [serve]
}

// MCPServer serves guiagent's tools on the host's own MCP transport; here an
// in-memory one.
func ExampleAgent_MCPServer() {
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		VirtualDisplay: guiagent.Size{Width: 800, Height: 600}, AlwaysVirtualDisplay: true, RunsDir: runsDir, Log: io.Discard,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	serverSide, clientSide := mcp.NewInMemoryTransports()
	if _, err := a.MCPServer().Connect(ctx, serverSide, nil); err != nil {
		log.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil)
	session, err := client.Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "gui_list_displays"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: {"displays":[{"id":"0","name":"screen","x":0,"y":0,"width":800,"height":600,"scale_factor":1,"primary":true}]}
}

// Handler serves /mcp, the dashboard and the settings API on the host's own
// listener, behind the bearer token.
func ExampleAgent_Handler() {
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		VirtualDisplay: guiagent.Size{Width: 800, Height: 600}, AlwaysVirtualDisplay: true, RunsDir: runsDir, Log: io.Discard,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()

	put, _ := http.NewRequest(http.MethodPut, srv.URL+"/api/settings",
		strings.NewReader(`{"provider":"openai","model":"gpt-4o","base_url":"`+modelURL+`","api_key":"sk-example"}`))
	put.Header.Set("Authorization", "Bearer "+a.HTTPToken())
	resp, err := http.DefaultClient.Do(put)
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status)
	fmt.Println(strings.Contains(string(body), `"api_key_set":true`), strings.Contains(string(body), "sk-example"))
	fmt.Println("gui_execute_task has a model:", a.HasModel())
	// Output:
	// 200 OK
	// true false
	// gui_execute_task has a model: true
}
