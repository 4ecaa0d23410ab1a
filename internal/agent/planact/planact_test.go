package planact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/mcpclient"
)

// shop is a fake web site behind MCP-like tools: the home page's link is
// broken (clicking it is a tool error), the prices page opens by URL.
func shop() *fakeMCP {
	return &fakeMCP{
		tools: []mcpclient.Tool{
			tool("web", "open", "Open a URL.", `{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`),
			tool("web", "click", "Click an element by its reference.", `{"type":"object","properties":{"ref":{"type":"string"}},"required":["ref"]}`),
		},
		call: func(name string, args json.RawMessage) (mcpclient.Result, error) {
			var in struct{ URL, Ref string }
			_ = json.Unmarshal(args, &in)
			switch {
			case name == "web__open" && in.URL == "http://shop/":
				return mcpclient.Result{Text: "Shop home. link \"Prices\" [ref=e1] /url: /prices"}, nil
			case name == "web__open" && in.URL == "http://shop/prices":
				return mcpclient.Result{Text: "Prices. Green tea costs 3 coins."}, nil
			case name == "web__click":
				return mcpclient.Result{Text: "Element " + in.Ref + " not found", IsError: true}, nil
			}
			return mcpclient.Result{Text: "404 " + in.URL, IsError: true}, nil
		},
	}
}

var readStepRE = regexp.MustCompile(`Step just run: \d+\. Read`)

// shopRoles plans, executes and judges the shop goal; the click fails and
// the replan opens the prices page by its URL.
func shopRoles() roles {
	return roles{
		plan: func(llm.Request) string {
			return planJSON("Open the shop at http://shop/", "Click the Prices link", "Read the price of green tea")
		},
		execute: func(req llm.Request) llm.Message {
			step := currentStep(req)
			switch {
			case strings.HasPrefix(step, "Open the shop"):
				return callMsg("web__open", map[string]string{"url": "http://shop/"})
			case strings.HasPrefix(step, "Click"):
				return callMsg("web__click", map[string]string{"ref": "e1"})
			case strings.HasPrefix(step, "Open http"):
				return callMsg("web__open", map[string]string{"url": strings.Fields(step)[1]})
			}
			last := req.Messages[len(req.Messages)-2]
			_, fact, _ := strings.Cut(last.Content, "Prices. ")
			return llm.Message{Content: fact}
		},
		evaluate: func(req llm.Request) string {
			u := userText(req)
			switch {
			case strings.Contains(u, "Observation (failed)"):
				return decisionJSON("replan", "", "", "the link did not work")
			case readStepRE.MatchString(u):
				_, obs, _ := strings.Cut(u, "Observation (ok):\n")
				return decisionJSON("done", "", strings.TrimSpace(obs), "found the price")
			}
			return "Looks fine. " + decisionJSON("next", "ok", "", "")
		},
		replan: func(req llm.Request) string {
			return "```json\n" + planJSON("Open http://shop/prices", "Read the price of green tea") + "\n```"
		},
	}
}

func TestPlanActReplansAfterAToolError(t *testing.T) {
	for _, table := range []string{"", "testdata/planact.json"} {
		t.Run("table="+table, func(t *testing.T) {
			web := shop()
			var live []graph.Event
			a := newAgent(t, Options{Model: shopRoles().model(40), MCP: web, Table: table, OnEvent: func(ev graph.Event) { live = append(live, ev) }})
			res, err := a.Run(context.Background(), RunInput{Goal: "Find the price of green tea at the shop", RunID: "shop"})
			require.NoError(t, err)
			require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
			assert.Equal(t, 1, res.Replans)
			assert.Contains(t, res.Answer, "3 coins")
			require.Len(t, res.Steps, 4)
			assert.False(t, res.Steps[1].OK, "the click failed")
			assert.Equal(t, "web__click", res.Steps[1].Tool)
			assert.Equal(t, "", res.Steps[3].Tool, "the price was read from the page, without a tool")
			// The plan keeps the failed step and the new ones.
			var statuses []string
			for _, st := range res.Plan {
				statuses = append(statuses, st.Status)
			}
			assert.Equal(t, []string{"done", "failed", "done", "done"}, statuses)
			// Every tool step is in the trace, as an action and an observation.
			actions := eventsOf(res.Trace, graph.TypeAction)
			require.Len(t, actions, 3)
			for i, ev := range actions {
				assert.Equal(t, []string{"web__open", "web__click", "web__open"}[i], ev.Tool)
			}
			assert.Len(t, eventsOf(res.Trace, graph.TypeObservation), 4)
			assert.Len(t, eventsOf(res.Trace, graph.TypeReplan), 1)
			assert.Len(t, eventsOf(res.Trace, graph.TypePlan), 1)
			assert.Equal(t, len(res.Trace), len(live), "OnEvent saw the trace")
			assert.Equal(t, graph.TypeOutcome, live[len(live)-1].Type)
			assert.Equal(t, []string{`web__open {"url":"http://shop/"}`, `web__click {"ref":"e1"}`, `web__open {"url":"http://shop/prices"}`}, web.calls)
			assert.Positive(t, res.Usage.Total())

			// The result prints as the documented JSON.
			raw, err := json.Marshal(res)
			require.NoError(t, err)
			var shape map[string]any
			require.NoError(t, json.Unmarshal(raw, &shape))
			for _, k := range []string{"run", "goal", "outcome", "reason", "plan", "steps", "replans", "results", "usage"} {
				assert.Contains(t, shape, k)
			}
			step := shape["steps"].([]any)[0].(map[string]any)
			for _, k := range []string{"step", "tool", "arguments", "observation", "ok"} {
				assert.Contains(t, step, k)
			}
		})
	}
}

func TestRoutingTables(t *testing.T) {
	good, err := os.ReadFile("testdata/planact.json")
	require.NoError(t, err)
	tab, err := graph.ParseTable(good)
	require.NoError(t, err)
	assert.NotEmpty(t, tab.Conditional)
	cases := []struct{ name, table, want string }{
		{"unknown node", strings.Replace(string(good), `"replan": "planner_replan"`, `"replan": "planner_rethink"`, 1), `unknown node "planner_rethink"`},
		{"unknown branch", strings.Replace(string(good), `"branch": "after_evaluate"`, `"branch": "should_replan"`, 1), `unknown branch "should_replan"`},
		{"unknown field", `{"edges": [], "nodes": []}`, `unknown field "nodes"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NotEqual(t, string(good), c.table, "the case changes the table")
			path := filepath.Join(t.TempDir(), "table.json")
			require.NoError(t, os.WriteFile(path, []byte(c.table), 0o644))
			_, err := New(Options{Model: shopRoles().model(1), Table: path})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestGoalsRefusedAtOnce(t *testing.T) {
	kb := &fakeResearch{}
	noModel := newAgent(t, Options{Research: kb, Functions: kb})
	withModel := newAgent(t, Options{Model: shopRoles().model(1), MCP: shop()})
	withMCP := newAgent(t, Options{Research: kb, Functions: kb, MCP: shop()})
	cases := []struct {
		name string
		a    *Agent
		goal string
		want error
	}{
		{"empty goal", withModel, "  \n", ErrEmptyGoal},
		{"empty goal without a model", noModel, "", ErrEmptyGoal},
		{"a URL without a model", noModel, "Find the price on https://shop.example/prices", ErrNeedsModel},
		{"a click without a model", noModel, "click the Prices link and read the tea price", ErrNeedsModel},
		{"japanese browser words without a model", noModel, "ブラウザでページを開いて価格を調べる", ErrNeedsModel},
		{"MCP servers without a model", withMCP, "find the tea price", ErrNeedsModel},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := c.a.Run(context.Background(), RunInput{Goal: c.goal})
			require.ErrorIs(t, err, c.want)
			assert.Nil(t, res)
		})
	}
	for _, goal := range []string{"How do I deploy a VitePress website?", "Which browsers does VitePress support?", "VitePressの設定方法を理解する", "sidebar and frontmatter options"} {
		assert.False(t, NeedsBrowser(goal), "a research goal: %s", goal)
	}
	assert.Contains(t, ErrNeedsModel.Error(), "--llm openai --llm-url http://127.0.0.1:PORT/v1")
	assert.Contains(t, ErrNeedsModel.Error(), `eval "$(scripts/local-models.sh start)"`)
	assert.Empty(t, kb.searched, "nothing ran")
	_, err := New(Options{})
	assert.ErrorContains(t, err, "language model")
}

func TestImpossibleGoalFailsWithAReason(t *testing.T) {
	t.Run("the planner says so at once", func(t *testing.T) {
		r := roles{plan: func(llm.Request) string { return `{"fail": "no tool can reach the moon"}` }}
		a := newAgent(t, Options{Model: r.model(5), MCP: shop()})
		res, err := a.Run(context.Background(), RunInput{Goal: "Fly to the moon"})
		require.NoError(t, err)
		assert.Equal(t, OutcomeFailure, res.Outcome)
		assert.Contains(t, res.Reason, "no tool can reach the moon")
		assert.Empty(t, res.Steps)
	})
	t.Run("the evaluator gives up after trying", func(t *testing.T) {
		r := shopRoles()
		r.evaluate = func(llm.Request) string {
			return decisionJSON("fail", "", "", "the shop does not sell moon tickets")
		}
		a := newAgent(t, Options{Model: r.model(10), MCP: shop()})
		res, err := a.Run(context.Background(), RunInput{Goal: "Buy a ticket to the moon at the shop"})
		require.NoError(t, err)
		assert.Equal(t, OutcomeFailure, res.Outcome)
		assert.Equal(t, "the shop does not sell moon tickets", res.Reason)
		require.Len(t, res.Steps, 1)
		assert.Equal(t, StatusFailed, res.Plan[0].Status)
		answers := eventsOf(res.Trace, graph.TypeAnswer)
		require.Len(t, answers, 1)
		assert.Contains(t, answers[0].Text, "failure: the shop does not sell moon tickets")
	})
	t.Run("replans run out", func(t *testing.T) {
		r := shopRoles()
		r.replan = func(llm.Request) string { return planJSON("Click the Prices link", "Read the price of green tea") }
		a := newAgent(t, Options{Model: r.model(60), MCP: shop(), MaxReplans: 2})
		res, err := a.Run(context.Background(), RunInput{Goal: "Find the price of green tea at the shop"})
		require.NoError(t, err)
		assert.Equal(t, OutcomeFailure, res.Outcome)
		assert.Equal(t, 2, res.Replans)
		assert.Contains(t, res.Reason, "gave up after 2 replans")
		assert.Contains(t, res.Reason, "Element e1 not found")
	})
}

func TestGuardsTrip(t *testing.T) {
	cases := []struct {
		name   string
		roles  func() roles
		opt    Options
		guard  string
		reason string
	}{{
		name: "repeat action",
		roles: func() roles {
			r := shopRoles()
			r.execute = func(llm.Request) llm.Message {
				return callMsg("web__open", map[string]string{"url": "http://shop/"})
			}
			r.evaluate = func(llm.Request) string { return decisionJSON("continue", "", "", "look again") }
			r.replan = func(llm.Request) string { return planJSON("Open the shop at http://shop/") }
			return r
		},
		guard: graph.GuardRepeatAction, reason: `web__open {"url":"http://shop/"} repeated 5 times`,
	}, {
		name: "no progress",
		roles: func() roles {
			r := shopRoles()
			n := 0
			r.execute = func(llm.Request) llm.Message {
				n++ // a different page each time, the same thing seen
				return callMsg("web__open", map[string]string{"url": fmt.Sprintf("http://shop/nowhere/%d", n)})
			}
			r.evaluate = func(llm.Request) string { return decisionJSON("continue", "", "", "not there yet") }
			return r
		},
		opt:   Options{Guards: graph.Guards{NoProgressSteps: 8}},
		guard: graph.GuardNoProgress, reason: "8 steps in a row without progress",
	}, {
		name: "parse failures",
		roles: func() roles {
			r := shopRoles()
			r.evaluate = func(llm.Request) string { return "The step went well, I think." }
			return r
		},
		guard: graph.GuardParseFailures, reason: "3 parse failures in a row",
	}, {
		name: "parse failures of the planner",
		roles: func() roles {
			r := shopRoles()
			r.plan = func(llm.Request) string { return "I would open the shop first." }
			return r
		},
		guard: graph.GuardParseFailures, reason: "expected {\"plan\": [steps]}",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt
			opt.Model, opt.MCP = c.roles().model(200), shop()
			a := newAgent(t, opt)
			res, err := a.Run(context.Background(), RunInput{Goal: "Find the price of green tea at the shop"})
			require.NoError(t, err)
			assert.Equal(t, OutcomeStopped, res.Outcome)
			assert.Equal(t, c.guard, res.Guard)
			assert.Contains(t, res.Reason, c.reason)
		})
	}
}

func TestUnsatisfiableToolSchema(t *testing.T) {
	web := shop()
	web.tools = append(web.tools, tool("vault", "unlock", "Unlock the vault.",
		`{"type":"object","properties":{"token":{"type":"string","description":"a token nobody has"}},"required":["token"]}`))
	r := roles{
		plan: func(llm.Request) string { return planJSON("Unlock the vault") },
		execute: func(llm.Request) llm.Message {
			return callMsg("vault__unlock", map[string]string{"reason": "please"})
		},
		evaluate: func(req llm.Request) string {
			if strings.Contains(userText(req), "Observation (failed)") {
				return decisionJSON("replan", "", "", "")
			}
			return decisionJSON("next", "", "", "")
		},
		replan: func(llm.Request) string { return planJSON("Unlock the vault another way") },
	}
	a := newAgent(t, Options{Model: r.model(40), MCP: web, MaxReplans: 2})
	res, err := a.Run(context.Background(), RunInput{Goal: "Open the vault"})
	require.NoError(t, err)
	assert.Equal(t, OutcomeFailure, res.Outcome)
	assert.Contains(t, res.Reason, "token: missing; it is required")
	assert.Empty(t, web.calls, "a call that does not fit the schema is never sent")
	require.NotEmpty(t, res.Steps)
	assert.False(t, res.Steps[0].OK)
	assert.Contains(t, res.Steps[0].Observation, "ERROR:")
}

func TestModelErrorFailsTheRun(t *testing.T) {
	r := shopRoles()
	r.plan = func(llm.Request) string { return planJSON("Open the shop at http://shop/") }
	m := r.model(1) // the executor's call finds no scripted answer
	a := newAgent(t, Options{Model: m, MCP: shop()})
	res, err := a.Run(context.Background(), RunInput{Goal: "Find the price"})
	require.NoError(t, err)
	assert.Equal(t, OutcomeFailure, res.Outcome)
	assert.Contains(t, res.Reason, "ask the model")
	assert.Len(t, eventsOf(res.Trace, graph.TypeError), 1)
}

func TestMemoryRecallsPastRuns(t *testing.T) {
	mem, err := NewFileMemory(filepath.Join(t.TempDir(), "mem"))
	require.NoError(t, err)
	r := shopRoles()
	a := newAgent(t, Options{Model: r.model(40), MCP: shop(), Memory: mem})
	first, err := a.Run(context.Background(), RunInput{Goal: "Find the price of green tea at the shop", RunID: "first"})
	require.NoError(t, err)
	require.Equal(t, OutcomeSuccess, first.Outcome)

	var planned []string
	r.plan = func(req llm.Request) string {
		planned = append(planned, userText(req))
		return planJSON("Open http://shop/prices", "Read the price of green tea")
	}
	b := newAgent(t, Options{Model: r.model(40), MCP: shop(), Memory: mem})
	second, err := b.Run(context.Background(), RunInput{Goal: "Find the price of black tea at the shop", RunID: "second"})
	require.NoError(t, err)
	require.Len(t, planned, 1)
	assert.Contains(t, planned[0], `goal "Find the price of green tea at the shop" ended in success`)
	assert.Contains(t, planned[0], "failed: Click the Prices link")
	assert.Equal(t, 0, second.Replans, "the second run plans around what failed")

	recs, err := mem.Recall(context.Background(), "green tea price", 5)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, "first", recs[0].Run, "the closer goal comes first")
	none, err := mem.Recall(context.Background(), "weather tomorrow", 5)
	require.NoError(t, err)
	assert.Empty(t, none)
	_, err = NewFileMemory("")
	assert.Error(t, err)
}

func TestSearchToolCitesPassages(t *testing.T) {
	kb := &fakeResearch{passages: []doc.Hit{
		hit(11, "guide/tea.md", "Tea", "Green tea is brewed at 80 degrees."),
		hit(12, "guide/coffee.md", "Coffee", "Coffee is brewed at 93 degrees."),
	}}
	r := roles{
		plan: func(llm.Request) string { return planJSON("Search the knowledge base for green tea") },
		execute: func(llm.Request) llm.Message {
			return callMsg(ToolSearch, map[string]any{"query": "green tea"})
		},
		evaluate: func(req llm.Request) string {
			u := userText(req)
			if !strings.Contains(u, "[1] guide/tea.md — Tea") {
				return decisionJSON("fail", "", "", "no numbered passage")
			}
			return decisionJSON("done", "", "Brew green tea at 80 degrees [1].", "")
		},
	}
	a := newAgent(t, Options{Model: r.model(10), Research: kb, Functions: kb})
	res, err := a.Run(context.Background(), RunInput{Goal: "How hot should green tea be brewed?"})
	require.NoError(t, err)
	require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
	require.Len(t, res.Results, 1)
	assert.Equal(t, Cited{ChunkID: 11, Source: SourceRef{URI: "guide/tea.md"}, Heading: "Tea"}, res.Results[0])
	assert.Equal(t, []string{"green tea"}, kb.searched)

	// The citation grammar is the ReAct agent's (package cite): a list
	// [1, 2] cites both passages, and arr[2] in code cites nothing.
	r.execute = func(llm.Request) llm.Message { return callMsg(ToolSearch, map[string]any{"query": "brewed"}) }
	r.evaluate = func(req llm.Request) string {
		return decisionJSON("done", "", "Tea takes 80 degrees and coffee 93 [1, 2]; in code, `t[2]` is an index.", "")
	}
	res, err = newAgent(t, Options{Model: r.model(10), Research: kb, Functions: kb}).Run(context.Background(), RunInput{Goal: "How hot should tea and coffee be brewed?"})
	require.NoError(t, err)
	require.Len(t, res.Results, 2)
	assert.Equal(t, int64(12), res.Results[1].ChunkID)
}

// TestCheckpointsHoldChunkIDs: the run log keeps the passages a run read
// as chunk IDs (in checkpoints and in the calls' records), never copies of
// their text, and a resumed run reads the text back from the index.
func TestCheckpointsHoldChunkIDs(t *testing.T) {
	const text = "Green tea is brewed at 80 degrees."
	newKB := func() *fakeResearch {
		return &fakeResearch{passages: []doc.Hit{hit(11, "guide/tea.md", "Tea", text), hit(12, "guide/coffee.md", "Coffee", "Coffee is brewed at 93 degrees.")}}
	}
	var judged []string
	r := roles{
		plan:    func(llm.Request) string { return planJSON("Search the knowledge base for green tea") },
		execute: func(llm.Request) llm.Message { return callMsg(ToolSearch, map[string]any{"query": "green tea"}) },
		evaluate: func(req llm.Request) string {
			judged = append(judged, userText(req))
			return decisionJSON("done", "", "Brew green tea at 80 degrees [1].", "")
		},
	}
	log := graph.NewMemLog()
	kb := newKB()
	// Stop right after the search's result is checkpointed.
	res, err := newAgent(t, Options{Model: r.model(10), Research: kb, Functions: kb, Log: log, Limits: graph.Limits{MaxSteps: 4}}).
		Run(context.Background(), RunInput{Goal: "How hot should green tea be brewed?", RunID: "ids"})
	require.NoError(t, err)
	require.Equal(t, OutcomeStopped, res.Outcome, res.Reason)
	require.Empty(t, judged, "the run stopped before the planner judged the step")

	evs, err := log.Events(context.Background(), "ids")
	require.NoError(t, err)
	// What the model was shown (the observation, the history, the
	// executor's messages) is the conversation and stays; the passages and
	// the call's record name chunks.
	var once, passages int
	for _, ev := range evs {
		switch ev.Type {
		case graph.TypeOnce:
			once++
			assert.NotContains(t, string(ev.Result), "80 degrees", "the call's record holds a copy of a passage's text")
			assert.Contains(t, string(ev.Result), `"hits":[11]`, "the call's record names the passage by its chunk ID")
		case graph.TypeCheckpoint:
			if d, ok := ev.Delta["passages"]; ok {
				passages++
				raw, err := json.Marshal(d)
				require.NoError(t, err)
				assert.JSONEq(t, `{"set":[11]}`, string(raw), "a checkpoint's passages are chunk IDs")
			}
		}
	}
	assert.Equal(t, 1, once, "one call was recorded")
	assert.Equal(t, 1, passages, "one checkpoint added the passage")

	// The resumed run reads the passage back from the index.
	kb = newKB()
	res, err = newAgent(t, Options{Model: r.model(10), Research: kb, Functions: kb, Log: log}).Resume(context.Background(), "ids")
	require.NoError(t, err)
	require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
	require.Len(t, judged, 1)
	assert.Contains(t, judged[0], "[1] guide/tea.md — Tea")
	assert.Contains(t, judged[0], text, "the planner judged the passage's text, read back from the index")
	assert.Empty(t, kb.searched, "the search completed before the stop and was not made again")
	assert.Equal(t, []Cited{{ChunkID: 11, Source: SourceRef{URI: "guide/tea.md"}, Heading: "Tea"}}, res.Results)
}

func TestResumeAfterStop(t *testing.T) {
	log := graph.NewMemLog()
	r := shopRoles()
	a := newAgent(t, Options{Model: r.model(60), MCP: shop(), Log: log, Limits: graph.Limits{MaxSteps: 7}})
	res, err := a.Run(context.Background(), RunInput{Goal: "Find the price of green tea at the shop", RunID: "r1"})
	require.NoError(t, err)
	require.Equal(t, OutcomeStopped, res.Outcome)
	assert.Equal(t, graph.GuardMaxSteps, res.Guard)

	web := shop()
	b := newAgent(t, Options{Model: r.model(60), MCP: web, Log: log})
	res, err = b.Resume(context.Background(), "r1")
	require.NoError(t, err)
	require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
	assert.Contains(t, res.Answer, "3 coins")
	assert.NotContains(t, web.calls, `web__open {"url":"http://shop/"}`, "the first call completed before the stop and is not made again")

	_, err = b.Run(context.Background(), RunInput{Goal: "Find the price of green tea at the shop", RunID: "r1"})
	assert.ErrorContains(t, err, "Resume it or choose a new id")
	_, err = b.Resume(context.Background(), "no-such-run")
	assert.ErrorContains(t, err, "no checkpoint")
	_, err = b.Resume(context.Background(), "")
	assert.Error(t, err)
}

func TestParseReplies(t *testing.T) {
	plans := []struct {
		in    string
		steps []string
		fail  string
		err   bool
	}{
		{`{"plan": ["a", "b"]}`, []string{"a", "b"}, "", false},
		{"Sure!\n```json\n{\"steps\": [{\"text\": \"a\"}, {\"description\": \"b\"}]}\n```", []string{"a", "b"}, "", false},
		{"1. open the page\n2) click it\n- read it", []string{"open the page", "click it", "read it"}, "", false},
		{`{"fail": "cannot"}`, nil, "cannot", false},
		{`{"plan": []}`, nil, "", true},
		{"no idea", nil, "", true},
		{"", nil, "", true},
	}
	for _, c := range plans {
		steps, fail, err := parsePlan(c.in)
		assert.Equal(t, c.err, err != nil, "%q: %v", c.in, err)
		assert.Equal(t, c.steps, steps, c.in)
		assert.Equal(t, c.fail, fail, c.in)
	}
	decisions := []struct{ in, want string }{
		{`{"decision": "next"}`, DecideNext},
		{`Here: {"decision": "Next Step", "result": "x"}`, DecideNext},
		{`{"decision": "COMPLETE", "answer": "42"}`, DecideDone},
		{`{"decision": "give up"}`, DecideFail},
		{`{"decision": "dance"}`, ""},
		{`decision: next`, ""},
	}
	for _, c := range decisions {
		d, err := parseDecision(c.in)
		if c.want == "" {
			assert.Error(t, err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, d.Decision, c.in)
	}
	assert.True(t, errors.Is(ErrEmptyGoal, ErrEmptyGoal))
}

func TestFullTextStaysInTheLog(t *testing.T) {
	web := shop()
	web.call = func(name string, _ json.RawMessage) (mcpclient.Result, error) {
		return mcpclient.Result{Text: "Prices. Green tea costs 3 coins.\n[result cut]", Full: "Prices. Green tea costs 3 coins.\nSECRET-TAIL of a long page", Truncated: true}, nil
	}
	r := shopRoles()
	r.plan = func(llm.Request) string {
		return planJSON("Open the shop at http://shop/", "Read the price of green tea")
	}
	var seen []string
	exec := r.execute
	r.execute = func(req llm.Request) llm.Message {
		for _, m := range req.Messages {
			seen = append(seen, m.Content)
		}
		return exec(req)
	}
	log := graph.NewMemLog()
	a := newAgent(t, Options{Model: r.model(20), MCP: web, Log: log})
	res, err := a.Run(context.Background(), RunInput{Goal: "Find the price of green tea", RunID: "full"})
	require.NoError(t, err)
	require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
	assert.Contains(t, res.Answer, "3 coins")
	assert.NotContains(t, strings.Join(seen, "\n"), "SECRET-TAIL", "the model sees the trimmed text")
	assert.NotContains(t, res.Steps[0].Observation, "SECRET-TAIL")
	evs, err := log.Events(context.Background(), "full")
	require.NoError(t, err)
	onces := eventsOf(evs, graph.TypeOnce)
	require.Len(t, onces, 1)
	assert.Equal(t, "full/replan-0/step-1/attempt-1", onces[0].Key)
	assert.Contains(t, string(onces[0].Result), "SECRET-TAIL", "the log keeps the full text")
	// Five model calls (plan, two dispatches, two evaluations) of 100 in, 20 out.
	assert.Equal(t, graph.Tokens{In: 500, Out: 100}, res.Usage)
}
