package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// DefaultMaxTurns bounds the ReAct loop: model calls before it must answer.
const DefaultMaxTurns = 10

// maxAnswerTokens caps one model reply: enough for a cited answer, and a
// weak model that rambles stops early.
const maxAnswerTokens = 400

// Library reads stored documents for get_document; store.Store is one.
type Library interface {
	SourceByURI(ctx context.Context, uri string) (doc.Source, error)
	Source(ctx context.Context, id string) (doc.Source, error)
	Chunks(ctx context.Context, sourceID string) ([]doc.Chunk, error)
}

// EvaluateFunc judges results against a goal and says what is missing
// (the loop package's evaluation, wired in by the caller).
type EvaluateFunc func(ctx context.Context, goal string, hits []doc.Hit) (string, error)

// LLMOptions configure the language-model agent.
type LLMOptions struct {
	Model    llm.Model
	Library  Library      // get_document; nil leaves the tool out
	Evaluate EvaluateFunc // evaluate; nil leaves the tool out
	// MaxTurns bounds the model calls of the ReAct phase (default 10).
	MaxTurns int
	// MaxTokens bounds the tokens of a run (default 200,000).
	MaxTokens int64
	// Timeout bounds a run's wall-clock time (default 5 minutes).
	Timeout time.Duration
	// Temperature of every model call (default 0.2).
	Temperature *float64
	// Log keeps the run's events (the trace and checkpoints); nil keeps
	// them in memory.
	Log graph.Log
	// OnDelta receives the answer's text as the model writes it.
	OnDelta func(text string)
}

// Turn is an earlier exchange of a conversation (sagasu chat).
type Turn struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// WithModel makes the agent answer with a language model: a ReAct loop of
// tool calls over the knowledge base, then a reflection pass in the same
// conversation.
func (a *Agent) WithModel(opt LLMOptions) *Agent {
	if opt.MaxTurns <= 0 {
		opt.MaxTurns = DefaultMaxTurns
	}
	if opt.MaxTokens <= 0 {
		opt.MaxTokens = 200_000
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Minute
	}
	if opt.Temperature == nil {
		t := 0.2
		opt.Temperature = &t
	}
	a.llm = &opt
	return a
}

// state is the ReAct run's state: everything resume needs.
type state struct {
	Question string        `json:"question"`
	Lang     Lang          `json:"lang"`
	Messages []llm.Message `json:"messages"`
	Hits     []doc.Hit     `json:"hits"` // passages in number order
	Draft    string        `json:"draft"`
	Final    string        `json:"final"`
	Turns    int           `json:"turns"`
	// NoNew counts turns in a row whose searches found no new passage.
	NoNew int `json:"noNew"`
}

func (s *state) passages() *Passages {
	var p Passages
	p.Add(s.Hits...)
	return &p
}

// Ask answers question with the model, after the conversation so far.
func (a *Agent) Ask(ctx context.Context, question string, history []Turn) (*Result, error) {
	if a.llm == nil {
		return a.Answer(ctx, question)
	}
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, ErrEmptyQuestion
	}
	start := time.Now()
	lang := a.lang(question)
	st := state{Question: question, Lang: lang}
	for _, t := range history {
		st.Messages = append(st.Messages, llm.Message{Role: llm.RoleUser, Content: t.Question}, llm.Message{Role: llm.RoleAssistant, Content: t.Answer})
	}
	st.Messages = append(st.Messages, llm.Message{Role: llm.RoleUser, Content: question})

	res := &Result{Question: question, Mode: "llm", Model: a.llm.Model.Info().Model}
	log := a.llm.Log
	if log == nil {
		log = graph.NewMemLog()
	}
	g := a.graph()
	compiled, err := g.Compile(log,
		graph.WithLimits(graph.Limits{MaxSteps: 2*a.llm.MaxTurns + 6, MaxDuration: a.llm.Timeout, MaxToolCalls: 4 * a.llm.MaxTurns, MaxTokens: a.llm.MaxTokens}),
		graph.WithGuards(graph.Guards{RepeatMax: 3, RepeatWindow: 10, NoProgressSteps: 4, MaxParseFailures: 3}),
		graph.WithObserver(func(ev graph.Event) {
			if ev.Type == graph.TypeCheckpoint || ev.Type == graph.TypeOnce || ev.Type == graph.TypeOutcome || ev.Type == graph.TypeProgress {
				return
			}
			res.Trace = append(res.Trace, ev)
			if a.opt.OnEvent != nil {
				a.opt.OnEvent(ev)
			}
		}))
	if err != nil {
		return nil, fmt.Errorf("build the agent graph: %w", err)
	}
	runID := fmt.Sprintf("ask-%d", a.opt.Now().UnixNano())
	final, out := compiled.Invoke(ctx, runID, st)
	res.Turns = final.Turns
	res.Usage = out.Tokens
	ps := final.passages()
	var answer string
	var refl Reflection
	switch {
	case out.Status == graph.Success:
		answer, refl = a.settle(final, ps)
	case ctx.Err() != nil:
		return res, fmt.Errorf("cancelled after %d turns: %w", final.Turns, ctx.Err())
	default:
		// A guard, a limit or a failure: the best cited answer so far.
		res.Stopped = out.Reason
		if out.Guard != "" {
			res.Stopped = out.Guard + ": " + out.Reason
		}
		if out.Status == graph.Failure && ps.Len() == 0 {
			return res, fmt.Errorf("the agent failed before it found anything: %s", out.Reason)
		}
		if final.Draft == "" {
			final.Draft = Extract(a.an, question, ps.All(), ps, ExtractOptions{})
		}
		answer, refl = a.settle(final, ps)
	}
	var p Passages
	p.Add(ps.All()...)
	r := &run{a: a, res: res, passages: p, step: len(res.Trace)}
	r.emit(graph.Event{Type: graph.TypeReflection, Text: refl.summary()})
	r.finish(answer, a.Checker().Check(answer, ps), refl)
	res.TookMs = time.Since(start).Milliseconds()
	return res, nil
}

// settle checks the model's final answer (or its draft) with the claim
// checker and drops what it does not back. When nothing the model wrote
// is backed, the answer is quoted from the passages it retrieved instead.
func (a *Agent) settle(st state, ps *Passages) (string, Reflection) {
	text := st.Final
	if strings.TrimSpace(text) == "" {
		text = st.Draft
	}
	answer, refl := a.reflect(st.Question, text, ps, st.Lang)
	if (answer == notFound(st.Lang) || refl.Accuracy.Score == 0) && ps.Len() > 0 {
		if q := Extract(a.an, st.Question, ps.All(), ps, ExtractOptions{}); q != "" {
			answer2, refl2 := a.reflect(st.Question, q, ps, st.Lang)
			refl2.Unsupported = append(refl.Unsupported, refl2.Unsupported...)
			refl2.Revised = true
			refl2.Accuracy.Note += "; nothing the model wrote was backed by a passage, so the answer quotes the passages it retrieved"
			return answer2, refl2
		}
	}
	return answer, refl
}

// Node names of the ReAct graph.
const (
	nodeReact   = "react"
	nodeAnswer  = "answer_now"
	nodeReflect = "reflect"
)

func (a *Agent) graph() *graph.Graph[state] {
	g := graph.New[state]()
	g.AddNode(nodeReact, a.reactNode)
	g.AddNode(nodeAnswer, a.answerNode)
	g.AddNode(nodeReflect, a.reflectNode)
	g.RegisterBranch("after_react", func(s state) string {
		switch {
		case s.Draft != "":
			return "draft"
		case s.Turns >= a.llm.MaxTurns:
			return "out_of_turns"
		}
		return "again"
	})
	g.AddEdge(graph.START, nodeReact)
	g.AddConditionalEdges(nodeReact, "after_react", map[string]string{"draft": nodeReflect, "out_of_turns": nodeAnswer, "again": nodeReact})
	g.AddEdge(nodeAnswer, nodeReflect)
	g.AddEdge(nodeReflect, graph.END)
	// Progress is new passages, not a changed message list.
	g.SetFingerprint(func(s state) string { return fmt.Sprintf("%d/%t", len(s.Hits), s.Draft != "") })
	return g
}

// tools are the functions the model may call.
func (a *Agent) tools() []llm.Tool {
	ts := []llm.Tool{{
		Name:        ToolSearch,
		Description: "Search the knowledge base. Returns numbered passages [n] with their source and heading; cite them as [n].",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"words to search for"},` +
			`"k":{"type":"integer","minimum":1,"maximum":10,"description":"how many passages (default 5)"},` +
			`"mode":{"type":"string","enum":["keyword","semantic","hybrid"],"description":"retrieval method (default: the index's)"}},` +
			`"required":["query"]}`),
	}}
	if a.llm.Library != nil {
		ts = append(ts, llm.Tool{
			Name:        ToolGet,
			Description: "Read a document, or one section of it, from the knowledge base. Its passages are numbered [n] for citing.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"source":{"type":"string","description":"the source's URI or ID as search results show it"},` +
				`"section":{"type":"string","description":"a heading, or heading path such as \"Guide > Install\" (optional)"}},` +
				`"required":["source"]}`),
		})
	}
	if a.llm.Evaluate != nil {
		ts = append(ts, llm.Tool{
			Name:        ToolEvaluate,
			Description: "Judge the passages found so far against a goal: which aspects they cover and which are missing.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"goal":{"type":"string","description":"what the answer must cover"}},"required":["goal"]}`),
		})
	}
	return ts
}

// system is the ReAct system prompt.
func (a *Agent) system(lang Lang) string {
	var b strings.Builder
	b.WriteString("You answer questions from a knowledge base of documents, using only what its passages say.\n")
	b.WriteString("Work in steps: think about what you need, call a tool to search or read, look at what it returns, and repeat until you can answer.\n")
	b.WriteString("Passages are numbered [1], [2], ... Cite every sentence of your answer with the number of the passage that says it, e.g. \"Run the build [2].\" At most three numbers per sentence. Never cite a number you were not shown.\n")
	b.WriteString("If the passages do not answer the question, say so. Do not add facts that are not in the passages.\n")
	switch lang {
	case LangJapanese:
		b.WriteString("Answer in Japanese, politely, in です・ます style.\n")
	case LangEnglish:
		b.WriteString("Answer in English.\n")
	}
	b.WriteString("When you have the answer, reply with the answer only, without calling a tool.")
	return b.String()
}

// call sends the conversation to the model, streaming text to OnDelta.
func (a *Agent) call(ctx context.Context, rc *graph.RunContext, s state, choice llm.ToolChoice, tools []llm.Tool) (*llm.Response, error) {
	req := llm.Request{System: a.system(s.Lang), Messages: s.Messages, Tools: tools, ToolChoice: choice, Temperature: a.llm.Temperature, MaxTokens: maxAnswerTokens}
	start := time.Now()
	var resp *llm.Response
	var err error
	if a.llm.OnDelta != nil {
		resp, err = a.llm.Model.Stream(ctx, req, func(d llm.Delta) error {
			if d.Text != "" {
				a.llm.OnDelta(d.Text)
			}
			return nil
		})
	} else {
		resp, err = a.llm.Model.Chat(ctx, req)
	}
	if err != nil {
		_ = rc.Emit(graph.Event{Type: graph.TypeError, Text: "model: " + err.Error(), LatencyMs: time.Since(start).Milliseconds()})
		return nil, fmt.Errorf("ask the model (%s): %w", a.llm.Model.Info().Model, err)
	}
	if uerr := rc.Usage(int64(resp.Usage.InputTokens), int64(resp.Usage.OutputTokens)); uerr != nil {
		return nil, uerr
	}
	return resp, nil
}

// reactNode is one turn: the model thinks and calls tools, or drafts.
func (a *Agent) reactNode(ctx context.Context, rc *graph.RunContext, s state) (state, error) {
	tools := a.tools()
	resp, err := a.call(ctx, rc, s, llm.ToolChoiceAuto, tools)
	if err != nil {
		return s, err
	}
	s.Turns++
	msg := resp.Message
	for i, c := range msg.ToolCalls {
		// Keep the conversation encodable (it is checkpointed) when a weak
		// model sends arguments that are not JSON: as a JSON string.
		if !json.Valid(c.Arguments) {
			msg.ToolCalls[i].Arguments, _ = json.Marshal(string(c.Arguments))
			msg.ToolCalls[i].Arguments = append(json.RawMessage(nil), msg.ToolCalls[i].Arguments...)
			c.Arguments = msg.ToolCalls[i].Arguments
		}
	}
	s.Messages = append(s.Messages, msg)
	if len(msg.ToolCalls) == 0 && len(s.Hits) == 0 {
		// The model answered before looking anything up. An answer must
		// stand on passages, so the agent searches for the question itself
		// and hands the model the results to answer from.
		if err := rc.Trace(graph.TypeThought, "The model answered without searching; search the knowledge base for the question first."); err != nil {
			return s, err
		}
		call := llm.ToolCall{ID: fmt.Sprintf("auto-%d", s.Turns), Name: ToolSearch}
		call.Arguments, _ = json.Marshal(map[string]any{"query": s.Question, "k": 5})
		s.Messages[len(s.Messages)-1] = llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}}
		obs, err := a.runTool(ctx, rc, &s, a.tools(), call)
		if err != nil {
			return s, err
		}
		s.Messages = append(s.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: obs})
		if len(s.Hits) > 0 {
			return s, rc.Progress(fmt.Sprintf("%d passages", len(s.Hits)))
		}
		return s, nil
	}
	if len(msg.ToolCalls) == 0 {
		s.Draft = strings.TrimSpace(msg.Content)
		if s.Draft == "" {
			// An empty reply is not an answer: ask again.
			s.Messages = append(s.Messages, llm.Message{Role: llm.RoleUser, Content: "Your reply was empty. Search the knowledge base, or answer with citations."})
			return s, rc.ParseFailure("empty reply")
		}
		return s, rc.Trace(graph.TypeThought, "Draft: "+s.Draft)
	}
	if t := strings.TrimSpace(msg.Content); t != "" {
		if err := rc.Trace(graph.TypeThought, t); err != nil {
			return s, err
		}
	}
	before := len(s.Hits)
	for _, call := range msg.ToolCalls {
		obs, err := a.runTool(ctx, rc, &s, tools, call)
		if err != nil {
			return s, err
		}
		s.Messages = append(s.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: obs})
	}
	if len(s.Hits) > before {
		s.NoNew = 0
		return s, rc.Progress(fmt.Sprintf("%d new passages", len(s.Hits)-before))
	}
	s.NoNew++
	return s, nil
}

// runTool runs one tool call and returns the observation the model reads.
// A bad call (unknown tool, invalid arguments) is an observation too, so
// the model can correct itself; only a stop from the runner is an error.
func (a *Agent) runTool(ctx context.Context, rc *graph.RunContext, s *state, tools []llm.Tool, call llm.ToolCall) (string, error) {
	args := call.Arguments
	if !json.Valid(args) {
		args, _ = json.Marshal(string(call.Arguments))
	}
	if err := rc.Action(call.Name, args); err != nil {
		return "", err
	}
	start := time.Now()
	if _, err := llm.CheckToolCall(tools, call); err != nil {
		obs := "ERROR: " + err.Error()
		if perr := rc.ParseFailure(obs); perr != nil {
			return "", perr
		}
		return obs, rc.Observation(call.Name, obs, false, time.Since(start))
	}
	obs, err := a.tool(ctx, s, call)
	ok := err == nil
	if err != nil {
		var stop *graph.StopError
		if errors.As(err, &stop) {
			return "", err
		}
		obs = "ERROR: " + err.Error()
	}
	return obs, rc.Observation(call.Name, obs, ok, time.Since(start))
}

// tool runs a checked tool call.
func (a *Agent) tool(ctx context.Context, s *state, call llm.ToolCall) (string, error) {
	switch call.Name {
	case ToolSearch:
		in, err := llm.ParseArgs[struct {
			Query string `json:"query"`
			K     int    `json:"k"`
			Mode  string `json:"mode"`
		}](call)
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(in.Query) == "" {
			return "", errors.New("query is empty: give the words to search for")
		}
		k := in.K
		if k <= 0 || k > 10 {
			k = 5
		}
		mode := search.Mode(in.Mode)
		if mode != "" && mode != search.ModeKeyword && mode != search.ModeSemantic && mode != search.ModeHybrid {
			return "", fmt.Errorf("mode %q: use keyword, semantic or hybrid", in.Mode)
		}
		if mode == "" {
			mode = a.opt.Mode
		}
		resp, err := a.search.Search(ctx, search.Request{Query: in.Query, K: k, Mode: mode})
		if err != nil {
			return "", err
		}
		ps := s.passages()
		ns := ps.Add(resp.Hits...)
		s.Hits = ps.All()
		return observeHits(resp.Hits, ns), nil
	case ToolGet:
		in, err := llm.ParseArgs[struct {
			Source  string `json:"source"`
			Section string `json:"section"`
		}](call)
		if err != nil {
			return "", err
		}
		hits, err := a.section(ctx, in.Source, in.Section)
		if err != nil {
			return "", err
		}
		ps := s.passages()
		ns := ps.Add(hits...)
		s.Hits = ps.All()
		return observeHits(hits, ns), nil
	case ToolEvaluate:
		in, err := llm.ParseArgs[struct {
			Goal string `json:"goal"`
		}](call)
		if err != nil {
			return "", err
		}
		return a.llm.Evaluate(ctx, in.Goal, s.Hits)
	}
	return "", fmt.Errorf("unknown tool %q", call.Name)
}

// maxSectionChunks bounds what get_document hands the model at once.
const maxSectionChunks = 8

// section returns the chunks of a source (or of one of its sections) as
// hits, so they can be cited.
func (a *Agent) section(ctx context.Context, source, section string) ([]doc.Hit, error) {
	lib := a.llm.Library
	src, err := lib.SourceByURI(ctx, source)
	if errors.Is(err, store.ErrNotFound) {
		src, err = lib.Source(ctx, source)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no source %q in the knowledge base: use a URI or ID from the search results", source)
	}
	if err != nil {
		return nil, err
	}
	chunks, err := lib.Chunks(ctx, src.ID)
	if err != nil {
		return nil, err
	}
	var hits []doc.Hit
	want := strings.ToLower(strings.TrimSpace(section))
	for _, c := range chunks {
		if want != "" {
			hp := strings.ToLower(c.HeadingPath())
			leaf := ""
			if len(c.Heading) > 0 {
				leaf = strings.ToLower(c.Heading[len(c.Heading)-1])
			}
			if hp != want && leaf != want && !strings.HasSuffix(hp, " > "+want) && !strings.HasPrefix(hp, want+" > ") {
				continue
			}
		}
		hits = append(hits, doc.Hit{Chunk: c, Source: src})
		if len(hits) == maxSectionChunks {
			break
		}
	}
	if len(hits) == 0 {
		return nil, fmt.Errorf("%s has no section %q: search for it, or read the whole document without a section", src.URI, section)
	}
	return hits, nil
}

// answerNode makes the model answer now, without tools: the turns are used up.
func (a *Agent) answerNode(ctx context.Context, rc *graph.RunContext, s state) (state, error) {
	if err := rc.Trace(graph.TypeThought, fmt.Sprintf("%d turns used: answer with what was found.", s.Turns)); err != nil {
		return s, err
	}
	s.Messages = append(s.Messages, llm.Message{Role: llm.RoleUser, Content: "Answer now from the passages you have, with [n] citations. Do not call tools."})
	resp, err := a.call(ctx, rc, s, llm.ToolChoiceNone, nil)
	if err != nil {
		return s, err
	}
	s.Messages = append(s.Messages, resp.Message)
	s.Draft = strings.TrimSpace(resp.Message.Content)
	return s, rc.Trace(graph.TypeThought, "Draft: "+s.Draft)
}

// reflectNode asks the model, in the same conversation, to check its draft
// for accuracy, relevance and style and to write the final answer. The
// claim checker then has the last word (Ask's settle).
func (a *Agent) reflectNode(ctx context.Context, rc *graph.RunContext, s state) (state, error) {
	ps := s.passages()
	claims := a.Checker().Check(s.Draft, ps)
	var notes []string
	for _, c := range claims {
		if c.Checked && !c.Supported {
			notes = append(notes, fmt.Sprintf("- %q: %s", clip.Runes(c.Text, 160), c.Reason))
		}
	}
	var b strings.Builder
	b.WriteString("Review your draft answer before it is shown.\n")
	b.WriteString("1. Accuracy: every sentence must be supported by the passage it cites [n]; remove or fix anything the passages do not say.\n")
	b.WriteString("2. Relevance: it must answer the question that was asked: " + s.Question + "\n")
	switch s.Lang {
	case LangJapanese:
		b.WriteString("3. Style: Japanese, polite です・ます style, short; lists where they help.\n")
	default:
		b.WriteString("3. Style: the question's language, clear and short; lists where they help.\n")
	}
	if len(notes) > 0 {
		b.WriteString("A checker found these sentences not backed by their citations:\n" + strings.Join(notes, "\n") + "\n")
	}
	b.WriteString("Reply with the final answer only, keeping the [n] citations.")
	if err := rc.Trace(graph.TypeReflection, b.String()); err != nil {
		return s, err
	}
	s.Messages = append(s.Messages, llm.Message{Role: llm.RoleUser, Content: b.String()})
	resp, err := a.call(ctx, rc, s, llm.ToolChoiceNone, nil)
	if err != nil {
		return s, err
	}
	s.Messages = append(s.Messages, resp.Message)
	s.Final = strings.TrimSpace(resp.Message.Content)
	if s.Final == "" {
		s.Final = s.Draft
	}
	return s, nil
}
