package mcpclient

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests run small MCP servers written with the same SDK: over stdio by
// running this test binary again with serverModeEnv set (TestMain turns it
// into the server), and over HTTP with httptest.
const (
	serverModeEnv = "MCPCLIENT_TEST_SERVER" // "tools" or "garbage-start"
	markerEnv     = "MCPCLIENT_TEST_MARKER" // a file the crash tool creates
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to send back"`
}

type clickIn struct {
	Element string `json:"element" jsonschema:"Human-readable element description"`
	Target  string `json:"target" jsonschema:"Exact target element reference from the page snapshot"`
}

type bigIn struct {
	Lines int `json:"lines" jsonschema:"how many lines to return"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// newTestServer is the server both transports serve.
func newTestServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Sends the text back."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "click", Description: "Clicks an element."},
		func(_ context.Context, _ *mcp.CallToolRequest, in clickIn) (*mcp.CallToolResult, any, error) {
			return text("clicked " + in.Target), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Says the server's process id."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails as a tool."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			r := text("the page is gone")
			r.IsError = true
			return r, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answers."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			time.Sleep(time.Hour) // ignores cancellation on purpose
			return text("late"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns many lines."},
		func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
			var b strings.Builder
			for i := 1; i <= in.Lines; i++ {
				fmt.Fprintf(&b, "- line %d: a row of the page snapshot with a link [ref=e%d]\n", i, i)
			}
			return text(b.String()), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Returns a screenshot."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "took a screenshot"},
				&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Lists the server's environment, one NAME=value per line."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strings.Join(os.Environ(), "\n")), nil, nil
		})
	// stdio-only misbehaviour.
	mcp.AddTool(s, &mcp.Tool{Name: "crash-once", Description: "Exits the first time it is called."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			marker := os.Getenv(markerEnv)
			if _, err := os.Stat(marker); err != nil {
				_ = os.WriteFile(marker, nil, 0o600)
				os.Exit(3)
			}
			return text("survived in " + strconv.Itoa(os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Always exits."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "fatal: out of memory")
			os.Exit(4)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "garbage", Description: "Prints to stdout."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stdout, "Debugger listening on port 9229")
			return text("printed"), nil, nil
		})
	return s
}

// runTestServer serves newTestServer over stdio until stdin closes.
func runTestServer(mode string) {
	if mode == "garbage-start" {
		fmt.Println("Welcome! Server starting...")
	}
	if err := newTestServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		os.Exit(1)
	}
}
