package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// ErrEmptyIndex is the answer to a question asked of an empty index.
var ErrEmptyIndex = errors.New("the index is empty, so there is nothing to answer from: add a folder or a URL on the Index tab (or run `sagasu index DIR`), then ask again")

func threadKey(id string) string { return "thread:" + id }

func (s *Server) threads() *react.Threads { return react.NewThreads(s.rt.Store) }

func (s *Server) listThreads(w http.ResponseWriter, r *http.Request) {
	runs, err := s.threads().List(r.Context(), 100)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, runsView(runs, s))
}

// runView is a run or thread header as the page lists it.
type runView struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Title   string    `json:"title"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Running bool      `json:"running"`
}

func runsView(runs []store.Run, s *Server) []runView {
	out := make([]runView, 0, len(runs))
	for _, r := range runs {
		running := s.running(threadKey(r.ID))
		if r.Kind == store.RunAgent {
			running = s.runs.Running(r.ID)
		}
		out = append(out, runView{ID: r.ID, Kind: r.Kind, Title: r.Title, Status: r.Status, Created: r.Created, Updated: r.Updated, Running: running})
	}
	return out
}

// threadInput starts a thread.
type threadInput struct {
	Title string `json:"title,omitempty" jsonschema:"the thread's title (default New thread)"`
}

// created names what a call made.
type created struct {
	ID string `json:"id"`
}

// stopping answers a Stop.
type stopping struct {
	Stopping bool `json:"stopping"`
}

func (s *Server) startThread(w http.ResponseWriter, r *http.Request) {
	var in threadInput
	if !s.decode(w, r, &in) {
		return
	}
	title := strings.TrimSpace(in.Title)
	if title == "" {
		title = "New thread"
	}
	id, err := s.threads().Start(r.Context(), title)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusCreated, created{ID: id})
}

// askInput is a question for a thread.
type askInput struct {
	Question string `json:"question"`
	Offline  bool   `json:"offline,omitempty" jsonschema:"answer without the configured model"`
	K        int    `json:"k,omitempty" jsonschema:"passages per search, 1 to 20 (0: the default)"`
}

// askAccepted answers a question that was started.
type askAccepted struct {
	Thread string `json:"thread"`
	Mode   string `json:"mode" jsonschema:"offline, or the model as driver/model"`
}

// ask starts a turn in the background and answers 202 at once: the turn's
// steps, its streamed answer and its end arrive on the thread's events.
func (s *Server) ask(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in askInput
	if !s.decode(w, r, &in) {
		return
	}
	q := strings.TrimSpace(in.Question)
	if q == "" {
		s.fail(w, http.StatusBadRequest, react.ErrEmptyQuestion)
		return
	}
	if in.K < 0 || in.K > 20 {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("k = %d: use 1 to 20", in.K))
		return
	}
	if _, err := s.threads().Get(r.Context(), id); err != nil {
		s.fail(w, http.StatusNotFound, err)
		return
	}
	st, err := s.rt.Store.Stats(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, fmt.Errorf("read the index's statistics: %w", err))
		return
	}
	if st.Sources == 0 {
		s.fail(w, http.StatusConflict, ErrEmptyIndex)
		return
	}
	key := threadKey(id)
	var last atomic.Int64 // the sequence number of the thread's last event
	agent := s.rt.Asker(app.AskOptions{Offline: in.Offline, K: in.K,
		OnDelta: func(d string) { s.hub.publish(key, message{Delta: d, After: last.Load()}) },
	})
	switch err := s.startTask(key, func(ctx context.Context) { s.turn(ctx, id, q, agent, &last) }); err {
	case errBusy:
		s.fail(w, http.StatusConflict, fmt.Errorf("a turn is already in progress in thread %s (perhaps in another tab): wait for its answer or press Stop", id))
		return
	case errFull:
		s.failFull(w)
		return
	}
	writeJSON(w, http.StatusAccepted, askAccepted{Thread: id, Mode: agent.Mode()})
}

// turn answers one question of a thread with agent (react.Threads.Turn
// records its steps, answer and spans), waking the thread's streams as each
// event is stored; last is the sequence number of the thread's last event,
// which the agent's streamed text is published after.
func (s *Server) turn(ctx context.Context, id, q string, agent *react.Agent, last *atomic.Int64) {
	key := threadKey(id)
	_, err := s.threads().Turn(ctx, id, agent, q, react.TurnOptions{OnStored: func(e store.Event) {
		last.Store(e.Seq)
		s.watch.saw(id, e.Seq)
		s.hub.publish(key, message{})
	}})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("chat turn", "thread", id, "err", err)
	}
}

func (s *Server) stopThread(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.stopTask(threadKey(id)) {
		s.fail(w, http.StatusConflict, fmt.Errorf("thread %s has no turn in progress", id))
		return
	}
	writeJSON(w, http.StatusAccepted, stopping{Stopping: true})
}

// threadEvents streams a thread from the client's last event on: its
// turns, steps, answers and spans, and the streamed answer as it comes.
func (s *Server) threadEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.threads().Get(r.Context(), id); err != nil {
		s.fail(w, http.StatusNotFound, err)
		return
	}
	s.streamRun(w, r, id, threadKey(id), func(e store.Event) (sseEvent, bool) {
		return sseEvent{Event: e.Type, Data: json.RawMessage(orNull(e.Data))}, true
	})
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}
