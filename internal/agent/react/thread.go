package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// Event types of a chat thread's log.
const (
	ThreadQuestion = "question" // Data: {"text": "..."}
	ThreadAnswer   = "answer"   // Data: a Result
)

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
	q, _ := json.Marshal(map[string]string{"text": res.Question})
	a, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encode the answer: %w", err)
	}
	_, err = t.runs.AppendEvents(ctx, id, []store.Event{{Type: ThreadQuestion, Data: q}, {Type: ThreadAnswer, Data: a}})
	if err != nil {
		return fmt.Errorf("save to chat thread %s: %w", id, err)
	}
	return nil
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
