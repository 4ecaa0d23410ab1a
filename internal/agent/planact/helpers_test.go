package planact

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
	"github.com/sagasu-dev/sagasu/internal/mcpclient"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// roles is a scripted model's behaviour per role, each a function of the
// request (nil: a parse-proof default).
type roles struct {
	plan     func(req llm.Request) string
	execute  func(req llm.Request) llm.Message
	evaluate func(req llm.Request) string
	replan   func(req llm.Request) string
}

// answer answers one request by the role its system prompt names.
func (r roles) answer(req llm.Request) (*llm.Response, error) {
	msg := llm.Message{Role: llm.RoleAssistant}
	switch req.System {
	case systemPlanner:
		msg.Content = r.plan(req)
	case systemExecutor:
		msg = r.execute(req)
		msg.Role = llm.RoleAssistant
	case systemEvaluator:
		msg.Content = r.evaluate(req)
	case systemReplanner:
		if r.replan == nil {
			return nil, fmt.Errorf("the script has no replanner")
		}
		msg.Content = r.replan(req)
	default:
		return nil, fmt.Errorf("unknown role: %.60q", req.System)
	}
	stop := llm.StopEnd
	if len(msg.ToolCalls) > 0 {
		stop = llm.StopToolCalls
	}
	return &llm.Response{Message: msg, Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}, StopReason: stop}, nil
}

// model is a scripted model of n Func steps, each answering by role.
func (r roles) model(n int) *llmtest.Model {
	m := llmtest.New()
	for range n {
		m.Push(llmtest.Func(r.answer))
	}
	return m
}

// userText is the text of the request's user messages.
func userText(req llm.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			b.WriteString(m.Content + "\n")
		}
	}
	return b.String()
}

// currentStep is the step the executor is asked to do.
func currentStep(req llm.Request) string {
	last := req.Messages[len(req.Messages)-1].Content
	_, after, _ := strings.Cut(last, ": ")
	step, _, _ := strings.Cut(after, "\n")
	return step
}

func callMsg(name string, args any) llm.Message {
	raw, _ := json.Marshal(args)
	return llm.Message{ToolCalls: []llm.ToolCall{{ID: "c-" + name, Name: name, Arguments: raw}}}
}

func planJSON(steps ...string) string {
	b, _ := json.Marshal(map[string]any{"plan": steps})
	return string(b)
}

func decisionJSON(d, result, answer, reason string) string {
	b, _ := json.Marshal(decision{Decision: d, Result: result, Answer: answer, Reason: reason})
	return string(b)
}

// fakeMCP is an MCP of in-process tools.
type fakeMCP struct {
	mu    sync.Mutex
	tools []mcpclient.Tool
	call  func(name string, args json.RawMessage) (mcpclient.Result, error)
	calls []string
}

// Functions offers the tools as a Manager does: each under its function
// name, its result read as mcpclient.Result.Outcome reads it.
func (f *fakeMCP) Functions(context.Context) ([]llm.Function, error) {
	out := make([]llm.Function, len(f.tools))
	for i, t := range f.tools {
		out[i] = fakeFunc{
			decl: llm.Tool{Name: t.FuncName, Description: t.Description, Parameters: t.InputSchema},
			call: func(_ context.Context, args json.RawMessage, _ []doc.Hit) (llm.Outcome, error) {
				f.mu.Lock()
				f.calls = append(f.calls, t.FuncName+" "+string(args))
				f.mu.Unlock()
				r, err := f.call(t.FuncName, args)
				if err != nil {
					return llm.Outcome{}, err
				}
				return r.Outcome(t.FuncName), nil
			},
		}
	}
	return out, nil
}

// fakeFunc is an llm.Function of a test.
type fakeFunc struct {
	decl llm.Tool
	call func(ctx context.Context, args json.RawMessage, found []doc.Hit) (llm.Outcome, error)
}

func (f fakeFunc) Tool() llm.Tool { return f.decl }
func (f fakeFunc) Call(ctx context.Context, args json.RawMessage, found []doc.Hit) (llm.Outcome, error) {
	return f.call(ctx, args, found)
}

func tool(server, name, desc, schema string) mcpclient.Tool {
	return mcpclient.Tool{Server: server, Name: name, FuncName: mcpclient.FuncName(server, name), Description: desc, InputSchema: json.RawMessage(schema)}
}

// fakeResearch is Research and the knowledge base's functions over fixed
// passages: sagasu_query returns the passages whose text has a word of
// the query. Its tools are the toolset's, with their real schemas.
type fakeResearch struct {
	passages []doc.Hit
	returned []doc.Hit // every passage a search returned: the index, for Passages
	searched []string
	onSearch func(query string) error
}

func (f *fakeResearch) Tools() []llm.Tool {
	ts, err := tools.FunctionTools()
	if err != nil {
		panic(err)
	}
	return ts
}

// List offers the toolset's functions, each answered by Call.
func (f *fakeResearch) List() []llm.Function {
	var out []llm.Function
	for _, t := range f.Tools() {
		out = append(out, fakeFunc{decl: t, call: func(ctx context.Context, args json.RawMessage, found []doc.Hit) (llm.Outcome, error) {
			return f.Call(ctx, llm.ToolCall{Name: t.Name, Arguments: args}, found)
		}})
	}
	return out
}

// Passages reads the passages by chunk ID: the fixed ones, and any a
// search returned.
func (f *fakeResearch) Passages(_ context.Context, ids []int64) ([]doc.Hit, error) {
	var out []doc.Hit
	seen := map[int64]bool{}
	for _, h := range slices.Concat(f.passages, f.returned) {
		if slices.Contains(ids, h.Chunk.ID) && !seen[h.Chunk.ID] {
			seen[h.Chunk.ID] = true
			out = append(out, h)
		}
	}
	return out, nil
}

func (f *fakeResearch) Call(ctx context.Context, call llm.ToolCall, _ []doc.Hit) (tools.Outcome, error) {
	if _, err := llm.CheckToolCall(f.Tools(), call); err != nil {
		return tools.Outcome{}, err
	}
	if call.Name != tools.NameQuery {
		return tools.Outcome{}, fmt.Errorf("the fake knowledge base has no %s", call.Name)
	}
	in, err := llm.ParseArgs[tools.QueryInput](call)
	if err != nil {
		return tools.Outcome{}, err
	}
	k := in.K
	if k == 0 {
		k = 10
	}
	hits, err := f.Search(ctx, in.Query, k)
	return tools.Outcome{Tool: call.Name, Hits: hits}, err
}

func (f *fakeResearch) Plan(_ context.Context, goal string) ([]Stage, error) {
	return []Stage{{Aspect: goal, Description: "Find out about " + goal, Query: goal}}, nil
}

func (f *fakeResearch) Search(_ context.Context, query string, k int) ([]doc.Hit, error) {
	f.searched = append(f.searched, query)
	if f.onSearch != nil {
		if err := f.onSearch(query); err != nil {
			return nil, err
		}
	}
	var out []doc.Hit
	for _, h := range f.passages {
		for _, w := range strings.Fields(strings.ToLower(query)) {
			if strings.Contains(strings.ToLower(h.Chunk.Text), w) {
				out = append(out, h)
				break
			}
		}
	}
	out = out[:min(k, len(out))]
	f.returned = append(f.returned, out...)
	return out, nil
}

func (f *fakeResearch) Evaluate(_ context.Context, _, aspect string, hits []doc.Hit) (Coverage, error) {
	for _, h := range hits {
		if strings.Contains(strings.ToLower(h.Chunk.Text), strings.ToLower(aspect)) {
			return Coverage{Covered: true, Score: 1, Evidence: []int64{h.Chunk.ID}}, nil
		}
	}
	return Coverage{Missing: []string{aspect}}, nil
}

func (f *fakeResearch) Refine(_ context.Context, _, aspect, _ string, _ []doc.Hit, avoid []string) (string, error) {
	return aspect + " " + fmt.Sprint(len(avoid)), nil
}

func hit(id int64, uri, heading, text string) doc.Hit {
	return doc.Hit{Chunk: doc.Chunk{ID: id, Text: text, Heading: []string{heading}}, Source: doc.Source{URI: uri}}
}

// newAgent builds an agent or fails the test.
func newAgent(t *testing.T, opt Options) *Agent {
	t.Helper()
	a, err := New(opt)
	require.NoError(t, err)
	return a
}

// eventsOf returns the trace events of a type.
func eventsOf(evs []graph.Event, typ string) []graph.Event {
	var out []graph.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}
