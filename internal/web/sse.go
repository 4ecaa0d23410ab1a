package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// message is what the hub passes to live streams: a wake-up (look in the
// store), or a piece of a streamed answer (Delta), which is never stored.
type message struct {
	Delta string
	// After is the sequence number of the run's last stored event when the
	// delta was made: a stream sends the delta after that event.
	After int64
}

// hub passes messages to the streams watching a key (a thread or a run).
type hub struct {
	mu   sync.Mutex
	subs map[string]map[chan message]struct{}
}

func newHub() *hub { return &hub{subs: map[string]map[chan message]struct{}{}} }

// subscribe returns a channel of key's messages and a function to leave.
func (h *hub) subscribe(key string) (<-chan message, func()) {
	ch := make(chan message, 256)
	h.mu.Lock()
	if h.subs[key] == nil {
		h.subs[key] = map[chan message]struct{}{}
	}
	h.subs[key][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[key], ch)
		if len(h.subs[key]) == 0 {
			delete(h.subs, key)
		}
		h.mu.Unlock()
	}
}

// publish hands m to every stream of key; a stream that is behind misses
// it (a wake-up is repeated by polling; a delta is superseded by the answer).
func (h *hub) publish(key string, m message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[key] {
		select {
		case ch <- m:
		default:
		}
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	ID    int64 // 0: no id (not replayable)
	Event string
	Data  any
}

// sseWriter writes server-sent events and flushes each.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

func (s *sseWriter) send(ev sseEvent) error {
	data, err := json.Marshal(ev.Data)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	if ev.ID > 0 {
		if _, err := fmt.Fprintf(s.w, "id: %d\n", ev.ID); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", ev.Event, data); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sseWriter) comment(text string) error {
	if _, err := fmt.Fprintf(s.w, ": %s\n\n", text); err != nil {
		return err
	}
	return s.rc.Flush()
}

// lastEventID is where a stream resumes: the Last-Event-ID header an
// EventSource sends when it reconnects, else ?after=, else 0 (everything).
// A value given that is not a sequence number is an error.
func lastEventID(r *http.Request) (int64, error) {
	after, found := int64(0), false
	_, inHeader := r.Header["Last-Event-Id"]
	for _, kv := range []struct {
		name, value string
		given       bool
	}{{"Last-Event-ID", r.Header.Get("Last-Event-ID"), inHeader}, {"after", r.URL.Query().Get("after"), r.URL.Query().Has("after")}} {
		if !kv.given {
			continue
		}
		n, err := strconv.ParseInt(kv.value, 10, 64)
		if err != nil || n < 0 || n > maxSafe {
			return 0, fmt.Errorf("%s %q: give the sequence number of the last event received (0 or more)", kv.name, kv.value)
		}
		if !found {
			after, found = n, true
		}
	}
	return after, nil
}

// keepAlive is how often an idle stream sends a comment, so that proxies
// and browsers do not drop it.
const keepAlive = 15 * time.Second

// openStream takes one of the server's stream slots, or answers 429 and
// reports false. The caller releases the slot when the stream ends.
func (s *Server) openStream(w http.ResponseWriter) bool {
	if s.streams.Acquire() {
		return true
	}
	w.Header().Set("Retry-After", "5")
	s.fail(w, http.StatusTooManyRequests, fmt.Errorf("%d live streams are open, this server's limit: close other tabs of this page (or other clients' streams), then reload", s.streams.Cap()))
	return false
}

// streamRun streams a stored run's events after the client's last one,
// then new ones as they are appended, until the client leaves. Events this
// server writes wake it at once; events other processes write are found by
// the run's one poller (see watchers). shape turns a stored event into
// what the page gets (skip reports false). Deltas published under key are
// passed through as "delta" events.
func (s *Server) streamRun(w http.ResponseWriter, r *http.Request, id, key string, shape func(store.Event) (sseEvent, bool)) {
	after, err := lastEventID(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if _, err := s.rt.Store.Run(r.Context(), id); err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.fail(w, http.StatusInternalServerError, fmt.Errorf("read run %s: %w", id, err))
			return
		}
		if !s.running(key) {
			s.fail(w, http.StatusNotFound, fmt.Errorf("no run or thread %q", id))
			return
		}
	}
	if !s.openStream(w) {
		return
	}
	defer s.streams.Release()
	msgs, leave := s.hub.subscribe(key)
	defer leave()
	defer s.watch.add(id, key)()
	out := newSSE(w)
	ctx := r.Context()
	alive := time.NewTicker(keepAlive)
	defer alive.Stop()
	was := -1
	var pending []message // deltas made after events not yet sent
	// flush sends the pending deltas made at or before event seq.
	flush := func(seq int64) error {
		kept := pending[:0]
		for _, m := range pending {
			if m.After > seq {
				kept = append(kept, m)
				continue
			}
			if err := out.send(sseEvent{Event: "delta", Data: map[string]string{"text": m.Delta}}); err != nil {
				return err
			}
		}
		pending = kept
		return nil
	}
	for {
		evs, err := s.rt.Store.Events(ctx, id, after)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			if ctx.Err() == nil {
				s.log.Warn("read run events", "run", id, "err", err)
			}
			return
		}
		// Every delta made before the events just read is queued by now.
		pending = append(pending, drain(msgs)...)
		for _, e := range evs {
			if err := flush(e.Seq - 1); err != nil {
				return
			}
			after = e.Seq
			ev, ok := shape(e)
			if !ok {
				continue
			}
			ev.ID = e.Seq
			if err := out.send(ev); err != nil {
				return
			}
		}
		if err := flush(after); err != nil {
			return
		}
		if now := boolInt(s.running(key)); now != was {
			was = now
			if err := out.send(sseEvent{Event: "status", Data: map[string]any{"running": now == 1}}); err != nil {
				return
			}
		}
		m, err := waitMore(ctx, alive.C, msgs, out, after)
		if err != nil {
			return
		}
		if m.Delta != "" {
			pending = append(pending, m)
		}
	}
}

// drain takes the deltas queued on msgs without waiting.
func drain(msgs <-chan message) []message {
	var out []message
	for {
		select {
		case m := <-msgs:
			if m.Delta != "" {
				out = append(out, m)
			}
		default:
			return out
		}
	}
}

// waitMore waits for a wake-up or the client leaving, sending the deltas
// made after event seq (the last one sent) as they come and a keep-alive
// comment at every tick of alive. It returns a delta made after an event
// not yet sent, for the caller to send after that event.
func waitMore(ctx context.Context, alive <-chan time.Time, msgs <-chan message, out *sseWriter, seq int64) (message, error) {
	for {
		select {
		case <-ctx.Done():
			return message{}, ctx.Err()
		case m := <-msgs:
			if m.Delta == "" {
				return message{}, nil
			}
			if m.After > seq {
				return m, nil
			}
			if err := out.send(sseEvent{Event: "delta", Data: map[string]string{"text": m.Delta}}); err != nil {
				return message{}, err
			}
		case <-alive:
			if err := out.comment("keep-alive"); err != nil {
				return message{}, err
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// watchers poll the store for the runs that live streams watch: one
// poller per run however many streams watch it, so that events another
// process (`sagasu chat`, `sagasu agent run`) appends reach the page. A
// poller wakes its run's streams only when the run has new events.
type watchers struct {
	s    *Server
	mu   sync.Mutex
	runs map[string]*watcher // by run ID
}

// watcher is one run's poller.
type watcher struct {
	streams int                // streams watching
	last    int64              // the last sequence number seen; -1 before the first poll
	stop    context.CancelFunc // ends the poller
}

func newWatchers(s *Server) *watchers { return &watchers{s: s, runs: map[string]*watcher{}} }

// add counts a stream of run id (whose wake-ups go to key), starting the
// run's poller if it has none, and returns the function that uncounts it.
func (ws *watchers) add(id, key string) func() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.runs[id]
	if w == nil {
		ctx, cancel := context.WithCancel(ws.s.base)
		w = &watcher{last: -1, stop: cancel}
		ws.runs[id] = w
		go ws.poll(ctx, w, id, key)
	}
	w.streams++
	return func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		if w.streams--; w.streams == 0 {
			w.stop()
			if ws.runs[id] == w {
				delete(ws.runs, id)
			}
		}
	}
}

// saw records that this server wrote run id's events up to seq and woke
// its streams itself, so its poller does not wake them again for those.
func (ws *watchers) saw(id string, seq int64) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w := ws.runs[id]; w != nil && seq > w.last && w.last >= 0 {
		w.last = seq
	}
}

// watching reports how many pollers run and how many streams watch id.
func (ws *watchers) watching(id string) (pollers, streams int) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w := ws.runs[id]; w != nil {
		streams = w.streams
	}
	return len(ws.runs), streams
}

// poll looks for new events of run id every Poll until ctx ends, and
// wakes key's streams when there are some.
func (ws *watchers) poll(ctx context.Context, w *watcher, id, key string) {
	tick := time.NewTicker(ws.s.opt.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ws.mu.Lock()
		last := w.last
		ws.mu.Unlock()
		evs, err := ws.s.rt.Store.Events(ctx, id, max(last, 0))
		if err != nil || len(evs) == 0 {
			continue // an unknown run may still be starting
		}
		seq := evs[len(evs)-1].Seq
		ws.mu.Lock()
		fresh := seq > w.last
		w.last = max(w.last, seq)
		ws.mu.Unlock()
		if fresh {
			ws.s.hub.publish(key, message{})
		}
	}
}
