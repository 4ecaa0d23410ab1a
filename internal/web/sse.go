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
func lastEventID(r *http.Request) int64 {
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			return n
		}
	}
	return 0
}

// streamRun streams a stored run's events after the client's last one,
// then new ones as they are appended, until the client leaves; events
// this server writes wake it at once, others are found by polling. shape
// turns a stored event into what the page gets (skip reports false).
// Deltas published under key are passed through as "delta" events.
func (s *Server) streamRun(w http.ResponseWriter, r *http.Request, id, key string, shape func(store.Event) (sseEvent, bool)) {
	after := lastEventID(r)
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
	msgs, leave := s.hub.subscribe(key)
	defer leave()
	out := newSSE(w)
	ctx := r.Context()
	tick := time.NewTicker(s.opt.Poll)
	defer tick.Stop()
	idle, was := 0, -1
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
		m, err := waitMore(ctx, tick.C, msgs, out, &idle, after)
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

// waitMore waits for a wake-up, a poll tick or the client leaving, sending
// the deltas made after event seq (the last one sent) as they come and a
// keep-alive comment every 15 s or so. It returns a delta made after an
// event not yet sent, for the caller to send after that event.
func waitMore(ctx context.Context, tick <-chan time.Time, msgs <-chan message, out *sseWriter, idle *int, seq int64) (message, error) {
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
		case <-tick:
			*idle++
			if *idle%75 == 0 {
				if err := out.comment("keep-alive"); err != nil {
					return message{}, err
				}
			}
			return message{}, nil
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
