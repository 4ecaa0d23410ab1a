package planact

import (
	"context"
	"fmt"
	"net/http"

	"go.uber.org/goleak"

	"os"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/testcorpus"
	"github.com/sagasu-dev/sagasu/internal/testenv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/mcpclient"
)

// serverModeEnv makes the test binary a stdio MCP server (see TestMain):
// "exit" exits when its tool is called, "hang" never answers a call,
// "hang-start" never answers at all.
const serverModeEnv = "PLANACT_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverModeEnv); mode != "" {
		runTestServer(mode)
		os.Exit(0)
	}
	// Fail the package when its tests leave goroutines running.
	code := m.Run()
	testcorpus.Close()
	// Keep-alive connections to a model server are not leaks.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left running:", err)
			code = 1
		}
	}
	os.Exit(code)
}

type doIn struct {
	What string `json:"what" jsonschema:"what to do"`
}

func runTestServer(mode string) {
	if mode == "hang-start" {
		time.Sleep(time.Hour)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "planact-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "do", Description: "Does the thing."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in doIn) (*mcp.CallToolResult, any, error) {
			switch mode {
			case "exit":
				os.Exit(3)
			case "hang":
				<-ctx.Done()
				time.Sleep(time.Hour)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "did " + in.What}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		os.Exit(1)
	}
}

// doRoles always calls srv__do and replans when it fails.
func doRoles() roles {
	return roles{
		plan:    func(llm.Request) string { return planJSON("Do the thing with the server") },
		execute: func(llm.Request) llm.Message { return callMsg("srv__do", map[string]string{"what": "the thing"}) },
		evaluate: func(req llm.Request) string {
			if strings.Contains(userText(req), "Observation (failed)") {
				return decisionJSON("replan", "", "", "the server failed")
			}
			return decisionJSON("done", "", "it is done", "")
		},
		replan: func(llm.Request) string { return planJSON("Do the thing with the server again") },
	}
}

func TestMCPServerFailuresBecomeStepFailures(t *testing.T) {
	testenv.Short(t, "starts MCP servers and waits for their timeouts")
	self := func(mode string) mcpclient.ServerConfig {
		return mcpclient.ServerConfig{Command: os.Args[0], Args: []string{"-test.run=^$"},
			Env: map[string]string{serverModeEnv: mode}, Timeout: 2 * time.Second}
	}
	cases := []struct {
		name string
		cfg  mcpclient.ServerConfig
		// want is in the observation of the failed call.
		want    string
		outcome string
	}{
		{"working", self("ok"), "did the thing", OutcomeSuccess},
		{"missing", mcpclient.ServerConfig{Command: "/nonexistent/sagasu-test-mcp-server", Timeout: 2 * time.Second}, `there is no tool "srv__do"`, OutcomeFailure},
		{"exits during the call", self("exit"), "ERROR:", OutcomeFailure},
		{"hangs", self("hang"), "ERROR:", OutcomeFailure},
		{"hangs at start", self("hang-start"), `there is no tool "srv__do"`, OutcomeFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := mcpclient.New(map[string]mcpclient.ServerConfig{"srv": c.cfg}, mcpclient.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			a := newAgent(t, Options{Model: doRoles().model(30), MCP: m, MaxReplans: 1})
			res, err := a.Run(ctx, RunInput{Goal: "Do the thing"})
			require.NoError(t, err)
			require.NoError(t, ctx.Err(), "the run ended by itself, without hanging")
			t.Logf("%s: %s in %s: %s", c.name, res.Outcome, time.Since(start).Round(time.Millisecond), res.Reason)
			require.Equal(t, c.outcome, res.Outcome, res.Reason)
			require.NotEmpty(t, res.Steps)
			assert.Contains(t, res.Steps[0].Observation, c.want)
			if c.outcome == OutcomeFailure {
				assert.Equal(t, 1, res.Replans)
				assert.Contains(t, res.Reason, "gave up after 1 replans")
				assert.False(t, res.Steps[0].OK)
			}
			if c.name == "missing" || c.name == "hangs at start" {
				errs := eventsOf(res.Trace, graph.TypeError)
				require.NotEmpty(t, errs, "the missing server is reported in the trace")
				assert.Contains(t, errs[0].Text, "srv")
			}
		})
	}
}
