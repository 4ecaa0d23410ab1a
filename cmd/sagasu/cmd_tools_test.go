package main

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestOneSchemaPerOperation: the CLI (`sagasu tools --json`), the MCP
// server (tools/list of `sagasu mcp` over stdio), the ReAct agent and the
// Plan-and-Act executor (the tools in their models' requests) list the same
// input schema for each operation the agents use: one definition, derived
// once.
func TestOneSchemaPerOperation(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	db := filepath.Join(dir, ".sagasu", "sagasu.db")
	schemas := map[string]map[string]string{} // face -> tool -> schema, keys sorted
	compact := func(raw []byte) string {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	add := func(face, tool string, raw []byte) {
		if schemas[face] == nil {
			schemas[face] = map[string]string{}
		}
		schemas[face][tool] = compact(raw)
	}

	var cli []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, dir, "--db", db, "tools", "--json")), &cli); err != nil {
		t.Fatal(err)
	}
	for _, c := range cli {
		add("cli", c.Name, c.InputSchema)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var errb strings.Builder
		if code := run(ctx, []string{"--db", db, "mcp", "--tools", "all", "--root", dir, "--no-cache"}, inR, outW, &errb, []string{"HOME=" + dir}); code != 0 {
			t.Errorf("sagasu mcp: exit %d: %s", code, errb.String())
		}
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "schema-test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range listed.Tools {
		raw, _ := json.Marshal(tl.InputSchema)
		add("mcp", tl.Name, raw)
	}
	cs.Close()
	inW.Close()
	<-done

	cfg := app.Defaults()
	cfg.DB = db
	a := app.New(cfg, io.Discard, []string{"HOME=" + dir})
	rt, err := a.Open(ctx, app.OpenOptions{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	react := llmtest.New(llmtest.Text("Build the site and upload the dist folder."), llmtest.Text("Done."), llmtest.Text("Done."))
	rt.LLM = react
	if _, err := rt.Asker(app.AskOptions{}).Ask(ctx, "how do I deploy?", nil); err != nil {
		t.Fatal(err)
	}
	for _, tl := range react.Requests()[0].Tools {
		add("react", tl.Name, tl.Parameters)
	}

	// Plan-and-Act: the planner plans one step, the executor is offered
	// its tools (recorded), the planner judges the goal reached.
	var executor []llm.Tool
	pa := llmtest.New()
	for range 3 {
		pa.Push(llmtest.Func(func(req llm.Request) (*llm.Response, error) {
			msg := llm.Message{Role: llm.RoleAssistant, Content: `{"plan": ["search the notes for deploying"]}`}
			switch {
			case len(req.Tools) > 0:
				executor = req.Tools
				msg.Content = "The notes say to deploy on Fridays."
			case strings.Contains(req.System, "judging"):
				msg.Content = `{"decision": "done", "answer": "on Fridays"}`
			}
			return &llm.Response{Message: msg}, nil
		}))
	}
	rt.LLM = pa
	run, err := rt.NewPlanActRun(ctx, app.PlanActOptions{Goal: "when are notes deployed?"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	res, err := run.Start(ctx)
	if err != nil || res.Outcome != planact.OutcomeSuccess {
		t.Fatalf("plan-and-act: %v %+v", err, res)
	}
	for _, tl := range executor {
		add("planact", tl.Name, tl.Parameters)
	}

	for _, name := range tools.AgentFunctions {
		want := schemas["cli"][name]
		if want == "" {
			t.Fatalf("sagasu tools does not list %s", name)
		}
		for _, face := range []string{"mcp", "react", "planact"} {
			if got := schemas[face][name]; got != want {
				t.Errorf("%s lists %s with another schema:\n got %s\nwant %s", face, name, got, want)
			}
		}
	}
	for name, want := range schemas["cli"] {
		if got := schemas["mcp"][name]; got != want {
			t.Errorf("MCP lists %s with another schema than the CLI:\n got %s\nwant %s", name, got, want)
		}
	}
	if len(schemas["react"]) != len(tools.AgentFunctions) || len(schemas["planact"]) != len(tools.AgentFunctions) {
		t.Errorf("ReAct offers %d tools, Plan-and-Act %d; want the %d agent functions", len(schemas["react"]), len(schemas["planact"]), len(tools.AgentFunctions))
	}
}
