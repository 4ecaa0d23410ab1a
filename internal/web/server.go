// Package web is sagasu's browser face, `sagasu serve`: one handler that
// serves an embedded page (plain HTML, CSS and JavaScript modules, no build
// step) and the JSON and server-sent-event API it calls — chat with the
// agent's steps shown live, a search playground, Plan-and-Act runs, the
// agent cache and the index's sources.
package web

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/httpguard"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

//go:embed assets
var assets embed.FS

// Options configure a Server.
type Options struct {
	// Listen is the address served, such as 127.0.0.1:7373; it decides
	// which Host headers are accepted.
	Listen string
	// Token must accompany every API request as Authorization: Bearer;
	// the page takes it from its link's #token= fragment. New refuses an
	// empty Token unless NoToken is set.
	Token string
	// NoToken serves without a token: any local user or program may then
	// read and index what the server can. Refused off loopback.
	NoToken bool
	// AllowDotfiles lets the page index and show dotfiles and dot-folders
	// (.env, .ssh/, .git/...), which are refused by default.
	AllowDotfiles bool
	// MaxTasks bounds the chat turns, agent runs and index jobs running at
	// once (default DefaultMaxTasks); more get 429.
	MaxTasks int
	// MaxStreams bounds the live event streams open at once (default
	// DefaultMaxStreams); more get 429.
	MaxStreams int
	// Timeouts are the HTTP server's (Serve); zero fields take
	// httpguard's defaults.
	Timeouts httpguard.Timeouts
	// Logger receives request failures; nil discards them.
	Logger *slog.Logger
	// Poll is how often the store is looked at for events other processes
	// wrote to a watched run (default 200 ms), once per run however many
	// streams watch it; events this server writes wake the streams at once.
	Poll time.Duration
	// MaxRuns is how many agent runs may run at once (default 4).
	MaxRuns int
}

// Defaults of Options.
const (
	DefaultMaxTasks   = 8
	DefaultMaxStreams = 32
	// MaxBodyBytes bounds every request body.
	MaxBodyBytes = 1 << 20
)

// Server serves the page and its API over one runtime.
type Server struct {
	app *app.App
	rt  *app.Runtime
	// tools are the runtime's tools as this face may use them.
	tools *tools.Toolset
	ops   tools.Registry // the operations of tools
	opt   Options
	log   *slog.Logger
	hub   *hub
	base  context.Context
	stop  context.CancelFunc // cancels base: every background task

	handler http.Handler // the page and the API behind the guard
	doc     []byte       // the API's OpenAPI document

	streams *httpguard.Limit // live event streams
	watch   *watchers        // one store poller per watched run

	// runs drives the Plan-and-Act runs the page starts and resumes.
	runs *app.BackgroundRuns

	mu    sync.Mutex
	tasks map[string]context.CancelFunc // running chat turns and index jobs, by key
	jobs  map[string]*job               // index jobs, by ID
	seq   int64
}

// New returns a server over rt. base bounds every background task (chat
// turns, agent runs, index jobs): cancel it to stop them all. It refuses
// to serve without a token unless told to (NoToken), and never without one
// off loopback.
func New(base context.Context, a *app.App, rt *app.Runtime, opt Options) (*Server, error) {
	if err := checkListen(opt.Listen, opt.Token, opt.NoToken); err != nil {
		return nil, err
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Poll <= 0 {
		opt.Poll = 200 * time.Millisecond
	}
	if opt.MaxTasks <= 0 {
		opt.MaxTasks = DefaultMaxTasks
	}
	if opt.MaxStreams <= 0 {
		opt.MaxStreams = DefaultMaxStreams
	}
	base, stop := context.WithCancel(base)
	s := &Server{app: a, rt: rt, opt: opt, log: opt.Logger, hub: newHub(), base: base, stop: stop,
		streams: httpguard.NewLimit(opt.MaxStreams),
		tasks:   map[string]context.CancelFunc{}, jobs: map[string]*job{}}
	s.watch = newWatchers(s)
	s.runs = rt.BackgroundRuns(base, opt.MaxRuns, func(id string) { s.hub.publish(runKey(id), message{}) })
	s.useTools(rt.Tools)
	mux, api := s.routes()
	doc, err := openAPI(api)
	if err != nil {
		return nil, err
	}
	s.doc, s.handler = doc, s.guard(mux)
	return s, nil
}

// useTools sets the tools the page's calls run, with the server's rule on
// dotfiles.
func (s *Server) useTools(t *tools.Toolset) {
	s.tools = t.WithDotfiles(s.opt.AllowDotfiles)
	// Built once: deriving the operations' schemas takes longer than a
	// search.
	s.ops = s.tools.Registry(tools.DefOptions{})
}

// Serve serves the page on ln, with httpguard's timeouts (or Options'),
// until ctx ends; then it stops the background tasks and shuts down,
// waiting up to 5 s for them.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.opt.Timeouts.Server(s.Handler())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.stop()
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Wait(shut)
	if err := hs.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// Handler returns the page and the API behind the security checks.
func (s *Server) Handler() http.Handler { return s.handler }

// routes registers the page and the API on a new mux and returns it with
// the API's patterns, which the OpenAPI document describes.
func (s *Server) routes() (*http.ServeMux, []string) {
	mux := http.NewServeMux()
	// The page's files by name (not "GET /", which would also claim every
	// API path for GET).
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /{$}", files)
	names, _ := fs.ReadDir(static, ".")
	for _, e := range names {
		mux.Handle("GET /"+e.Name(), files)
	}
	var api []string
	route := func(pattern string, h http.HandlerFunc) {
		mux.HandleFunc(pattern, h)
		api = append(api, pattern)
	}
	route("GET /api/openapi.json", s.openapi)
	route("GET /api/info", s.info)

	route("GET /api/threads", s.listThreads)
	route("POST /api/threads", s.startThread)
	route("POST /api/threads/{id}/ask", s.ask)
	route("POST /api/threads/{id}/stop", s.stopThread)
	route("GET /api/threads/{id}/events", s.threadEvents)
	route("DELETE /api/threads/{id}", s.deleteThread)
	route("GET /api/threads/{id}/export", s.exportThread)

	route("POST /api/search", s.search)
	route("POST /api/ops/{name}", s.runOp)
	route("POST /api/evaluate", s.evaluate)
	route("GET /api/chunks/{id}", s.chunk)
	route("GET /api/source", s.source)

	route("GET /api/runs", s.listRuns)
	route("POST /api/runs", s.startRun)
	route("GET /api/runs/{id}", s.showRun)
	route("POST /api/runs/{id}/resume", s.resumeRun)
	route("POST /api/runs/{id}/stop", s.stopRun)
	route("GET /api/runs/{id}/events", s.runEvents)
	route("DELETE /api/runs/{id}", s.deleteRun)
	route("GET /api/runs/{id}/export", s.exportRun)
	route("POST /api/runs/prune", s.pruneRuns)

	route("GET /api/cache", s.cache)

	route("GET /api/sources", s.sources)
	route("POST /api/index", s.index)
	route("GET /api/jobs/{id}/events", s.jobEvents)
	return mux, api
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

// Why startTask did not start a task.
var (
	// errBusy: a task under the key runs already.
	errBusy = errors.New("already running")
	// errFull: the server runs as many tasks as it allows.
	errFull = errors.New("too many tasks")
)

// startTask runs fn in the background under key, unless a task with that
// key runs (errBusy) or MaxTasks do (errFull). Stop cancels fn's context.
func (s *Server) startTask(key string, fn func(ctx context.Context)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.tasks[key]; busy {
		return errBusy
	}
	if len(s.tasks) >= s.opt.MaxTasks {
		return errFull
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
	return nil
}

// full reports whether MaxTasks tasks run.
func (s *Server) full() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks) >= s.opt.MaxTasks
}

// failFull answers a task refused with errFull: 429, saying what to do.
func (s *Server) failFull(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "10")
	s.fail(w, http.StatusTooManyRequests, fmt.Errorf("this server already runs %d chat turns, agent runs and index jobs at once, its limit: wait for one to finish, or stop one (Stop in the page, POST /api/runs/{id}/stop), then try again", s.opt.MaxTasks))
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

// infoOutput is what the page shows at the top: how it answers and the
// index's size.
type infoOutput struct {
	Mode     string      `json:"mode" jsonschema:"offline, or the model as driver/model"`
	HasModel bool        `json:"hasModel"`
	Index    indexCounts `json:"index"`
	Cache    bool        `json:"cache" jsonschema:"whether an agent cache is kept"`
	Embedder string      `json:"embedder,omitempty" jsonschema:"the index's embedder, when it has one"`
	// MCPServers are the configured MCP servers a run may use.
	MCPServers []string `json:"mcpServers" jsonschema:"the configured MCP servers an agent run may use, by name"`
}

// indexCounts is the index's size.
type indexCounts struct {
	Sources int `json:"sources"`
	Chunks  int `json:"chunks"`
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	st, err := s.rt.Store.Stats(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, fmt.Errorf("read the index's statistics: %w", err))
		return
	}
	out := infoOutput{Mode: s.mode(false), HasModel: s.rt.LLM != nil, Index: indexCounts{Sources: st.Sources, Chunks: st.Chunks}, Cache: s.rt.Cache != nil,
		MCPServers: s.app.MCPServerNames()}
	if s.rt.Embedder != nil {
		out.Embedder = s.rt.Embedder.Info().Driver
	}
	writeJSON(w, http.StatusOK, out)
}

// strictJSON decodes one JSON object into v, refusing unknown fields, null
// values and anything after the object. A whole number may be written as
// JSON allows (15, 15.0, 1.5e1).
func strictJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more follows the JSON object")
	}
	if fields == nil {
		return errors.New("give a JSON object, not null")
	}
	for k, f := range fields {
		if f == nil {
			return fmt.Errorf("field %q is null: leave it out, or give a value", k)
		}
		fields[k] = wholeNumbers(f)
	}
	norm, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	dec = json.NewDecoder(bytes.NewReader(norm))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// wholeNumbers rewrites the numbers in v that are whole (15.0, 1.5e1) as
// integers, so that they decode into Go integers.
func wholeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return x
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
	case []any:
		for i := range x {
			x[i] = wholeNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = wholeNumbers(x[k])
		}
	}
	return v
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// errorOutput is every error's answer: what went wrong and what to do.
type errorOutput struct {
	Error string `json:"error"`
}

// fail answers with an error message the page shows as it is.
func (s *Server) fail(w http.ResponseWriter, code int, err error) {
	if code >= 500 {
		s.log.Error("web request failed", "err", err)
	}
	writeJSON(w, code, errorOutput{Error: err.Error()})
}

// decode reads a request body (capped at MaxBodyBytes by the guard) into
// v: one JSON object, without unknown fields or nulls (leave a field out
// instead). On failure it answers 400 (413 past the cap) and reports false.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, err := io.ReadAll(r.Body)
	if err == nil {
		err = strictJSON(raw, v)
	}
	switch {
	case httpguard.IsTooLarge(err):
		s.fail(w, http.StatusRequestEntityTooLarge, httpguard.TooLarge(MaxBodyBytes))
	case err != nil:
		s.fail(w, http.StatusBadRequest, fmt.Errorf("the request body is not the JSON this call takes: %w", err))
	default:
		return true
	}
	return false
}
