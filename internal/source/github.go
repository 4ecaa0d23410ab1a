package source

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/source/fetch"
)

// GitHub loads files of a GitHub repository through the REST API:
//
//	github:owner/repo                  the default branch, every file
//	github:owner/repo@ref              a branch, tag or commit SHA
//	github:owner/repo@ref/docs         a folder (or one file)
//	github:owner/repo/docs/**/*.md     a glob, on the default branch
//	https://github.com/owner/repo[/tree/ref/path | /blob/ref/file]
//
// A ref containing "/" is written percent-encoded (feature%2Fx). A document's
// URI is "github:owner/repo[@ref]/path/to/file"; its type is "github".
// Files are filtered like a local folder: Options.Exclude, MaxFileSize,
// binary detection, hidden files and directories, .git and node_modules.
//
// Loading is incremental: the ref is resolved to a commit SHA with one API
// call, and when it is the commit of the last complete load nothing else is
// requested. Otherwise the tree is listed and only files whose blob SHA
// changed are fetched. Files removed from the repository are removed from
// the index.
type GitHub struct{ rm *remote }

// NewGitHub returns the GitHub repository loader.
func NewGitHub(opt Options) *GitHub { return &GitHub{rm: newRemote(opt)} }

// Name implements Loader.
func (g *GitHub) Name() string { return "github" }

// Match implements Loader.
func (g *GitHub) Match(input string) bool {
	return strings.HasPrefix(input, "github:") || hasHostPrefix(input, "github.com")
}

// Check implements Loader.
func (g *GitHub) Check(input string) error {
	_, err := parseGitHub(input)
	return err
}

// hasHostPrefix reports an http(s) URL on host.
func hasHostPrefix(input, host string) bool {
	for _, p := range []string{"https://", "http://"} {
		if rest, ok := strings.CutPrefix(input, p); ok {
			rest = strings.TrimPrefix(rest, "www.")
			return rest == host || strings.HasPrefix(rest, host+"/")
		}
	}
	return false
}

// ghRepo is a parsed GitHub input.
type ghRepo struct {
	owner, repo string
	ref         string // "" for the default branch
	path        string // "" for the whole repository; may be a glob
}

var (
	ghOwner = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	ghName  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	// commitSHA is a SHA-1 or SHA-256 object name.
	commitSHA = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
)

// parseGitHub reads the forms GitHub documents.
func parseGitHub(input string) (ghRepo, error) {
	bad := func(why string) (ghRepo, error) {
		return ghRepo{}, fmt.Errorf("input %q: %s; write github:owner/repo[@ref][/path] or https://github.com/owner/repo[/tree/ref/path]", input, why)
	}
	var g ghRepo
	if rest, ok := strings.CutPrefix(input, "github:"); ok {
		rest = strings.Trim(rest, "/")
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) < 2 {
			return bad("no repository name")
		}
		g.owner = parts[0]
		g.repo, g.ref, _ = strings.Cut(parts[1], "@")
		if len(parts) == 3 {
			g.path = parts[2]
		}
		if strings.Contains(parts[1], "@") && g.ref == "" {
			return bad("empty ref after @")
		}
	} else {
		u, err := url.Parse(input)
		if err != nil {
			return bad(err.Error())
		}
		segs := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
		if len(segs) < 2 {
			return bad("no repository name")
		}
		g.owner, g.repo = segs[0], strings.TrimSuffix(segs[1], ".git")
		if len(segs) > 2 {
			if segs[2] != "tree" && segs[2] != "blob" {
				return bad(fmt.Sprintf("%q pages are not a repository folder or file", segs[2]))
			}
			if len(segs) < 4 {
				return bad("no ref after /" + segs[2])
			}
			g.ref = segs[3]
			g.path = strings.Join(segs[4:], "/")
		}
		g.path, _ = url.PathUnescape(g.path)
	}
	ref, err := url.PathUnescape(g.ref)
	if err != nil {
		return bad("malformed ref: " + err.Error())
	}
	g.ref = ref
	if !ghOwner.MatchString(g.owner) {
		return bad(fmt.Sprintf("%q is not a GitHub user or organisation name", g.owner))
	}
	if !ghName.MatchString(g.repo) || g.repo == "." || g.repo == ".." {
		return bad(fmt.Sprintf("%q is not a repository name", g.repo))
	}
	if strings.ContainsAny(g.ref, " ~^:?*[\\") || strings.Contains(g.ref, "..") {
		return bad(fmt.Sprintf("%q is not a valid git ref", g.ref))
	}
	if g.path != "" {
		g.path = path.Clean(g.path)
		if g.path == "." {
			g.path = ""
		}
		if strings.HasPrefix(g.path, "../") || g.path == ".." {
			return bad("the path leaves the repository")
		}
		if glob.HasMeta(g.path) {
			if err := glob.Valid(g.path); err != nil {
				return bad("malformed glob: " + err.Error())
			}
		}
	}
	return g, nil
}

// prefix is the URI of the repository at the ref as given.
func (g ghRepo) prefix() string {
	p := "github:" + g.owner + "/" + g.repo
	if g.ref != "" {
		p += "@" + url.PathEscape(g.ref)
	}
	return p
}

// key names the input: its prefix and path.
func (g ghRepo) key() string {
	if g.path == "" {
		return g.prefix()
	}
	return g.prefix() + "/" + g.path
}

// selects reports whether the repository path p is inside the input.
func (g ghRepo) selects(p string) bool {
	switch {
	case g.path == "":
		return true
	case glob.HasMeta(g.path):
		return glob.Match(g.path, p)
	default:
		return p == g.path || strings.HasPrefix(p, g.path+"/")
	}
}

// ghState is what a complete load saves: the commit, the filter it was
// loaded with, and each file's blob SHA (with the skip reason of files not
// indexed), so the next load fetches only what changed.
type ghState struct {
	Commit string            `json:"commit"`
	Filter string            `json:"filter"`
	Files  map[string]ghFile `json:"files"` // by repository path
}

type ghFile struct {
	SHA  string     `json:"sha"`
	Skip SkipReason `json:"skip,omitempty"`
	Why  string     `json:"why,omitempty"`
}

// treeEntry is one entry of GitHub's git/trees answer.
type treeEntry struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Type string `json:"type"`
	SHA  string `json:"sha"`
	Size int64  `json:"size"`
}

// Load implements Loader.
func (g *GitHub) Load(ctx context.Context, input string, r *Run) (Outcome, error) {
	repo, err := parseGitHub(input)
	if err != nil {
		return Outcome{}, err
	}
	if err := g.rm.checkBases(); err != nil {
		return Outcome{}, err
	}
	return g.rm.bounded(ctx, repo.key(), func(ctx context.Context) (Outcome, error) { return g.load(ctx, repo, r) })
}

func (g *GitHub) load(ctx context.Context, repo ghRepo, r *Run) (Outcome, error) {
	prefix := repo.prefix()
	out := Outcome{
		StateKey: repo.key(),
		Scope: func(uri string) bool {
			p, ok := strings.CutPrefix(uri, prefix+"/")
			return ok && repo.selects(p)
		},
	}
	var prev ghState
	if s := r.State(out.StateKey); s != "" && !r.Force {
		_ = json.Unmarshal([]byte(s), &prev) // a damaged state means a full load
	}
	filter := g.filter()

	commit, err := g.resolve(ctx, repo)
	if err != nil {
		return Outcome{}, err
	}
	if prev.Commit == commit && prev.Filter == filter && g.allStored(prefix, prev, r) {
		g.rm.log.Debug("repository unchanged", "source", repo.key(), "commit", commit)
		for _, p := range sortedKeys(prev.Files) {
			f := prev.Files[p]
			if f.Skip != "" {
				g.rm.skipped(r, prefix+"/"+p, f.Skip, errors.New(f.Why))
				continue
			}
			r.Keep(prefix + "/" + p)
		}
		out.State = mustJSON(prev)
		return out, nil
	}

	var tree struct {
		Tree      []treeEntry `json:"tree"`
		Truncated bool        `json:"truncated"`
	}
	if err := g.rm.getJSON(ctx, g.apiURL(repo, "git/trees/"+commit)+"?recursive=1", &tree); err != nil {
		return Outcome{}, fmt.Errorf("list files of commit %s: %w", commit, err)
	}
	if tree.Truncated {
		// The listing is incomplete: load what it has, but remove nothing.
		g.rm.log.Warn("GitHub truncated the file list of a large repository; files not listed are kept as they are", "source", repo.key())
		out.Scope = nil
	}

	next := ghState{Commit: commit, Filter: filter, Files: map[string]ghFile{}}
	var jobs []treeEntry
	b := budget{maxFiles: g.rm.maxFiles, maxBytes: g.rm.maxBytes}
	for _, e := range tree.Tree {
		if e.Type != "blob" || !repo.selects(e.Path) {
			continue
		}
		uri := prefix + "/" + e.Path
		if why := g.ignored(repo, e.Path); why != "" {
			g.rm.log.Debug("skipped file", "source", uri, "reason", why)
			continue
		}
		if e.Mode == "120000" {
			next.Files[e.Path] = g.skip(r, uri, e.SHA, SkipIgnored, "symbolic link is not followed")
			continue
		}
		if e.Size > g.rm.maxFile() {
			next.Files[e.Path] = g.skip(r, uri, e.SHA, SkipTooLarge, fmt.Sprintf("larger than the %d-byte limit", g.rm.maxFile()))
			continue
		}
		// A skip is reused only under the same filter: a file too large
		// before may fit under a new --max-file-size.
		if old, ok := prev.Files[e.Path]; ok && old.SHA == e.SHA && ((old.Skip != "" && prev.Filter == filter) || (old.Skip == "" && r.Stored(uri))) {
			next.Files[e.Path] = old
			if old.Skip != "" {
				g.rm.skipped(r, uri, old.Skip, errors.New(old.Why))
			} else {
				r.Keep(uri)
			}
			continue
		}
		if err := b.add(int(e.Size)); err != nil {
			return Outcome{}, err
		}
		jobs = append(jobs, e)
	}

	err = fetchOrdered(ctx, jobs, 4, func(ctx context.Context, e treeEntry) ([]byte, bool, error) {
		return g.content(ctx, repo, commit, e)
	}, func(e treeEntry, data []byte, tooLarge bool, ferr error) error {
		uri := prefix + "/" + e.Path
		switch {
		case ferr != nil:
			// Keep the stored copy (if any) and try again next time.
			g.rm.skipped(r, uri, SkipUnreadable, ferr)
			if r.Stored(uri) {
				r.Keep(uri)
			}
			return nil
		case tooLarge:
			next.Files[e.Path] = g.skip(r, uri, e.SHA, SkipTooLarge, fmt.Sprintf("larger than the %d-byte limit", g.rm.maxFile()))
			return nil
		}
		text, err := g.rm.text(uri, data)
		if err != nil {
			next.Files[e.Path] = g.skip(r, uri, e.SHA, SkipBinary, err.Error())
			return nil
		}
		next.Files[e.Path] = ghFile{SHA: e.SHA}
		d := fileDocument(uri, text)
		d.Type = doc.TypeGitHub
		return r.Emit(d)
	})
	if err != nil {
		return Outcome{}, err
	}
	out.State = mustJSON(next)
	return out, nil
}

// skip reports a skipped file and returns its state entry, so an unchanged
// blob is not fetched again only to be skipped again.
func (g *GitHub) skip(r *Run, uri, sha string, reason SkipReason, why string) ghFile {
	g.rm.skipped(r, uri, reason, errors.New(why))
	return ghFile{SHA: sha, Skip: reason, Why: why}
}

// allStored reports whether every file the state says was indexed is still
// in the index (a `sagasu delete` in between means a load is needed).
func (g *GitHub) allStored(prefix string, s ghState, r *Run) bool {
	if s.Commit == "" {
		return false
	}
	for p, f := range s.Files {
		if f.Skip == "" && !r.Stored(prefix+"/"+p) {
			return false
		}
	}
	return true
}

// filter fingerprints the options that decide which files are indexed.
func (g *GitHub) filter() string {
	return mustJSON(struct {
		Max     int64    `json:"max"`
		Exclude []string `json:"exclude"`
	}{g.rm.maxFile(), g.rm.opt.Exclude})
}

// ignored says why a repository path is left out the way a local folder
// leaves it out (tool and hidden directories, hidden files, exclude
// patterns), or "". The path the input names is never left out itself.
func (g *GitHub) ignored(repo ghRepo, p string) string {
	if p == repo.path {
		return "" // a file named explicitly
	}
	named := map[string]bool{}
	base := ""
	if glob.HasMeta(repo.path) {
		for _, seg := range strings.Split(repo.path, "/") {
			if !glob.HasMeta(seg) {
				named[seg] = true
			}
		}
	} else {
		base = repo.path
	}
	segs := strings.Split(p, "/")
	first := 0
	if base != "" {
		first = strings.Count(base, "/") + 1
	}
	for i := first; i < len(segs); i++ {
		seg := segs[i]
		last := i == len(segs)-1
		switch {
		case named[seg]:
		case !last && (seg == ".git" || seg == "node_modules" || seg == ".sagasu"):
			return seg + " directories are always skipped"
		case !last && strings.HasPrefix(seg, "."):
			return "hidden directory (name it in the path to include it)"
		case last && strings.HasPrefix(seg, "."):
			return "hidden file"
		}
		dir := strings.Join(segs[:i+1], "/")
		rel := dir
		if base != "" {
			rel = strings.TrimPrefix(dir, base+"/")
		}
		for _, x := range g.rm.opt.Exclude {
			if glob.Match(x, dir) || glob.Match(x, seg) || glob.Match(x, rel) {
				return fmt.Sprintf("matches exclude pattern %q", x)
			}
		}
	}
	return ""
}

func (g *GitHub) apiURL(repo ghRepo, rest string) string {
	return g.rm.api.String() + "/repos/" + url.PathEscape(repo.owner) + "/" + url.PathEscape(repo.repo) + "/" + rest
}

// resolve turns the ref into a commit SHA with one request, and explains a
// failure: unknown repository (or private without a token), unknown ref.
func (g *GitHub) resolve(ctx context.Context, repo ghRepo) (string, error) {
	ref := repo.ref
	if ref == "" {
		ref = "HEAD"
	}
	sha, err := g.commit(ctx, repo, ref)
	var se *statusError
	if !errors.As(err, &se) {
		return sha, err
	}
	branch, err := g.explain(ctx, repo, se)
	if repo.ref == "" && branch != "" {
		// An API that does not take HEAD: ask for the default branch by name.
		if sha, err := g.commit(ctx, repo, branch); err == nil {
			return sha, nil
		}
	}
	return "", err
}

// commit asks for the SHA of ref, in one request.
func (g *GitHub) commit(ctx context.Context, repo ghRepo, ref string) (string, error) {
	resp, err := g.rm.get(ctx, g.apiURL(repo, "commits/"+escapeSegments(ref)),
		http.Header{"Accept": {"application/vnd.github.sha"}, "X-Github-Api-Version": {"2022-11-28"}}, http.StatusOK)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := fetch.ReadLimit(resp.Body, 4096)
	if err != nil {
		return "", fmt.Errorf("resolve ref %q: %w", ref, err)
	}
	sha := strings.TrimSpace(string(data))
	if !commitSHA.MatchString(sha) {
		return "", fmt.Errorf("resolve ref %q: the API answered %q, not a commit SHA; check SAGASU_GITHUB_API_URL", ref, clip.Runes(sha, 60))
	}
	return sha, nil
}

// explain turns a failed ref lookup into advice. When the repository
// exists but HEAD was not taken, it returns the default branch to try.
func (g *GitHub) explain(ctx context.Context, repo ghRepo, se *statusError) (retry string, err error) {
	tokenHint := "set GITHUB_TOKEN to a token that can read it"
	if g.rm.token != "" {
		tokenHint = "check that GITHUB_TOKEN can read it"
	}
	switch se.code {
	case http.StatusUnauthorized:
		return "", fmt.Errorf("GitHub refused the credentials (401); check GITHUB_TOKEN: %w", se)
	case http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusConflict:
	default:
		return "", se
	}
	var info struct {
		DefaultBranch string `json:"default_branch"`
	}
	err = g.rm.getJSON(ctx, g.rm.api.String()+"/repos/"+url.PathEscape(repo.owner)+"/"+url.PathEscape(repo.repo), &info)
	var se2 *statusError
	switch {
	case errors.As(err, &se2) && (se2.code == http.StatusNotFound || se2.code == http.StatusUnauthorized || se2.code == http.StatusForbidden):
		return "", fmt.Errorf("repository %s/%s not found; check the owner and name, or if it is private, %s: %w", repo.owner, repo.repo, tokenHint, se)
	case err != nil:
		return "", fmt.Errorf("%w (and looking up the repository failed: %v)", se, err)
	case se.code == http.StatusConflict:
		return "", fmt.Errorf("repository %s/%s is empty: %w", repo.owner, repo.repo, se)
	case repo.ref == "":
		return info.DefaultBranch, fmt.Errorf("the default branch %q of %s/%s has no commit: %w", info.DefaultBranch, repo.owner, repo.repo, se)
	default:
		return "", fmt.Errorf("ref %q not found in %s/%s; give a branch, tag or commit SHA that exists (the default branch is %q): %w", repo.ref, repo.owner, repo.repo, info.DefaultBranch, se)
	}
}

// content fetches one blob: from the raw-content host when configured, else
// through the git/blobs API (base64).
func (g *GitHub) content(ctx context.Context, repo ghRepo, commit string, e treeEntry) ([]byte, bool, error) {
	if g.rm.raw != nil {
		u := g.rm.raw.String() + "/" + url.PathEscape(repo.owner) + "/" + url.PathEscape(repo.repo) + "/" + commit + "/" + escapeSegments(e.Path)
		resp, err := g.rm.get(ctx, u, nil, http.StatusOK)
		if err != nil {
			return nil, false, err
		}
		defer resp.Body.Close()
		return g.rm.readBody(resp.Body)
	}
	var blob struct {
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	}
	if err := g.rm.getJSON(ctx, g.apiURL(repo, "git/blobs/"+e.SHA), &blob); err != nil {
		return nil, false, err
	}
	if blob.Encoding != "base64" {
		return []byte(blob.Content), int64(len(blob.Content)) > g.rm.maxFile(), nil
	}
	data, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\n", "", "\r", "").Replace(blob.Content))
	if err != nil {
		return nil, false, fmt.Errorf("decode blob %s: %w", e.SHA, err)
	}
	return data, int64(len(data)) > g.rm.maxFile(), nil
}

// escapeSegments escapes each segment of a slash path, keeping the slashes
// (a branch "feature/x", a file "docs/a b.md").
func escapeSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// fetchOrdered fetches items with up to workers requests at a time and
// hands each result to use in the items' order, on the calling goroutine.
// At most 2*workers results wait in memory.
func fetchOrdered[T any](ctx context.Context, items []T, workers int,
	get func(context.Context, T) ([]byte, bool, error),
	use func(item T, data []byte, tooLarge bool, err error) error) error {
	type result struct {
		data     []byte
		tooLarge bool
		err      error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]chan result, len(items))
	sem := make(chan struct{}, workers)
	launched := 0
	launch := func(upto int) {
		for ; launched < len(items) && launched < upto; launched++ {
			ch := make(chan result, 1)
			results[launched] = ch
			item := items[launched]
			go func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				if ctx.Err() != nil {
					ch <- result{err: ctx.Err()}
					return
				}
				d, big, err := get(ctx, item)
				ch <- result{d, big, err}
			}()
		}
	}
	for i := range items {
		launch(i + 2*workers)
		var res result
		select {
		case res = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		results[i] = nil
		if err := ctx.Err(); err != nil {
			return err
		}
		if errors.Is(res.err, context.Canceled) || errors.Is(res.err, context.DeadlineExceeded) {
			return res.err
		}
		var rl *rateLimitError
		if errors.As(res.err, &rl) {
			return res.err
		}
		if err := use(items[i], res.data, res.tooLarge, res.err); err != nil {
			return err
		}
	}
	return nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs of strings and maps are marshalled
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
