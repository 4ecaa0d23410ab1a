package index_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/source/githubtest"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// remoteOpts points the loaders at the fake GitHub. The fake serves on
// 127.0.0.1, so internal addresses are allowed here; the guard itself is
// tested with AllowPrivate off below and in package fetch.
func remoteOpts(gh *githubtest.Server) index.Options {
	return index.Options{Source: source.Options{
		MaxFileSize: 4096,
		Remote: source.Remote{
			AllowPrivate: true,
			GitHubAPIURL: gh.API,
			GitHubRawURL: gh.Raw,
		},
	}}
}

func repoFiles() map[string]string {
	return map[string]string{
		"README.md":                "# Acme docs\n\nStart here.\n\n## Install\n\nRun the installer.\n",
		"docs/guide.md":            "# Guide\n\n## Routing\n\nRoutes map paths to pages.\n",
		"src/main.go":              "package main\n\nfunc main() {}\n",
		".github/workflows/ci.yml": "on: push\n",
		"node_modules/x/index.js":  "module.exports = 1\n",
		".env":                     "SECRET=1\n",
		"logo.png":                 "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
		"big.txt":                  strings.Repeat("large ", 1000),
	}
}

func uris(t *testing.T, s store.Store) []string {
	t.Helper()
	srcs, err := s.Sources(context.Background(), store.ListOptions{})
	require.NoError(t, err)
	var out []string
	for _, src := range srcs {
		out = append(out, src.URI)
	}
	return out
}

func skips(rep index.Report) map[string]source.SkipReason {
	out := map[string]source.SkipReason{}
	for _, s := range rep.Skipped {
		out[s.Path] = s.Reason
	}
	return out
}

func TestGitHubRepositoryIsIndexedIncrementally(t *testing.T) {
	ctx := context.Background()
	gh := githubtest.New(t)
	gh.Push("acme/docs", "main", repoFiles())
	s := open(t)
	ix := index.New(s, remoteOpts(gh))

	rep, err := ix.Run(ctx, []string{"github:acme/docs"})
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Added)
	assert.Equal(t, []string{"github:acme/docs/README.md", "github:acme/docs/docs/guide.md", "github:acme/docs/src/main.go"}, uris(t, s))
	assert.Equal(t, map[string]source.SkipReason{
		"github:acme/docs/logo.png": source.SkipBinary,
		"github:acme/docs/big.txt":  source.SkipTooLarge,
	}, skips(rep), "binary and oversized files are skipped with a reason, like local ones")
	src, err := s.SourceByURI(ctx, "github:acme/docs/README.md")
	require.NoError(t, err)
	assert.Equal(t, doc.TypeGitHub, src.Type)
	assert.Equal(t, doc.FormatMarkdown, src.Format)
	assert.Equal(t, "Acme docs", src.Title)
	c := gh.Counts()
	assert.Equal(t, 1, c["commit"])
	assert.Equal(t, 1, c["tree"])
	assert.Equal(t, 4, c["raw"], "three texts and the binary are fetched; the oversized file is judged by the tree's size")

	// Unchanged: one request resolves the ref, nothing else is fetched.
	gh.ResetCounts()
	rep, err = ix.Run(ctx, []string{"github:acme/docs"})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"commit": 1}, gh.Counts())
	assert.Equal(t, 3, rep.Unchanged)
	assert.Zero(t, rep.Added+rep.Updated+rep.Removed)
	assert.Len(t, rep.Skipped, 2, "skips are reported again without fetching")

	// A new commit: only changed and new blobs are fetched, deleted files removed.
	files := repoFiles()
	files["docs/guide.md"] = "# Guide\n\n## Routing\n\nRoutes map paths to pages, now with params.\n"
	files["docs/new.md"] = "# New page\n\nFresh.\n"
	delete(files, "src/main.go")
	gh.Push("acme/docs", "main", files)
	gh.ResetCounts()
	rep, err = ix.Run(ctx, []string{"github:acme/docs"})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"commit": 1, "tree": 1, "raw": 2}, gh.Counts())
	assert.Equal(t, 1, rep.Added)
	assert.Equal(t, 1, rep.Updated)
	assert.Equal(t, 1, rep.Unchanged)
	assert.Equal(t, 1, rep.Removed)
	assert.Equal(t, []string{"github:acme/docs/README.md", "github:acme/docs/docs/guide.md", "github:acme/docs/docs/new.md"}, uris(t, s))

	// A larger --max-file-size on the same commit lists the tree again and
	// fetches the file that no longer is too large (and the skipped binary).
	opt := remoteOpts(gh)
	opt.Source.MaxFileSize = 1 << 20
	gh.ResetCounts()
	rep, err = index.New(s, opt).Run(ctx, []string{"github:acme/docs"})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"commit": 1, "tree": 1, "raw": 2}, gh.Counts())
	assert.Equal(t, 1, rep.Added)
	assert.Equal(t, 3, rep.Unchanged)
	assert.Contains(t, uris(t, s), "github:acme/docs/big.txt")
}

func TestGitHubRefsPathsAndURLForms(t *testing.T) {
	ctx := context.Background()
	gh := githubtest.New(t)
	v1 := gh.Push("acme/docs", "main", repoFiles())
	gh.Tag("acme/docs", "v1", v1)
	files := repoFiles()
	files["docs/guide.md"] = "# Guide v2\n"
	gh.Push("acme/docs", "main", files)
	gh.Push("acme/docs", "feature/x", map[string]string{"docs/f.md": "# F\n"})

	cases := []struct {
		input string
		want  []string
	}{
		{"github:acme/docs@v1/docs", []string{"github:acme/docs@v1/docs/guide.md"}},
		{"https://github.com/acme/docs/tree/v1/docs", []string{"github:acme/docs@v1/docs/guide.md"}},
		{"https://github.com/acme/docs/blob/main/src/main.go", []string{"github:acme/docs@main/src/main.go"}},
		{"github:acme/docs/**/*.md", []string{"github:acme/docs/README.md", "github:acme/docs/docs/guide.md"}},
		{"github:acme/docs@" + v1 + "/README.md", []string{"github:acme/docs@" + v1 + "/README.md"}},
		{"github:acme/docs/.github/workflows", []string{"github:acme/docs/.github/workflows/ci.yml"}},
		{"github:acme/docs@feature%2Fx/docs", []string{"github:acme/docs@feature%2Fx/docs/f.md"}},
	}
	for _, tc := range cases {
		// sqlite takes a "%" in the temp dir's name for an escape
		t.Run(strings.ReplaceAll(tc.input, "%", "_"), func(t *testing.T) {
			s := open(t)
			_, err := index.New(s, remoteOpts(gh)).Run(ctx, []string{tc.input})
			require.NoError(t, err)
			assert.Equal(t, tc.want, uris(t, s))
		})
	}

	// The tag still reads the old content; the branch the new one.
	s := open(t)
	_, err := index.New(s, remoteOpts(gh)).Run(ctx, []string{"github:acme/docs@v1/docs", "github:acme/docs@main/docs"})
	require.NoError(t, err)
	for uri, want := range map[string]string{"github:acme/docs@v1/docs/guide.md": "Guide", "github:acme/docs@main/docs/guide.md": "Guide v2"} {
		src, err := s.SourceByURI(ctx, uri)
		require.NoError(t, err)
		assert.Equal(t, want, src.Title)
	}
}

func TestGitHubDefaultBranchByNameWhenHEADIsRefused(t *testing.T) {
	gh := githubtest.New(t)
	gh.Push("acme/docs", "trunk", map[string]string{"a.md": "# A\n"})
	gh.RefuseHEAD = true
	s := open(t)
	rep, err := index.New(s, remoteOpts(gh)).Run(context.Background(), []string{"github:acme/docs"})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Added)
	assert.Equal(t, map[string]int{"commit": 2, "repo": 1, "tree": 1, "raw": 1}, gh.Counts())
}

func TestGitHubBlobsAPIWhenNoRawHost(t *testing.T) {
	ctx := context.Background()
	gh := githubtest.New(t)
	gh.Push("acme/docs", "main", repoFiles())
	opt := remoteOpts(gh)
	opt.Source.Remote.GitHubRawURL = "" // GitHub Enterprise without a raw host
	s := open(t)
	rep, err := index.New(s, opt).Run(ctx, []string{"github:acme/docs/docs"})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Added)
	assert.Equal(t, 1, gh.Counts()["blob"])
	assert.Zero(t, gh.Counts()["raw"])
	src, err := s.SourceByURI(ctx, "github:acme/docs/docs/guide.md")
	require.NoError(t, err)
	content, err := s.Content(ctx, src.ID)
	require.NoError(t, err)
	assert.Equal(t, repoFiles()["docs/guide.md"], content, "base64 blobs decode to the file")
}

func TestGitHubBadInputKeepsWhatIsIndexed(t *testing.T) {
	ctx := context.Background()
	gh := githubtest.New(t)
	gh.Push("acme/docs", "main", repoFiles())
	gh.Push("acme/secret", "main", map[string]string{"a.md": "# A\n"})
	gh.SetPrivate("acme/secret")
	gh.Token = "t0ken-value"
	s := open(t)
	_, err := index.New(s, remoteOpts(gh)).Run(ctx, []string{"github:acme/docs"})
	require.NoError(t, err)
	before := uris(t, s)

	cases := []struct {
		input string
		want  []string
	}{
		{"github:acme/nope", []string{"github:acme/nope", "repository acme/nope not found", "GITHUB_TOKEN"}},
		{"github:acme/secret", []string{"github:acme/secret", "not found", "set GITHUB_TOKEN"}},
		{"github:acme/docs@nope", []string{"github:acme/docs@nope", `ref "nope" not found`, `default branch is "main"`}},
		{"gist:doesnotexist1", []string{"gist:doesnotexist1", "not found", "check the ID"}},
		{"github:acme", []string{`"github:acme"`, "github:owner/repo"}},
		{"github:acme/docs@bad..ref", []string{"not a valid git ref"}},
	}
	for _, tc := range cases {
		t.Run(tc.input, func(t *testing.T) {
			rep, err := index.New(s, remoteOpts(gh)).Run(ctx, []string{tc.input})
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Zero(t, rep.Removed)
			assert.Equal(t, before, uris(t, s), "a failed load removes nothing")
		})
	}

	// With the token the private repository loads, and the token appears in
	// no message.
	opt := remoteOpts(gh)
	opt.Source.Remote.GitHubToken = "t0ken-value"
	rep, err := index.New(s, opt).Run(ctx, []string{"github:acme/secret", "github:acme/nope"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "t0ken-value")
	assert.Contains(t, err.Error(), "check that GITHUB_TOKEN can read it")
	_ = rep
	_, err = index.New(s, opt).Run(ctx, []string{"github:acme/secret"})
	require.NoError(t, err)
	assert.Contains(t, uris(t, s), "github:acme/secret/a.md")

	// A rate limit that resets far away fails with when to retry; the
	// repository's documents stay.
	files := repoFiles()
	files["docs/guide.md"] = "# changed\n"
	gh.Push("acme/docs", "main", files)
	gh.LimitAfter(2, time.Now().Add(time.Hour)) // commit and tree pass, content is refused
	rep, err = index.New(s, remoteOpts(gh)).Run(ctx, []string{"github:acme/docs"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rate limit")
	assert.Contains(t, err.Error(), "retry then")
	assert.Contains(t, err.Error(), "github:acme/docs")
	assert.Zero(t, rep.Removed)
	for _, u := range before {
		assert.Contains(t, uris(t, s), u)
	}
}

func TestGitHubRateLimitResetSoonIsWaitedFor(t *testing.T) {
	ctx := context.Background()
	gh := githubtest.New(t)
	gh.Push("acme/docs", "main", map[string]string{"a.md": "# A\n"})
	gh.LimitAfterFor(1, time.Second)
	opt := remoteOpts(gh)
	opt.Source.Remote.RateLimitWait = 30 * time.Second
	s := open(t)
	rep, err := index.New(s, opt).Run(ctx, []string{"github:acme/docs"})
	require.NoError(t, err, "a reset within RateLimitWait is waited for")
	assert.Equal(t, 1, rep.Added)
	assert.Positive(t, gh.Counts()["limited"])
}

func TestGistWithTruncatedFile(t *testing.T) {
	ctx := context.Background()
	gh := githubtest.New(t)
	long := "# Notes\n\n" + strings.Repeat("A long line about gists. ", 20) + "\n\n## End\n\nLast words.\n"
	gh.SetGist("aa11bb22", map[string]string{"notes.md": long, "todo.txt": "buy milk\n"}, 100)
	s := open(t)
	ix := index.New(s, remoteOpts(gh))
	rep, err := ix.Run(ctx, []string{"https://gist.github.com/someone/aa11bb22"})
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Added)
	assert.Equal(t, []string{"gist:aa11bb22/notes.md", "gist:aa11bb22/todo.txt"}, uris(t, s))
	src, err := s.SourceByURI(ctx, "gist:aa11bb22/notes.md")
	require.NoError(t, err)
	assert.Equal(t, doc.TypeGist, src.Type)
	content, err := s.Content(ctx, src.ID)
	require.NoError(t, err)
	assert.Equal(t, long, content, "a truncated file is fetched whole from raw_url")
	assert.Equal(t, 1, gh.Counts()["gist-raw"])

	gh.ResetCounts()
	rep, err = ix.Run(ctx, []string{"gist:aa11bb22"})
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Unchanged)
	assert.Equal(t, map[string]int{"gist": 1}, gh.Counts(), "an unchanged gist answers 304 and nothing else is fetched")

	gh.SetGist("aa11bb22", map[string]string{"todo.txt": "buy milk and eggs\n"}, 100)
	rep, err = ix.Run(ctx, []string{"gist:aa11bb22"})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Updated)
	assert.Equal(t, 1, rep.Removed)
	assert.Equal(t, []string{"gist:aa11bb22/todo.txt"}, uris(t, s))
}

// page serves HTML with ETag support and counts full and 304 answers.
type page struct {
	mu          sync.Mutex
	full, notMo int
}

func (p *page) handler(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch r.URL.Path {
		case "/image.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("\x89PNG\x00\x00"))
			return
		case "/huge":
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<p>"+strings.Repeat("x", 10000)+"</p>")
			return
		case "/moved":
			http.Redirect(w, r, "/guide", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			p.notMo++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		p.full++
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, body)
	}
}

const guideHTML = `<!doctype html><html><head><title>Acme Guide</title>
<style>body{color:red}</style><script>var tracking = "do not index";</script></head>
<body><nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav>
<main>
<h1>Guide</h1><p>Welcome to the guide.</p>
<h2>Install</h2><p>Run <code>acme install</code> to set it up.</p>
<ul><li>Linux</li><li>macOS</li></ul>
<h3>Proxy settings</h3><p>Set HTTPS_PROXY before installing.</p>
<h2>Usage</h2><pre>acme run --fast
acme stop</pre>
</main><footer>Copyright Acme</footer></body></html>`

func TestWebPageBecomesHeadingPathChunks(t *testing.T) {
	ctx := context.Background()
	var p page
	srv := httptest.NewServer(p.handler(guideHTML))
	defer srv.Close()
	opt := index.Options{Source: source.Options{MaxFileSize: 4096, Remote: source.Remote{AllowPrivate: true}}}
	opt.Chunk = chunk.Options{MinTokens: -1} // one chunk per section, however small
	s := open(t)
	ix := index.New(s, opt)
	url := srv.URL + "/moved#top"
	rep, err := ix.Run(ctx, []string{url})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Added)
	src, err := s.SourceByURI(ctx, srv.URL+"/moved")
	require.NoError(t, err, "the URI is the URL as given, without its fragment")
	assert.Equal(t, doc.TypeURL, src.Type)
	assert.Equal(t, doc.FormatMarkdown, src.Format)
	assert.Equal(t, "Acme Guide", src.Title)
	content, err := s.Content(ctx, src.ID)
	require.NoError(t, err)
	assert.NotContains(t, content, "tracking")
	assert.NotContains(t, content, "Blog")
	assert.NotContains(t, content, "Copyright")
	assert.Contains(t, content, "`acme install`")

	chunks, err := s.Chunks(ctx, src.ID)
	require.NoError(t, err)
	paths := map[string]string{}
	for _, c := range chunks {
		for _, needle := range []string{"Welcome", "Run", "HTTPS_PROXY", "acme run --fast", "macOS"} {
			if strings.Contains(c.Text, needle) {
				paths[needle] = c.HeadingPath()
			}
		}
	}
	assert.Equal(t, map[string]string{
		"Welcome":         "Guide",
		"Run":             "Guide > Install",
		"macOS":           "Guide > Install",
		"HTTPS_PROXY":     "Guide > Install > Proxy settings",
		"acme run --fast": "Guide > Usage",
	}, paths)

	// The second run sends the ETag back; 304 means unchanged.
	rep, err = ix.Run(ctx, []string{url})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Unchanged)
	assert.Equal(t, 1, p.full)
	assert.Equal(t, 1, p.notMo)

	// Binary and oversized pages are skipped with a reason.
	rep, err = ix.Run(ctx, []string{srv.URL + "/image.png", srv.URL + "/huge"})
	require.NoError(t, err)
	assert.Equal(t, map[string]source.SkipReason{srv.URL + "/image.png": source.SkipBinary, srv.URL + "/huge": source.SkipTooLarge}, skips(rep))
	for _, sk := range rep.Skipped {
		if sk.Reason == source.SkipBinary {
			assert.Contains(t, sk.Err.Error(), `content type "image/png" is not text`)
		}
	}
}

func TestRemoteFetchRefusesInternalAddresses(t *testing.T) {
	ctx := context.Background()
	var p page
	srv := httptest.NewServer(p.handler(guideHTML))
	defer srv.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/guide", http.StatusFound)
	}))
	defer redirector.Close()
	s := open(t)
	// Index something first: failures below must not remove it.
	_, err := index.New(s, index.Options{Source: source.Options{Remote: source.Remote{AllowPrivate: true}}}).Run(ctx, []string{srv.URL + "/guide"})
	require.NoError(t, err)

	// "docs.example" resolves to a public-looking address that the dialer
	// hook connects to the redirector; its redirect to 127.0.0.1 is refused.
	remote := source.Remote{}
	remote.Fetch.LookupNetIP = func(_ context.Context, _, host string) ([]netipAddr, error) {
		return lookup(host)
	}
	remote.Fetch.Dial = dialVia(redirector.Listener.Addr().String())
	cases := []struct{ input, want string }{
		{srv.URL + "/guide", "loopback"},
		{"http://docs.example/start", "loopback"},
		{"http://intranet.example/", "private"},
		{"http://metadata.example/latest/meta-data", "cloud metadata"},
	}
	for _, tc := range cases {
		t.Run(tc.input, func(t *testing.T) {
			rep, err := index.New(s, index.Options{Source: source.Options{Remote: remote}}).Run(ctx, []string{tc.input})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "--allow-private")
			assert.Contains(t, err.Error(), strings.TrimSuffix(tc.input, "/"))
			assert.Zero(t, rep.Removed)
			assert.Equal(t, []string{srv.URL + "/guide"}, uris(t, s))
		})
	}
}

func TestRemoteTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	opt := index.Options{Source: source.Options{Remote: source.Remote{AllowPrivate: true}}}
	opt.Source.Remote.Fetch.Timeout = 300 * time.Millisecond
	_, err := index.New(open(t), opt).Run(context.Background(), []string{srv.URL + "/slow"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), srv.URL+"/slow")
	assert.Contains(t, err.Error(), "Timeout")
}

// TestMeasureGitHubRepository indexes a fake repository of a few hundred
// files twice and reports the requests and times of each run.
func TestMeasureGitHubRepository(t *testing.T) {
	for _, latency := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run(fmt.Sprintf("latency=%s", latency), func(t *testing.T) { measureGitHub(t, latency) })
	}
}

func measureGitHub(t *testing.T, latency time.Duration) {
	ctx := context.Background()
	gh := githubtest.New(t)
	gh.Latency = latency
	files := map[string]string{}
	for i := 0; i < 300; i++ {
		files[fmt.Sprintf("docs/section%02d/page%03d.md", i%20, i)] = fmt.Sprintf("# Page %d\n\n## Part\n\nText of page %d about topic %d.\n", i, i, i%7)
	}
	gh.Push("acme/big", "main", files)
	s, err := sqlite.Open(ctx, t.TempDir()+"/m.db", sqlite.Options{Create: true})
	require.NoError(t, err)
	defer s.Close()
	ix := index.New(s, remoteOpts(gh))

	start := time.Now()
	rep, err := ix.Run(ctx, []string{"github:acme/big"})
	require.NoError(t, err)
	first, firstTook := gh.Counts(), time.Since(start)
	assert.Equal(t, 300, rep.Added)
	assert.Equal(t, map[string]int{"commit": 1, "tree": 1, "raw": 300}, first)

	gh.ResetCounts()
	start = time.Now()
	rep, err = ix.Run(ctx, []string{"github:acme/big"})
	require.NoError(t, err)
	second, secondTook := gh.Counts(), time.Since(start)
	assert.Equal(t, 300, rep.Unchanged)
	assert.Equal(t, map[string]int{"commit": 1}, second, "an unchanged repository makes no content requests")

	files["docs/section00/page000.md"] = "# Page 0\n\nRewritten.\n"
	gh.Push("acme/big", "main", files)
	gh.ResetCounts()
	start = time.Now()
	rep, err = ix.Run(ctx, []string{"github:acme/big"})
	require.NoError(t, err)
	third, thirdTook := gh.Counts(), time.Since(start)
	assert.Equal(t, 1, rep.Updated)
	assert.Equal(t, map[string]int{"commit": 1, "tree": 1, "raw": 1}, third, "one changed file, one content request")

	t.Logf("300-file repository, %s per request: first run %s requests in %s; unchanged second run %s requests in %s; one file changed: %s requests in %s", latency,
		countString(first), firstTook.Round(time.Millisecond), countString(second), secondTook.Round(time.Millisecond),
		countString(third), thirdTook.Round(time.Millisecond))
}

func countString(m map[string]int) string {
	var parts []string
	total := 0
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
		total += v
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, " "))
}

type netipAddr = netip.Addr

// lookup is a resolver for the SSRF tests: names that look public resolve
// to internal addresses, and docs.example to a public-looking one.
func lookup(host string) ([]netip.Addr, error) {
	m := map[string]string{"docs.example": "203.0.113.7", "intranet.example": "10.1.2.3", "metadata.example": "169.254.169.254"}
	a, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// dialVia connects the public-looking 203.0.113.0/24 to a local server.
func dialVia(local string) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if strings.HasPrefix(address, "203.0.113.") {
			address = local
		}
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}
}

func TestGitHubCapsAndLinks(t *testing.T) {
	ctx := context.Background()
	gh := githubtest.New(t)
	gh.Push("acme/docs", "main", map[string]string{
		"a.md": "# A\n", "b.md": "# B\n", "c.md": "# C\n",
		"alias.link": "a.md", // the fake serves *.link as a symbolic link (mode 120000)
	})
	s := open(t)
	rep, err := index.New(s, remoteOpts(gh)).Run(ctx, []string{"github:acme/docs"})
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Added)
	assert.Equal(t, map[string]source.SkipReason{"github:acme/docs/alias.link": source.SkipIgnored}, skips(rep))

	// Over the file cap: the load fails naming the source and what to do,
	// and the repository's stored documents stay.
	gh.Push("acme/docs", "main", map[string]string{"a.md": "# A2\n", "b.md": "# B2\n", "c.md": "# C2\n"})
	opt := remoteOpts(gh)
	opt.Source.Remote.MaxFiles = 2
	rep, err = index.New(s, opt).Run(ctx, []string{"github:acme/docs"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "github:acme/docs")
	assert.Contains(t, err.Error(), "more than 2 files")
	assert.Zero(t, rep.Removed)
	assert.Len(t, uris(t, s), 3)
}
