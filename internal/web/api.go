package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/httpguard"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Limits on what one answer carries; the page links to the rest.
const (
	// MaxPassageRunes bounds a passage or quote shown in a citation.
	MaxPassageRunes = 4000
	// MaxSourceBytes bounds a source or section opened whole.
	MaxSourceBytes = 256 << 10
	// SnippetRunes is a search result's snippet length.
	SnippetRunes = 400
)

// PageGroups are the groups of operations the page's API runs by name
// (POST /api/ops/{name}): searching and judging, not writing.
var PageGroups = []string{tools.GroupSearch, tools.GroupLoop}

// runOp runs an operation of the registry with the request body as its
// arguments and answers its output: the same JSON as `sagasu X --json` and
// MCP's structuredContent.
func (s *Server) runOp(w http.ResponseWriter, r *http.Request) {
	op, ok := s.ops.In(PageGroups).Find(r.PathValue("name"))
	if !ok {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no operation %q here: the page runs %s", r.PathValue("name"), strings.Join(opNames(PageGroups), ", ")))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if httpguard.IsTooLarge(err) {
		s.fail(w, http.StatusRequestEntityTooLarge, httpguard.TooLarge(MaxBodyBytes))
		return
	}
	if err != nil {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("read the request: %w", err))
		return
	}
	// The page offers its groups: a next step names only those.
	reply, err := op.Call(r.Context(), &tools.Env{Offers: func(name string) bool { return slices.Contains(opNames(PageGroups), name) }}, raw)
	if err != nil {
		s.failErr(w, fmt.Errorf("%s: %w", op.Name, err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(reply.JSON, '\n'))
}

// opNames names the operations of groups.
func opNames(groups []string) []string {
	var out []string
	for _, o := range tools.Ops(tools.DefOptions{}).In(groups) {
		out = append(out, o.Name)
	}
	return out
}

// searchInput is the search playground's request: sagasu_query's input.
type searchInput = tools.QueryInput

// searchOutput is the search playground's answer: sagasu_query's output,
// with what the page adds to show it (the words it highlights, a snippet
// around them, the time taken).
type searchOutput struct {
	tools.QueryOutput
	Results []searchResult `json:"results"`
	TookMs  float64        `json:"tookMs"`
	Terms   []string       `json:"terms" jsonschema:"the query's words, which the page highlights"`
}

// searchResult is one hit with a snippet around the query's words.
type searchResult struct {
	tools.Result
	// Score is the relevance, under the name the page reads.
	Score     float64 `json:"score"`
	Snippet   string  `json:"snippet"`
	Truncated bool    `json:"truncated"`
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	var in searchInput
	if !s.decode(w, r, &in) {
		return
	}
	op, _ := s.ops.Find(tools.NameQuery)
	start := time.Now()
	reply, err := op.CallWith(r.Context(), &tools.Env{}, in)
	if err != nil {
		if strings.TrimSpace(in.Query) == "" {
			err = fmt.Errorf("the search is empty: type some words to search for: %w", err)
		}
		s.failErr(w, fmt.Errorf("search %q: %w", in.Query, err))
		return
	}
	out := searchOutput{QueryOutput: reply.Out.(tools.QueryOutput), TookMs: float64(time.Since(start).Microseconds()) / 1000, Terms: strings.Fields(in.Query)}
	out.Results = make([]searchResult, 0, len(out.QueryOutput.Results))
	for _, rv := range out.QueryOutput.Results {
		snip, cut := snippet(rv.Text, out.Terms, SnippetRunes)
		out.Results = append(out.Results, searchResult{Result: rv, Score: rv.Relevance, Snippet: snip, Truncated: cut})
	}
	writeJSON(w, http.StatusOK, out)
}

// statusOf is the HTTP status of an operation's failure: the caller's
// mistake (400), what the index cannot do as it is (409: a meaning search
// without embeddings), something not there (404), an embedder or an index
// server that failed or cannot be reached (503: the same request may work
// once it is back), anything else the server's (500).
func statusOf(err error) int {
	switch {
	case errors.Is(err, tools.ErrInvalidArgument), errors.Is(err, search.ErrBadRequest), errors.Is(err, search.ErrAmbiguous):
		return http.StatusBadRequest
	case errors.Is(err, search.ErrNoEmbedder):
		return http.StatusConflict
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, search.ErrEmbedder), errors.Is(err, store.ErrUnavailable):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// failErr answers with err and the status its kind calls for.
func (s *Server) failErr(w http.ResponseWriter, err error) { s.fail(w, statusOf(err), err) }

// snippet returns at most n runes of text around the first of terms it
// contains (case-insensitively), and whether text was cut.
func snippet(text string, terms []string, n int) (string, bool) {
	if utf8.RuneCountInString(text) <= n {
		return text, false
	}
	lower := strings.ToLower(text)
	at := -1
	for _, t := range terms {
		if i := strings.Index(lower, strings.ToLower(t)); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	start := 0
	if at > 0 {
		// Start a quarter of the window before the match, on a rune.
		back := 0
		for start = at; start > 0 && back < n/4; back++ {
			_, size := utf8.DecodeLastRuneInString(text[:start])
			start -= size
		}
	}
	end, count := start, 0
	for end < len(text) && count < n {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
		count++
	}
	out := text[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out, true
}

// evaluateInput asks for a judgement of results against a goal.
type evaluateInput struct {
	Goal     string  `json:"goal"`
	Query    string  `json:"query,omitempty" jsonschema:"the query that found the results"`
	ChunkIDs []int64 `json:"chunkIds" jsonschema:"the results' chunk IDs"`
}

// evaluate judges a result list against a goal, as agents in the loop do.
func (s *Server) evaluate(w http.ResponseWriter, r *http.Request) {
	var in evaluateInput
	if !s.decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Goal) == "" {
		s.fail(w, http.StatusBadRequest, errors.New("the goal is empty: say what the results should tell you"))
		return
	}
	if len(in.ChunkIDs) == 0 {
		s.fail(w, http.StatusBadRequest, errors.New("there are no results to evaluate: search first"))
		return
	}
	// Each result once, in order; all of them must still be in the index.
	seen := map[int64]bool{}
	in.ChunkIDs = slices.DeleteFunc(in.ChunkIDs, func(id int64) bool { dup := seen[id]; seen[id] = true; return dup })
	hits, err := s.rt.Store.Hits(r.Context(), in.ChunkIDs)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, fmt.Errorf("read chunks: %w", err))
		return
	}
	if len(hits) < len(in.ChunkIDs) {
		s.fail(w, http.StatusNotFound, fmt.Errorf("%d of the %d results are no longer in the index (it changed since): search again", len(in.ChunkIDs)-len(hits), len(in.ChunkIDs)))
		return
	}
	ev, err := s.tools.Evaluate(r.Context(), tools.EvaluateInput{Goal: in.Goal, Query: in.Query, ChunkIDs: in.ChunkIDs, Iteration: 1})
	if err != nil {
		s.failErr(w, fmt.Errorf("evaluate: %w", err))
		return
	}
	writeJSON(w, http.StatusOK, tools.EvaluateOutputOf(ev, len(ev.Aspects)))
}

// chunkOutput is one passage.
type chunkOutput struct {
	Passage   search.ResultView `json:"passage"`
	Truncated bool              `json:"truncated" jsonschema:"the text was cut to 4000 characters"`
}

// sourceOutput is a source, or one section of it.
type sourceOutput struct {
	Source     tools.SourceRef `json:"source"`
	Section    string          `json:"section" jsonschema:"the section's heading path; empty for the whole source"`
	Lines      [2]int          `json:"lines"`
	Content    string          `json:"content"`
	TotalBytes int             `json:"totalBytes"`
	Truncated  bool            `json:"truncated" jsonschema:"the content was cut to 256 KiB"`
}

// indexInput adds to the index.
type indexInput struct {
	Path string `json:"path" jsonschema:"a folder, file or glob inside the server's roots, or a URL (https://...)"`
}

// jobAccepted names an index job whose progress streams from its events.
type jobAccepted struct {
	Job string `json:"job"`
}

// chunk returns one passage (a citation's), cut to MaxPassageRunes.
func (s *Server) chunk(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("chunk id %q: give a number", r.PathValue("id")))
		return
	}
	hits, err := s.rt.Store.Hits(r.Context(), []int64{id})
	if err != nil {
		s.fail(w, http.StatusInternalServerError, fmt.Errorf("read chunk %d: %w", id, err))
		return
	}
	if len(hits) == 0 {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no chunk %d: the index changed since; search again", id))
		return
	}
	if err := s.tools.Readable(hits[0].Source); err != nil {
		s.fail(w, http.StatusForbidden, err)
		return
	}
	v := search.View(hits[0])
	text := clip.Runes(v.Text, MaxPassageRunes)
	cut := text != v.Text
	v.Text = text
	writeJSON(w, http.StatusOK, chunkOutput{Passage: v, Truncated: cut})
}

// source returns a source's content, or one section of it, cut to
// MaxSourceBytes (on a line break where it can).
func (s *Server) source(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ref := q.Get("ref")
	if ref == "" {
		s.fail(w, http.StatusBadRequest, errors.New("ref is empty: give a source ID or URI"))
		return
	}
	g, err := s.tools.Get(r.Context(), tools.GetInput{Source: ref, Section: q.Get("section")})
	if errors.Is(err, tools.ErrDotfile) || errors.Is(err, tools.ErrOutsideRoots) {
		s.fail(w, http.StatusForbidden, err)
		return
	}
	if err != nil {
		s.failErr(w, err)
		return
	}
	body := g.Content
	cut := false
	if len(body) > MaxSourceBytes {
		body, cut = body[:MaxSourceBytes], true
		if nl := strings.LastIndexByte(body, '\n'); nl > 0 {
			body = body[:nl+1]
		}
		for !utf8.ValidString(body) {
			body = body[:len(body)-1]
		}
	}
	writeJSON(w, http.StatusOK, sourceOutput{Source: tools.Ref(g.Source), Section: g.Section,
		Lines: [2]int{g.StartLine, g.EndLine}, Content: body, TotalBytes: len(g.Content), Truncated: cut})
}

// cache lists the agent cache's records and renders its summary.
func (s *Server) cache(w http.ResponseWriter, r *http.Request) {
	if s.rt.Cache == nil {
		s.fail(w, http.StatusNotFound, errors.New("this server keeps no agent cache"))
		return
	}
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			s.fail(w, http.StatusBadRequest, fmt.Errorf("limit %q: give a whole number from 1 to 100", v))
			return
		}
		limit = n
	}
	in := tools.ReadCacheInput{Kind: q.Get("kind"), Goal: q.Get("goal"), ID: q.Get("id"), Limit: limit, Summary: q.Get("id") == "", IncludeData: q.Get("id") != ""}
	res, err := s.tools.ReadCache(r.Context(), in)
	if err != nil {
		code := http.StatusBadRequest
		if in.ID != "" {
			code = http.StatusNotFound // no such record, whatever the ID looks like
		}
		s.fail(w, code, err)
		return
	}
	writeJSON(w, http.StatusOK, res.Output(len(res.Records), MaxSourceBytes))
}

// sources lists the index's sources with their counts.
func (s *Server) sources(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	res, err := s.tools.List(r.Context(), tools.ListInput{Type: q.Get("type"), Glob: q.Get("glob"), Limit: tools.MaxListLimit})
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, res.Output(len(res.Sources), ""))
}

// job is an index run in the background and what it reported so far.
type job struct {
	mu     sync.Mutex
	events []sseEvent
	done   bool
}

func (j *job) add(event string, data any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, sseEvent{ID: int64(len(j.events) + 1), Event: event, Data: data})
}

// index adds a folder, file or URL to the index in the background; its
// progress streams from /api/jobs/{id}/events.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	var in indexInput
	if !s.decode(w, r, &in) {
		return
	}
	target := strings.TrimSpace(in.Path)
	if target == "" {
		s.fail(w, http.StatusBadRequest, errors.New("give a folder, a file or a URL (https://...) to index"))
		return
	}
	if err := s.tools.CheckPath(target); err != nil {
		s.fail(w, refusal(err), err)
		return
	}
	id := fmt.Sprintf("index-%d", s.nextID())
	j := &job{}
	err := s.startTask("job:"+id, func(ctx context.Context) {
		j.add("start", map[string]string{"path": target})
		res, err := s.tools.Index(ctx, tools.IndexInput{Files: []string{target}}, func(p tools.IndexProgress) {
			done, total := p.Work()
			left, _ := p.Left()
			j.add("progress", map[string]any{"read": p.Read, "written": p.Written, "chunks": p.Chunks, "final": p.Final, "text": p.String(),
				"done": done, "total": total, "reading": p.Reading, "embedding": p.Embedding, "rate": p.Rate(), "leftMs": left.Milliseconds()})
			s.hub.publish("job:"+id, message{})
		})
		if err != nil {
			j.add("failed", map[string]string{"error": err.Error()})
		} else {
			j.add("done", res.Output(min(len(res.Skipped), 50)))
		}
		j.mu.Lock()
		j.done = true
		j.mu.Unlock()
	})
	if err != nil {
		s.failFull(w) // job IDs are unique: errFull is the only refusal
		return
	}
	s.mu.Lock()
	s.forgetJobs()
	s.jobs[id] = j
	s.mu.Unlock()
	writeJSON(w, http.StatusAccepted, jobAccepted{Job: id})
}

// refusal is the status of a path or source a tool refused: 403 for a
// dotfile or a path outside the roots, 404 for a path that does not exist,
// 400 for anything else wrong with it.
func refusal(err error) int {
	switch {
	case errors.Is(err, tools.ErrDotfile) || errors.Is(err, tools.ErrOutsideRoots):
		return http.StatusForbidden
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// keptJobs is how many finished index jobs the server remembers.
const keptJobs = 32

// forgetJobs drops finished jobs beyond keptJobs, oldest first; s.mu is held.
func (s *Server) forgetJobs() {
	var done []string
	for id, j := range s.jobs {
		j.mu.Lock()
		if j.done {
			done = append(done, id)
		}
		j.mu.Unlock()
	}
	if len(done) <= keptJobs {
		return
	}
	// IDs are index-N with N rising: the shortest, then smallest, is oldest.
	slices.SortFunc(done, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b)) })
	for _, id := range done[:len(done)-keptJobs] {
		delete(s.jobs, id)
	}
}

// jobEvents streams an index job's progress from the client's last event.
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j == nil {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no index job %q", id))
		return
	}
	after, err := lastEventID(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if !s.openStream(w) {
		return
	}
	defer s.streams.Release()
	msgs, leave := s.hub.subscribe("job:" + id)
	defer leave()
	out := newSSE(w)
	alive := time.NewTicker(keepAlive)
	defer alive.Stop()
	for {
		j.mu.Lock()
		evs, done := append([]sseEvent(nil), j.events[min(int(after), len(j.events)):]...), j.done
		j.mu.Unlock()
		for _, ev := range evs {
			if err := out.send(ev); err != nil {
				return
			}
			after = ev.ID
		}
		if done {
			return
		}
		if _, err := waitMore(r.Context(), alive.C, msgs, out, after); err != nil {
			return
		}
	}
}
