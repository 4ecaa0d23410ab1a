package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// Event types of a chat thread's log: a turn's start, each step of its
// agent as it happens, its question and answer, the answer's claim spans,
// or why the turn ended without an answer.
const (
	ThreadTurn     = "turn"       // Data: {"question", "mode"}
	ThreadStep     = "step"       // Data: a graph.Event of the turn's agent
	ThreadQuestion = "question"   // Data: {"text": "..."}
	ThreadAnswer   = "answer"     // Data: a Result
	ThreadSpans    = "spans"      // Data: {"spans": [Span]}
	ThreadError    = "turn_error" // Data: {"error", "stopped"}
)

// HistoryTurns is how many earlier turns of a thread a question is asked
// after.
const HistoryTurns = 6

// Threads keeps chat threads in the index's run log: a thread is a run of
// kind chat whose events are its questions and answers, so a conversation
// can be resumed later, from the terminal or the web page.
type Threads struct {
	runs store.Runs
	now  func() time.Time
}

// NewThreads returns the threads kept in runs.
func NewThreads(runs store.Runs) *Threads { return &Threads{runs: runs, now: time.Now} }

// Start creates a thread titled after its first question and returns its ID.
func (t *Threads) Start(ctx context.Context, title string) (string, error) {
	id := fmt.Sprintf("chat-%s", t.now().UTC().Format("20060102-150405.000000"))
	if err := t.runs.CreateRun(ctx, store.Run{ID: id, Kind: store.RunChat, Title: clip.Runes(title, 80), Status: "open"}); err != nil {
		return "", fmt.Errorf("start a chat thread: %w", err)
	}
	return id, nil
}

// Get returns a thread's header; an unknown ID says how to list threads.
func (t *Threads) Get(ctx context.Context, id string) (store.Run, error) {
	r, err := t.runs.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.Kind != store.RunChat) {
		return store.Run{}, fmt.Errorf("no chat thread %q: `sagasu chat --list` shows the threads", id)
	}
	return r, err
}

// List returns threads, the most recent first.
func (t *Threads) List(ctx context.Context, limit int) ([]store.Run, error) {
	return t.runs.ListRuns(ctx, store.RunFilter{Kind: store.RunChat, Limit: limit})
}

// Record appends a question and its answer to a thread.
func (t *Threads) Record(ctx context.Context, id string, res *Result) error {
	_, err := t.record(ctx, id, res)
	return err
}

func (t *Threads) record(ctx context.Context, id string, res *Result) ([]store.Event, error) {
	q, _ := json.Marshal(map[string]string{"text": res.Question})
	a, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encode the answer: %w", err)
	}
	stored, err := t.runs.AppendEvents(ctx, id, []store.Event{{Type: ThreadQuestion, Data: q}, {Type: ThreadAnswer, Data: a}})
	if err != nil {
		return nil, fmt.Errorf("save to chat thread %s: %w", id, err)
	}
	return stored, nil
}

// Transcript returns a thread's answered turns, oldest first.
func (t *Threads) Transcript(ctx context.Context, id string) ([]Result, error) {
	evs, err := t.runs.Events(ctx, id, 0)
	if err != nil {
		return nil, fmt.Errorf("read chat thread %s: %w", id, err)
	}
	var out []Result
	for _, ev := range evs {
		if ev.Type != ThreadAnswer {
			continue
		}
		var r Result
		if err := json.Unmarshal(ev.Data, &r); err != nil {
			return nil, fmt.Errorf("chat thread %s, event %d: %w", id, ev.Seq, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// History returns a thread's turns as the agent takes them, the most
// recent maxTurns of them.
func (t *Threads) History(ctx context.Context, id string, maxTurns int) ([]Turn, error) {
	rs, err := t.Transcript(ctx, id)
	if err != nil {
		return nil, err
	}
	if maxTurns > 0 && len(rs) > maxTurns {
		rs = rs[len(rs)-maxTurns:]
	}
	turns := make([]Turn, len(rs))
	for i, r := range rs {
		turns[i] = Turn{Question: r.Question, Answer: r.Answer}
	}
	return turns, nil
}

// Span is a claim's place in an answer and whether the claim checker found
// its cited passages back it (what a page underlines).
type Span struct {
	Start     int  `json:"start"`
	End       int  `json:"end"`
	Checked   bool `json:"checked"`
	Supported bool `json:"supported"`
	// Answers: the sentence speaks to the question (Claim.Answers); a
	// supported span without it is backed but not about the question.
	Answers bool `json:"answers"`
	Code    bool `json:"code,omitempty"`
}

// SpansOf returns the spans of an answer's claims.
func SpansOf(res *Result) []Span {
	out := make([]Span, 0, len(res.Claims))
	for _, c := range res.Claims {
		out = append(out, Span{Start: c.Start, End: c.End, Checked: c.Checked, Supported: c.Supported, Answers: c.Answers, Code: c.Code})
	}
	return out
}

// TurnOptions configure one turn of a thread.
type TurnOptions struct {
	// OnStored is called after each event of the turn is stored, so that a
	// live view can show it.
	OnStored func(store.Event)
}

// Turn answers question in thread id with agent a, after the thread's last
// HistoryTurns turns, and records the turn as it goes: its start (with the
// question and a.Mode()), each
// step of the agent, the question and answer and the answer's claim spans,
// or, when it ends without an answer, why. What happened is recorded even
// when ctx is cancelled.
func (t *Threads) Turn(ctx context.Context, id string, a *Agent, question string, opt TurnOptions) (*Result, error) {
	record := func(typ string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode the %s event: %w", typ, err)
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		stored, err := t.runs.AppendEvents(wctx, id, []store.Event{{Type: typ, Data: data}})
		if err != nil {
			return fmt.Errorf("save to chat thread %s: %w", id, err)
		}
		if opt.OnStored != nil {
			for _, e := range stored {
				opt.OnStored(e)
			}
		}
		return nil
	}
	fail := func(err error) error {
		stopped := ctx.Err() != nil
		msg := err.Error()
		if stopped {
			msg = "stopped: the turn was cancelled before it answered"
		}
		if rerr := record(ThreadError, map[string]any{"error": msg, "stopped": stopped}); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	if err := record(ThreadTurn, map[string]string{"question": question, "mode": a.Mode()}); err != nil {
		return nil, err
	}
	history, err := t.History(ctx, id, HistoryTurns)
	if err != nil {
		return nil, fail(err)
	}
	var stepErr error
	res, err := a.ask(ctx, question, history, func(ev graph.Event) {
		if err := record(ThreadStep, ev); err != nil && stepErr == nil {
			stepErr = err
		}
	})
	if err != nil {
		return res, fail(err)
	}
	if stepErr != nil {
		return res, fail(stepErr)
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	stored, err := t.record(wctx, id, res)
	if err != nil {
		return res, fail(err)
	}
	if opt.OnStored != nil {
		for _, e := range stored {
			opt.OnStored(e)
		}
	}
	return res, record(ThreadSpans, map[string]any{"spans": SpansOf(res)})
}
