package react

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
	"github.com/sagasu-dev/sagasu/internal/testcorpus"
)

// types lists the trace's event types in order.
func types(res *Result) string {
	var ts []string
	for _, ev := range res.Trace {
		ts = append(ts, ev.Type)
	}
	return strings.Join(ts, ",")
}

// citeFor answers with sentence, cited to the passage (as the run's
// observations numbered it) whose text contains quote.
func citeFor(t *testing.T, sentence, quote string) llmtest.Step {
	return llmtest.Func(func(req llm.Request) (*llm.Response, error) {
		for _, m := range req.Messages {
			if m.Role != llm.RoleTool {
				continue
			}
			for _, block := range strings.Split(m.Content, "\n\n[") {
				if strings.Contains(block, quote) {
					n := strings.TrimPrefix(block, "[")
					n = n[:strings.Index(n, "]")]
					return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: strings.ReplaceAll(sentence, "[n]", "["+n+"]")}}, nil
				}
			}
		}
		t.Errorf("no observation holds %q", quote)
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: sentence}}, nil
	})
}

func llmAgent(t *testing.T, m llm.Model, opt LLMOptions) *Agent {
	t.Helper()
	opt.Model = m
	return New(functions(t, testcorpus.Kumo(t)), Options{}).WithModel(opt)
}

// TestReActThenReflection: the model searches, drafts an answer with one
// sentence its passages do not back, and the reflection revises it; the
// final answer keeps only backed sentences, cited to retrieved chunks.
func TestReActThenReflection(t *testing.T) {
	m := llmtest.New(
		llmtest.Step{ToolCalls: []llm.ToolCall{llmtest.Call("c1", ToolSearch, `{"query":"sitemap generation","k":3}`)}, Text: "I need the sitemap page."},
		llmtest.Text("Add a sitemap option with a hostname to your config to generate sitemap.xml [1]. Sitemaps are rendered by a Rust service on port 9999 [1]."),
		llmtest.Func(func(req llm.Request) (*llm.Response, error) {
			last := req.Messages[len(req.Messages)-1].Content
			if !strings.Contains(last, "Accuracy") || !strings.Contains(last, "9999") {
				t.Errorf("the reflection request does not name the unsupported sentence: %q", last)
			}
			return citeFor(t, "Kumo writes a `sitemap.xml` file for your whole site when you build it [n].", "writes a `sitemap.xml` file").Func(req)
		}),
	)
	a := llmAgent(t, m, LLMOptions{})
	res, err := a.Ask(context.Background(), "How do I generate a sitemap?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "llm" || res.Stopped != "" {
		t.Errorf("mode %q, stopped %q", res.Mode, res.Stopped)
	}
	if !strings.Contains(res.Answer, "sitemap.xml") || strings.Contains(res.Answer, "9999") {
		t.Errorf("answer %q: want the backed sentence and not the invented one", res.Answer)
	}
	if len(res.Citations) != 1 || !strings.HasSuffix(res.Citations[0].Source.URI, "sitemap-generation.md") {
		t.Fatalf("citations %+v", res.Citations)
	}
	for _, c := range res.Claims {
		if c.Checked && !c.Supported {
			t.Errorf("unsupported claim left in the answer: %+v", c)
		}
	}
	got := types(res)
	for _, want := range []string{"thought", "action", "observation", "reflection", "answer"} {
		if !strings.Contains(got, want) {
			t.Errorf("trace %s has no %s", got, want)
		}
	}
	if res.Turns != 2 {
		t.Errorf("turns %d, want 2", res.Turns)
	}
	if m.Remaining() != 0 {
		t.Errorf("%d scripted steps unused", m.Remaining())
	}
	// The first turn must search (a small model asked freely answers from
	// memory); the next may answer.
	if reqs := m.Requests(); len(reqs) < 2 || reqs[0].ToolChoice != llm.ToolChoiceRequired || reqs[1].ToolChoice != llm.ToolChoiceAuto {
		t.Errorf("tool choices of the turns: want required, then auto; got %v", toolChoices(reqs))
	}
}

func toolChoices(reqs []llm.Request) []llm.ToolChoice {
	var out []llm.ToolChoice
	for _, r := range reqs {
		out = append(out, r.ToolChoice)
	}
	return out
}

// TestUnbackedModelAnswerFallsBackToQuotes: a model whose answer cites
// nothing gets an answer quoted from the passages it retrieved, and the
// reflection says so.
func TestUnbackedModelAnswerFallsBackToQuotes(t *testing.T) {
	m := llmtest.New(
		llmtest.Calls(llmtest.Call("c1", ToolSearch, `{"query":"local search provider"}`)),
		llmtest.Text("Just use Google."),
		llmtest.Text("Just use Google, it is the best."),
	)
	res, err := llmAgent(t, m, LLMOptions{}).Ask(context.Background(), "How do I enable local search?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Answer, "Google") || len(res.Citations) == 0 {
		t.Errorf("answer %q with %d citations: want quoted passages", res.Answer, len(res.Citations))
	}
	if len(res.Reflection.Unsupported) == 0 || !strings.Contains(res.Reflection.Accuracy.Note, "quotes the passages") {
		t.Errorf("reflection %+v does not report the fallback", res.Reflection)
	}
}

// TestGuardsEndRunsWithTheBestAnswerSoFar: a model that repeats one call,
// one that sends malformed arguments, and one that runs out of turns each
// end with a cited answer and the reason.
func TestGuardsEndRunsWithTheBestAnswerSoFar(t *testing.T) {
	same := llmtest.Call("c", ToolSearch, `{"query":"sitemap"}`)
	tests := []struct {
		name    string
		steps   []llmtest.Step
		opt     LLMOptions
		stopped string
	}{
		{"repeats one call", []llmtest.Step{llmtest.Calls(same), llmtest.Calls(same), llmtest.Calls(same), llmtest.Calls(same), llmtest.Calls(same)}, LLMOptions{}, graph.GuardRepeatAction},
		{"malformed arguments", []llmtest.Step{
			llmtest.Calls(llmtest.Call("c1", ToolSearch, `{"query":"sitemap"}`)),
			llmtest.Calls(llmtest.Call("c2", ToolSearch, `{"query": sitemap`)),
			llmtest.Calls(llmtest.Call("c3", ToolSearch, `{"k": 3}`)),
			llmtest.Calls(llmtest.Call("c4", "search_the_web", `{"query":"x"}`)),
			llmtest.Calls(llmtest.Call("c5", ToolSearch, `[1,2]`)),
		}, LLMOptions{}, graph.GuardParseFailures},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := llmtest.New(tt.steps...)
			res, err := llmAgent(t, m, tt.opt).Ask(context.Background(), "How do I generate a sitemap?", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Stopped, tt.stopped) {
				t.Errorf("stopped %q, want %s", res.Stopped, tt.stopped)
			}
			if len(res.Citations) == 0 || !strings.Contains(strings.ToLower(res.Answer), "sitemap") {
				t.Errorf("answer %q with %d citations: want the best cited answer so far", res.Answer, len(res.Citations))
			}
		})
	}
}

// TestOutOfTurnsAnswersWithoutTools: at max_turns the model must answer.
func TestOutOfTurnsAnswersWithoutTools(t *testing.T) {
	m := llmtest.New(
		llmtest.Calls(llmtest.Call("c1", ToolSearch, `{"query":"sitemap"}`)),
		llmtest.Calls(llmtest.Call("c2", ToolSearch, `{"query":"sitemap hostname"}`)),
		llmtest.Func(func(req llm.Request) (*llm.Response, error) {
			if req.ToolChoice != llm.ToolChoiceNone || len(req.Tools) != 0 {
				t.Errorf("out of turns, the model was still offered tools (%q, %d)", req.ToolChoice, len(req.Tools))
			}
			return citeFor(t, "Kumo writes a `sitemap.xml` file for your whole site when you build it [n].", "writes a `sitemap.xml` file").Func(req)
		}),
		citeFor(t, "Kumo writes a `sitemap.xml` file for your whole site when you build it [n].", "writes a `sitemap.xml` file"),
	)
	res, err := llmAgent(t, m, LLMOptions{MaxTurns: 2}).Ask(context.Background(), "How do I generate a sitemap?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 2 || res.Stopped != "" || len(res.Citations) != 1 {
		t.Errorf("turns %d, stopped %q, citations %d", res.Turns, res.Stopped, len(res.Citations))
	}
}

// TestModelFailures: a model that is down fails with a clear error; one
// whose stream is cut after it found passages still gives a cited answer
// and says what happened.
func TestModelFailures(t *testing.T) {
	down := llmtest.New(llmtest.Fail(errors.New("connection refused")))
	_, err := llmAgent(t, down, LLMOptions{}).Ask(context.Background(), "How do I generate a sitemap?", nil)
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("model down: err %v, want the cause", err)
	}

	cut := llmtest.New(
		llmtest.Calls(llmtest.Call("c1", ToolSearch, `{"query":"sitemap"}`)),
		llmtest.Step{Text: "Kumo writes a `sitemap.xml` file for your whole site", CutAfter: 3, Err: llm.ErrIncomplete},
	)
	var streamed strings.Builder
	res, err := llmAgent(t, cut, LLMOptions{OnDelta: func(s string) { streamed.WriteString(s) }}).Ask(context.Background(), "How do I generate a sitemap?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if streamed.Len() == 0 || res.Stopped == "" || len(res.Citations) == 0 {
		t.Errorf("stream cut: streamed %q, stopped %q, citations %d", streamed.String(), res.Stopped, len(res.Citations))
	}
}

// TestUnreadableToolCallAsksAgainAsText: when the server cannot read the
// model's reply as a tool call (llama-server answers 500 for a small
// model's malformed call), the turn is asked again without tools and the
// run ends with a cited answer from what it had found, saying what
// happened, instead of failing.
func TestUnreadableToolCallAsksAgainAsText(t *testing.T) {
	garbled := &llm.APIError{Driver: "openai", Endpoint: "http://127.0.0.1:1/v1", Status: 500, Code: "server_error",
		Message: "The model produced output that does not match the expected peg-native format"}
	answer := "Kumo writes a `sitemap.xml` file for your whole site when you build it [n]."
	m := llmtest.New(
		llmtest.Calls(llmtest.Call("c1", ToolSearch, `{"query":"sitemap"}`)),
		llmtest.Fail(garbled),
		llmtest.Func(func(req llm.Request) (*llm.Response, error) {
			if req.ToolChoice != llm.ToolChoiceNone || len(req.Tools) != 0 {
				t.Errorf("asked again with tools (%q, %d)", req.ToolChoice, len(req.Tools))
			}
			return citeFor(t, answer, "writes a `sitemap.xml` file").Func(req)
		}),
		citeFor(t, answer, "writes a `sitemap.xml` file"),
	)
	res, err := llmAgent(t, m, LLMOptions{}).Ask(context.Background(), "How do I generate a sitemap?", nil)
	if err != nil {
		t.Fatalf("a garbled tool call failed the run: %v", err)
	}
	if len(res.Citations) != 1 || !strings.Contains(res.Answer, "sitemap.xml") {
		t.Errorf("answer %q with %d citations, want the cited sitemap answer", res.Answer, len(res.Citations))
	}
	said := false
	for _, ev := range res.Trace {
		said = said || (ev.Type == graph.TypeError && strings.Contains(ev.Text, "peg-native") && strings.Contains(ev.Text, "without tools"))
	}
	if !said {
		t.Errorf("the trace does not say the tool call was unreadable and asked again: %s", types(res))
	}

	// A server that fails the plain request too still fails the run, with the cause.
	down := llmtest.New(llmtest.Fail(garbled), llmtest.Fail(garbled))
	if _, err := llmAgent(t, down, LLMOptions{}).Ask(context.Background(), "How do I generate a sitemap?", nil); err == nil || !strings.Contains(err.Error(), "peg-native") {
		t.Errorf("server failing every request: err %v, want the cause", err)
	}
}

func TestEmptyQuestion(t *testing.T) {
	a := New(nil, Options{}).WithModel(LLMOptions{Model: llmtest.New()})
	if _, err := a.Ask(context.Background(), "  ", nil); !errors.Is(err, ErrEmptyQuestion) {
		t.Errorf("err %v", err)
	}
}

// TestCallWrittenAsTextIsRun: a small model (Qwen2.5-Coder-1.5B, measured)
// writes its search as a fenced JSON object instead of a tool call, even
// when a call is required; the agent runs it as the call it is.
func TestCallWrittenAsTextIsRun(t *testing.T) {
	m := llmtest.New(
		llmtest.Text("To find it, search:\n\n```json\n{\"name\": \""+ToolSearch+"\", \"arguments\": {\"query\": \"sitemap generation\", \"k\": 3}}\n```"),
		llmtest.Text("Kumo writes a `sitemap.xml` file for your whole site when you build it [1]."),
	)
	res, err := llmAgent(t, m, LLMOptions{}).Ask(context.Background(), "How do I generate a sitemap?", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := types(res)
	if !strings.Contains(got, "thought,thought,action,observation") {
		t.Errorf("trace %s: want the written call run as an action", got)
	}
	var ran string
	for _, ev := range res.Trace {
		if ev.Type == graph.TypeAction {
			ran += ev.Tool + string(ev.Arguments)
		}
		if ev.Type == graph.TypeThought && strings.Contains(ev.Text, "answered without searching") {
			t.Errorf("the agent searched for the question itself: %q", ev.Text)
		}
	}
	if !strings.Contains(ran, `"sitemap generation"`) {
		t.Errorf("actions %s: want the model's own query", ran)
	}
	if len(res.Citations) != 1 || !strings.HasSuffix(res.Citations[0].Source.URI, "sitemap-generation.md") {
		t.Errorf("citations %+v", res.Citations)
	}
}

// TestAnswerWithoutSearchingAsksForAQuery: a model that answers from
// memory on the first turn (the server did not hold it to the required
// call) is asked once for a query under a schema, and its query is
// searched; when it gives none, the question is.
func TestAnswerWithoutSearchingAsksForAQuery(t *testing.T) {
	for _, tc := range []struct {
		name, reply, want string
	}{
		{"the model's query", `{"query": "sitemap generation"}`, `"sitemap generation"`},
		{"no query: the question", `I think you should build it.`, `"How do I generate a sitemap?"`},
	} {
		m := llmtest.New(
			llmtest.Text("Use a sitemap plugin."),
			llmtest.Text(tc.reply),
			llmtest.Text("Kumo writes a `sitemap.xml` file for your whole site when you build it [1]."),
		)
		res, err := llmAgent(t, m, LLMOptions{}).Ask(context.Background(), "How do I generate a sitemap?", nil)
		if err != nil {
			t.Fatal(err)
		}
		var ran string
		for _, ev := range res.Trace {
			if ev.Type == graph.TypeAction {
				ran += string(ev.Arguments)
			}
		}
		if !strings.Contains(ran, tc.want) {
			t.Errorf("%s: searched %s, want %s", tc.name, ran, tc.want)
		}
		reqs := m.Requests()
		if len(reqs) < 2 || reqs[1].Reply == nil || reqs[1].Reply.Name != "search" || len(reqs[1].Tools) != 0 {
			t.Errorf("%s: the second request should ask for a query under the search schema, without tools", tc.name)
		}
	}
}

// TestFirstSearchAlsoSearchesTheQuestion: when the model's first search is
// in words of its own, the question's own words are searched beside it,
// and the model reads both results as one numbered set; a model that
// searched the question itself is not searched for twice.
func TestFirstSearchAlsoSearchesTheQuestion(t *testing.T) {
	const question = "How do I generate a sitemap?"
	for _, tc := range []struct {
		name, query string
		searches    int
	}{
		{"own words", "seo plugin configuration", 2},
		{"the question", " how do I generate a sitemap? ", 1},
	} {
		m := llmtest.New(
			llmtest.Calls(llmtest.Call("c1", ToolSearch, fmt.Sprintf(`{"query":%q}`, tc.query))),
			llmtest.Text("Kumo writes a `sitemap.xml` file for your whole site when you build it [1]."),
		)
		res, err := llmAgent(t, m, LLMOptions{}).Ask(context.Background(), question, nil)
		if err != nil {
			t.Fatal(err)
		}
		var searched []string
		thought := false
		for _, ev := range res.Trace {
			switch {
			case ev.Type == graph.TypeAction && ev.Tool == ToolSearch:
				searched = append(searched, string(ev.Arguments))
			case ev.Type == graph.TypeThought && strings.HasPrefix(ev.Text, "Also search the knowledge base for the question"):
				thought = true
			}
		}
		if len(searched) != tc.searches || thought != (tc.searches == 2) {
			t.Errorf("%s: searched %q (said so: %t), want %d searches", tc.name, searched, thought, tc.searches)
			continue
		}
		reqs := m.Requests()
		if len(reqs) < 2 {
			t.Fatalf("%s: %d requests", tc.name, len(reqs))
		}
		// The second request carries the model's call, the agent's, and
		// one result for each.
		var calls, results int
		var seen string
		for _, msg := range reqs[1].Messages {
			calls += len(msg.ToolCalls)
			if msg.Role == llm.RoleTool {
				results++
				seen += msg.Content
			}
		}
		if calls != tc.searches || results != tc.searches {
			t.Errorf("%s: the model was shown %d calls and %d results, want %d of each", tc.name, calls, results, tc.searches)
		}
		if tc.searches == 2 {
			if !strings.Contains(searched[1], `"query":"How do I generate a sitemap?"`) || !strings.Contains(searched[1], `"k":3`) {
				t.Errorf("the question's search: %s", searched[1])
			}
			if !strings.Contains(seen, "sitemap") {
				t.Errorf("the question's words found nothing about sitemaps:\n%s", seen)
			}
		}
	}
}

// TestFollowUpsOwnSearchCarriesTheTopic: in a conversation, the agent's
// search for a follow-up that refers back ("its entries") has the topic
// words of the question before it, so it finds that topic's page even
// when the model searched only the follow-up's own words.
func TestFollowUpsOwnSearchCarriesTheTopic(t *testing.T) {
	m := llmtest.New(
		llmtest.Calls(llmtest.Call("c1", ToolSearch, `{"query":"change entries"}`)),
		citeFor(t, "The `sitemap.transformItems` hook receives the list of entries [n].", "transformItems"),
	)
	history := []Turn{{Question: "How do I generate a sitemap?", Answer: "Set the hostname in the config [1]."}}
	res, err := llmAgent(t, m, LLMOptions{}).Ask(context.Background(), "Can I change its entries?", history)
	if err != nil {
		t.Fatal(err)
	}
	var searched []string
	for _, ev := range res.Trace {
		if ev.Type == graph.TypeAction && ev.Tool == ToolSearch {
			searched = append(searched, string(ev.Arguments))
		}
	}
	if len(searched) != 2 || !strings.Contains(searched[1], `"query":"Can I change its entries? generate sitemap"`) {
		t.Fatalf("searched %q, want the model's query, then the follow-up with the earlier question's topic", searched)
	}
	if !strings.Contains(res.Answer, "transformItems") {
		t.Errorf("answer:\n%s", res.Answer)
	}
	// The model saw the conversation before the follow-up.
	first := m.Requests()[0].Messages
	if len(first) != 3 || first[0].Content != history[0].Question || first[1].Content != history[0].Answer {
		t.Errorf("the model's first request: %+v", first)
	}
}
