// Package web is sagasu's browser face, `sagasu serve`: one handler that
// serves an embedded page (plain HTML, CSS and JavaScript modules, no build
// step) and the JSON and server-sent-event API it calls — chat with the
// agent's steps shown live, a search playground, Plan-and-Act runs, the
// agent cache and the index's sources.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/app"
)

//go:embed assets
var assets embed.FS

// Options configure a Server.
type Options struct {
	// Listen is the address served, such as 127.0.0.1:7373; it decides
	// which Host headers are accepted and whether a token is required.
	Listen string
	// Token, when set, must accompany every request (a bearer header, or
	// the cookie a one-time ?token= link sets). Required off loopback.
	Token string
	// Logger receives request failures; nil discards them.
	Logger *slog.Logger
	// Poll is how often live streams look for new events in the store
	// (default 200 ms); events this server writes wake them at once.
	Poll time.Duration
	// MaxRuns is how many agent runs may run at once (default 4).
	MaxRuns int
}

// Server serves the page and its API over one runtime.
type Server struct {
	app  *app.App
	rt   *app.Runtime
	opt  Options
	log  *slog.Logger
	hub  *hub
	base context.Context

	// runs drives the Plan-and-Act runs the page starts and resumes.
	runs *app.BackgroundRuns

	mu    sync.Mutex
	tasks map[string]context.CancelFunc // running chat turns and index jobs, by key
	jobs  map[string]*job               // index jobs, by ID
	seq   int64
}

// New returns a server over rt. base bounds every background task (chat
// turns, agent runs, index jobs): cancel it to stop them all. It refuses
// an address off loopback without a token.
func New(base context.Context, a *app.App, rt *app.Runtime, opt Options) (*Server, error) {
	if err := checkListen(opt.Listen, opt.Token); err != nil {
		return nil, err
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Poll <= 0 {
		opt.Poll = 200 * time.Millisecond
	}
	s := &Server{app: a, rt: rt, opt: opt, log: opt.Logger, hub: newHub(), base: base,
		tasks: map[string]context.CancelFunc{}, jobs: map[string]*job{}}
	s.runs = rt.BackgroundRuns(base, opt.MaxRuns, func(id string) { s.hub.publish(runKey(id), message{}) })
	return s, nil
}

// Handler returns the page and the API behind the security checks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /", files)

	mux.HandleFunc("GET /api/info", s.info)

	mux.HandleFunc("GET /api/threads", s.listThreads)
	mux.HandleFunc("POST /api/threads", s.startThread)
	mux.HandleFunc("POST /api/threads/{id}/ask", s.ask)
	mux.HandleFunc("POST /api/threads/{id}/stop", s.stopThread)
	mux.HandleFunc("GET /api/threads/{id}/events", s.threadEvents)

	mux.HandleFunc("POST /api/search", s.search)
	mux.HandleFunc("POST /api/evaluate", s.evaluate)
	mux.HandleFunc("GET /api/chunks/{id}", s.chunk)
	mux.HandleFunc("GET /api/source", s.source)

	mux.HandleFunc("GET /api/runs", s.listRuns)
	mux.HandleFunc("POST /api/runs", s.startRun)
	mux.HandleFunc("GET /api/runs/{id}", s.showRun)
	mux.HandleFunc("POST /api/runs/{id}/resume", s.resumeRun)
	mux.HandleFunc("POST /api/runs/{id}/stop", s.stopRun)
	mux.HandleFunc("GET /api/runs/{id}/events", s.runEvents)

	mux.HandleFunc("GET /api/cache", s.cache)

	mux.HandleFunc("GET /api/sources", s.sources)
	mux.HandleFunc("POST /api/index", s.index)
	mux.HandleFunc("GET /api/jobs/{id}/events", s.jobEvents)
	return s.guard(mux)
}

// Wait blocks until every background task has ended or ctx is done.
func (s *Server) Wait(ctx context.Context) {
	s.runs.Wait(ctx)
	for {
		s.mu.Lock()
		n := len(s.tasks)
		s.mu.Unlock()
		if n == 0 || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startTask runs fn in the background under key, unless a task with that
// key is running (then it reports false). Stop cancels fn's context.
func (s *Server) startTask(key string, fn func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.tasks[key]; busy {
		return false
	}
	ctx, cancel := context.WithCancel(s.base)
	s.tasks[key] = cancel
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.tasks, key)
			s.mu.Unlock()
			cancel()
			s.hub.publish(key, message{})
		}()
		fn(ctx)
	}()
	return true
}

// stopTask cancels the task under key and reports whether one ran.
func (s *Server) stopTask(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	cancel, ok := s.tasks[key]
	if ok {
		cancel()
	}
	return ok
}

// running reports whether a task runs under key.
func (s *Server) running(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tasks[key]
	return ok
}

// nextID returns a server-unique number for IDs.
func (s *Server) nextID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// mode is how the agents answer: offline, or driver/model.
func (s *Server) mode(offline bool) string {
	if s.rt.LLM == nil || offline {
		return "offline"
	}
	inf := s.rt.LLM.Info()
	return inf.Driver + "/" + inf.Model
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	st, err := s.rt.Store.Stats(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, fmt.Errorf("read the index's statistics: %w", err))
		return
	}
	out := map[string]any{"mode": s.mode(false), "hasModel": s.rt.LLM != nil,
		"index": map[string]int{"sources": st.Sources, "chunks": st.Chunks}, "cache": s.rt.Cache != nil,
		"mcpServers": s.app.MCPServerNames()}
	if s.rt.Embedder != nil {
		out["embedder"] = s.rt.Embedder.Info().Driver
	}
	writeJSON(w, http.StatusOK, out)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers with an error message the page shows as it is.
func (s *Server) fail(w http.ResponseWriter, code int, err error) {
	if code >= 500 {
		s.log.Error("web request failed", "err", err)
	}
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

// decode reads a request body of at most 1 MiB into v; on failure it
// answers 400 and reports false.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("the request body is not the JSON this call takes: %w", err))
		return false
	}
	return true
}
