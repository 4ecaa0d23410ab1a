// Package githubtest is a fake GitHub for tests: an httptest server that
// answers the REST API calls sagasu makes (repository, commits/{ref} as a
// SHA, git/trees recursive, git/blobs in base64, raw content, gists with
// truncated files and ETags) the way GitHub documents them, counts the
// requests by kind, and can play a private repository or an exhausted rate
// limit.
package githubtest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is the fake GitHub. API is its REST base URL, Raw its raw-content
// base URL.
type Server struct {
	*httptest.Server
	API, Raw string
	// Token, when set, is the one token that may read private repositories.
	Token string
	// RefuseHEAD makes commits/HEAD answer 422, as an API that only takes
	// branch names would.
	RefuseHEAD bool
	// Latency is added to every answer, to play a network (set it before use).
	Latency time.Duration

	mu     sync.Mutex
	repos  map[string]*repo // by "owner/name"
	gists  map[string]*gist
	counts map[string]int
	// limit: after limitAfter more requests, answer 403 rate limited until
	// reset (or, with limitFor, until limitFor after the first refusal).
	limitAfter int
	limitReset time.Time
	limitFor   time.Duration
	limited    bool
	serial     int
}

type repo struct {
	private       bool
	defaultBranch string
	refs          map[string]string            // branch or tag -> commit
	commits       map[string]map[string]string // commit -> path -> content
}

type gist struct {
	files    map[string]string
	truncate int // files longer than this are truncated in the API answer
	etag     string
}

// New starts a fake GitHub; it is closed when the test ends.
func New(t interface{ Cleanup(func()) }) *Server {
	s := &Server{repos: map[string]*repo{}, gists: map[string]*gist{}, counts: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	s.API = s.URL + "/api/v3"
	s.Raw = s.URL + "/raw"
	t.Cleanup(s.Close)
	return s
}

// BlobSHA is git's object name for a file's content.
func BlobSHA(content string) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write([]byte(content))
	return hex.EncodeToString(h.Sum(nil))
}

// Push makes a commit of files on branch (creating the repository, whose
// default branch is the first branch pushed) and returns its SHA.
func (s *Server) Push(fullName, branch string, files map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[fullName]
	if r == nil {
		r = &repo{defaultBranch: branch, refs: map[string]string{}, commits: map[string]map[string]string{}}
		s.repos[fullName] = r
	}
	s.serial++
	h := sha1.New()
	fmt.Fprintf(h, "commit %d %s", s.serial, fullName)
	for _, p := range sortedKeys(files) {
		fmt.Fprintf(h, "%s %s\n", p, BlobSHA(files[p]))
	}
	sha := hex.EncodeToString(h.Sum(nil))
	copied := make(map[string]string, len(files))
	for k, v := range files {
		copied[k] = v
	}
	r.commits[sha] = copied
	r.refs[branch] = sha
	return sha
}

// Tag points a tag at a commit.
func (s *Server) Tag(fullName, tag, commit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[fullName].refs[tag] = commit
}

// SetPrivate makes a repository readable only with Token.
func (s *Server) SetPrivate(fullName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[fullName].private = true
}

// SetGist creates or replaces a gist. Files longer than truncate bytes come
// back truncated, as GitHub does for large files (0: never).
func (s *Server) SetGist(id string, files map[string]string, truncate int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serial++
	s.gists[id] = &gist{files: files, truncate: truncate, etag: fmt.Sprintf(`W/"gist-%d"`, s.serial)}
}

// LimitAfter lets n more requests through, then answers 403 with
// X-RateLimit-Remaining 0 until reset.
func (s *Server) LimitAfter(n int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limitAfter, s.limitReset, s.limitFor, s.limited = n, reset, 0, true
}

// LimitAfterFor lets n more requests through, then answers 403 with
// X-RateLimit-Remaining 0 for d from the first refusal: however long the n
// requests take, the next one is refused (a reset fixed in advance may
// pass first on a busy machine).
func (s *Server) LimitAfterFor(n int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limitAfter, s.limitReset, s.limitFor, s.limited = n, time.Time{}, d, true
}

// Counts returns the requests served so far by kind: "repo", "commit",
// "tree", "blob", "raw", "gist", "gist-raw", "limited".
func (s *Server) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// ResetCounts sets every count to zero.
func (s *Server) ResetCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts = map[string]int{}
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	time.Sleep(s.Latency)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limited {
		if s.limitAfter <= 0 && s.limitFor > 0 && s.limitReset.IsZero() {
			s.limitReset = time.Now().Add(s.limitFor)
		}
		if s.limitAfter <= 0 && time.Now().Before(s.limitReset) {
			s.counts["limited"]++
			w.Header().Set("X-RateLimit-Limit", "60")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(s.limitReset.Unix(), 10))
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "API rate limit exceeded for 127.0.0.1."})
			return
		}
		s.limitAfter--
	}
	p := req.URL.Path
	switch {
	case strings.HasPrefix(p, "/api/v3/repos/"):
		s.serveRepo(w, req, strings.TrimPrefix(p, "/api/v3/repos/"))
	case strings.HasPrefix(p, "/api/v3/gists/"):
		s.counts["gist"]++
		s.serveGist(w, req, strings.TrimPrefix(p, "/api/v3/gists/"))
	case strings.HasPrefix(p, "/raw/"):
		s.counts["raw"]++
		s.serveRaw(w, req, strings.TrimPrefix(p, "/raw/"))
	case strings.HasPrefix(p, "/gist-raw/"):
		s.counts["gist-raw"]++
		parts := strings.SplitN(strings.TrimPrefix(p, "/gist-raw/"), "/", 2)
		g := s.gists[parts[0]]
		if g == nil || len(parts) < 2 {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write([]byte(g.files[parts[1]]))
	default:
		notFound(w)
	}
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// visible returns the repository if the request may see it.
func (s *Server) visible(req *http.Request, fullName string) *repo {
	r := s.repos[fullName]
	if r == nil {
		return nil
	}
	if r.private && (s.Token == "" || req.Header.Get("Authorization") != "Bearer "+s.Token) {
		return nil // GitHub answers 404, not 403, so private names do not leak
	}
	return r
}

func (s *Server) serveRepo(w http.ResponseWriter, req *http.Request, rest string) {
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 {
		notFound(w)
		return
	}
	full := parts[0] + "/" + parts[1]
	r := s.visible(req, full)
	if len(parts) == 2 {
		s.counts["repo"]++
		if r == nil {
			notFound(w)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"full_name": full, "default_branch": r.defaultBranch, "private": r.private})
		return
	}
	tail := parts[2]
	switch {
	case strings.HasPrefix(tail, "commits/"):
		s.counts["commit"]++
		if r == nil {
			notFound(w)
			return
		}
		ref := strings.TrimPrefix(tail, "commits/")
		sha := r.resolve(ref)
		if ref == "HEAD" && s.RefuseHEAD {
			sha = ""
		}
		if sha == "" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "No commit found for SHA: " + ref})
			return
		}
		if req.Header.Get("Accept") == "application/vnd.github.sha" {
			w.Header().Set("Content-Type", "application/vnd.github.sha; charset=utf-8")
			_, _ = w.Write([]byte(sha))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"sha": sha})
	case strings.HasPrefix(tail, "git/trees/"):
		s.counts["tree"]++
		files := r.files(strings.TrimPrefix(tail, "git/trees/"))
		if r == nil || files == nil {
			notFound(w)
			return
		}
		type entry struct {
			Path string `json:"path"`
			Mode string `json:"mode"`
			Type string `json:"type"`
			SHA  string `json:"sha"`
			Size *int   `json:"size,omitempty"`
		}
		var tree []entry
		dirs := map[string]bool{}
		for _, p := range sortedKeys(files) {
			segs := strings.Split(p, "/")
			for i := 1; i < len(segs); i++ {
				d := strings.Join(segs[:i], "/")
				if !dirs[d] {
					dirs[d] = true
					tree = append(tree, entry{Path: d, Mode: "040000", Type: "tree", SHA: BlobSHA("tree " + d)})
				}
			}
			n := len(files[p])
			mode := "100644"
			if strings.HasSuffix(p, ".link") {
				mode = "120000"
			}
			tree = append(tree, entry{Path: p, Mode: mode, Type: "blob", SHA: BlobSHA(files[p]), Size: &n})
		}
		sort.Slice(tree, func(i, j int) bool { return tree[i].Path < tree[j].Path })
		writeJSON(w, http.StatusOK, map[string]any{"sha": strings.TrimPrefix(tail, "git/trees/"), "tree": tree, "truncated": false})
	case strings.HasPrefix(tail, "git/blobs/"):
		s.counts["blob"]++
		if r == nil {
			notFound(w)
			return
		}
		want := strings.TrimPrefix(tail, "git/blobs/")
		for _, files := range r.commits {
			for _, c := range files {
				if BlobSHA(c) == want {
					enc := base64.StdEncoding.EncodeToString([]byte(c))
					var b strings.Builder
					for len(enc) > 60 { // GitHub wraps base64 at 60 columns
						b.WriteString(enc[:60] + "\n")
						enc = enc[60:]
					}
					b.WriteString(enc)
					writeJSON(w, http.StatusOK, map[string]any{"sha": want, "size": len(c), "content": b.String(), "encoding": "base64"})
					return
				}
			}
		}
		notFound(w)
	default:
		notFound(w)
	}
}

func (r *repo) resolve(ref string) string {
	if r == nil {
		return ""
	}
	if ref == "HEAD" {
		ref = r.defaultBranch
	}
	if sha, ok := r.refs[ref]; ok {
		return sha
	}
	if _, ok := r.commits[ref]; ok {
		return ref
	}
	return ""
}

func (r *repo) files(commit string) map[string]string {
	if r == nil {
		return nil
	}
	return r.commits[commit]
}

func (s *Server) serveRaw(w http.ResponseWriter, req *http.Request, rest string) {
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 4 {
		http.NotFound(w, req)
		return
	}
	r := s.visible(req, parts[0]+"/"+parts[1])
	files := r.files(parts[2])
	c, ok := files[parts[3]]
	if !ok {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(c))
}

func (s *Server) serveGist(w http.ResponseWriter, req *http.Request, id string) {
	g := s.gists[id]
	if g == nil {
		notFound(w)
		return
	}
	if req.Header.Get("If-None-Match") == g.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	files := map[string]any{}
	for name, c := range g.files {
		content, truncated := c, false
		if g.truncate > 0 && len(c) > g.truncate {
			content, truncated = c[:g.truncate], true
		}
		files[name] = map[string]any{
			"filename": name, "type": "text/plain", "language": "Markdown",
			"raw_url": s.URL + "/gist-raw/" + id + "/" + name, "size": len(c),
			"truncated": truncated, "content": content,
		}
	}
	w.Header().Set("ETag", g.etag)
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "files": files, "truncated": false})
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
