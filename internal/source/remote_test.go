package source

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

func TestRegistryPicksLoaderByForm(t *testing.T) {
	reg := DefaultRegistry(Options{})
	cases := map[string]string{
		"github:owner/repo":                                    "github",
		"https://github.com/owner/repo":                        "github",
		"https://www.github.com/owner/repo/tree/main/docs":     "github",
		"gist:abc123":                                          "gist",
		"https://gist.github.com/user/abc123":                  "gist",
		"https://example.com/docs/guide":                       "web",
		"http://example.com/":                                  "web",
		"https://raw.githubusercontent.com/o/r/main/README.md": "web",
		"docs/":          "files",
		"README.md":      "files",
		"-":              "files",
		"githubnotes.md": "files",
	}
	for in, want := range cases {
		l, err := reg.For(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, l.Name(), in)
	}
}

func TestParseGitHub(t *testing.T) {
	cases := []struct {
		in                     string
		owner, repo, ref, path string
		key                    string
	}{
		{"github:acme/docs", "acme", "docs", "", "", "github:acme/docs"},
		{"github:acme/docs@v1.2", "acme", "docs", "v1.2", "", "github:acme/docs@v1.2"},
		{"github:acme/docs@main/docs/a.md", "acme", "docs", "main", "docs/a.md", "github:acme/docs@main/docs/a.md"},
		{"github:acme/docs/docs/**/*.md", "acme", "docs", "", "docs/**/*.md", "github:acme/docs/docs/**/*.md"},
		{"github:acme/docs@feature%2Fx/src", "acme", "docs", "feature/x", "src", "github:acme/docs@feature%2Fx/src"},
		{"https://github.com/acme/docs.git", "acme", "docs", "", "", "github:acme/docs"},
		{"https://github.com/acme/docs/tree/v2/guide/", "acme", "docs", "v2", "guide", "github:acme/docs@v2/guide"},
		{"https://github.com/acme/docs/blob/main/README.md", "acme", "docs", "main", "README.md", "github:acme/docs@main/README.md"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			g, err := parseGitHub(tc.in)
			require.NoError(t, err)
			assert.Equal(t, ghRepo{tc.owner, tc.repo, tc.ref, tc.path}, g)
			assert.Equal(t, tc.key, g.key())
		})
	}
	for _, bad := range []string{
		"github:", "github:acme", "github:acme/docs@", "github:-x-/docs", "github:acme/docs/../../etc",
		"https://github.com/acme", "https://github.com/acme/docs/issues/3", "https://github.com/acme/docs/tree",
		"github:acme/docs@a..b", "github:acme/docs/[", "gist:../x",
	} {
		t.Run(bad, func(t *testing.T) {
			err := Check([]string{bad})
			require.Error(t, err)
			assert.Contains(t, err.Error(), bad)
		})
	}
}

func TestGitHubFiltersLikeLocalFolders(t *testing.T) {
	g := NewGitHub(Options{Exclude: []string{"drafts", "*.tmp", "docs/old/**"}})
	repo := ghRepo{owner: "o", repo: "r"}
	cases := map[string]string{
		"README.md":           "",
		"docs/a.md":           "",
		".env":                "hidden file",
		".github/ci.yml":      "hidden directory (name it in the path to include it)",
		"node_modules/x/i.js": "node_modules directories are always skipped",
		"a/.git/config":       ".git directories are always skipped",
		"drafts/a.md":         `matches exclude pattern "drafts"`,
		"x/notes.tmp":         `matches exclude pattern "*.tmp"`,
		"docs/old/a.md":       `matches exclude pattern "docs/old/**"`,
		"docs/older/a.md":     "",
	}
	for p, want := range cases {
		assert.Equal(t, want, g.ignored(repo, p), p)
	}
	// A path the input names is entered even when hidden.
	assert.Empty(t, g.ignored(ghRepo{owner: "o", repo: "r", path: ".github"}, ".github/ci.yml"))
	assert.Empty(t, g.ignored(ghRepo{owner: "o", repo: "r", path: ".env"}, ".env"))
	assert.Empty(t, g.ignored(ghRepo{owner: "o", repo: "r", path: "**/.github/*.yml"}, "a/.github/ci.yml"))
}

func TestHTMLToMarkdown(t *testing.T) {
	src := `<html><head><title> The  Title </title><script>alert(1)</script></head><body>
<header>Site header</header><nav><ul><li>Menu</li></ul></nav>
<article><h1>Main <a href="#x">heading</a></h1>
<p>First   paragraph
with <em>emphasis</em> and <code>code()</code>.</p>
<p># not a heading</p>
<ol><li>one</li><li>two<ul><li>nested</li></ul></li></ol>
<table><tr><th>Key</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
<h2>Code</h2><pre>if x:
    print("` + "```" + `")</pre>
<h7>not a tag</h7>
</article><aside>Related links</aside><footer>Footer</footer></body></html>`
	md, title := HTMLToMarkdown(src)
	assert.Equal(t, "The Title", title)
	want := "# Main heading\n\n" +
		"First paragraph with emphasis and `code()`.\n\n" +
		"\\# not a heading\n\n" +
		"1. one\n2. two\n  - nested\n\n" +
		"Key | Value\na | 1\n\n" +
		"## Code\n\n" +
		"````\nif x:\n    print(\"```\")\n````\n\n" +
		"not a tag\n"
	assert.Equal(t, want, md)

	chunks, err := chunk.Split(doc.Document{URI: "u", Format: doc.FormatMarkdown, Content: md}, chunk.Options{MinTokens: -1})
	require.NoError(t, err)
	var paths []string
	for _, c := range chunks {
		paths = append(paths, c.HeadingPath())
	}
	assert.Equal(t, []string{"Main heading", "Main heading > Code"}, paths)
}

func TestPageKind(t *testing.T) {
	cases := []struct {
		ct, path string
		want     doc.Format
		bad      bool
	}{
		{"text/html; charset=utf-8", "/", "html", false},
		{"text/markdown", "/x", doc.FormatMarkdown, false},
		{"text/plain", "/README.md", doc.FormatMarkdown, false},
		{"text/plain", "/notes", doc.FormatText, false},
		{"", "/main.go", doc.FormatGo, false},
		{"application/json", "/api", doc.FormatText, false},
		{"image/png", "/a.png", "", true},
		{"application/pdf", "/a.pdf", "", true},
		{"application/octet-stream", "/a.md", "", true},
	}
	for _, tc := range cases {
		f, err := pageKind(tc.ct, tc.path)
		if tc.bad {
			require.Error(t, err, tc.ct)
			assert.Contains(t, err.Error(), "is not text")
			continue
		}
		require.NoError(t, err, tc.ct)
		assert.Equal(t, tc.want, f, tc.ct)
	}
}

// memRun is a Run over an in-memory index, for loader tests.
func memRun(emitted map[string]doc.Document, kept map[string]bool, state map[string]string) *Run {
	return &Run{
		Emit:   func(d doc.Document) error { emitted[d.URI] = d; return nil },
		Keep:   func(uri string) { kept[uri] = true },
		Stored: func(uri string) bool { _, ok := emitted[uri]; return ok || kept[uri] },
		State:  func(key string) string { return state[key] },
	}
}

func TestWebPlainAndMarkdownKeptAsIs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".md") {
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
			if r.Header.Get("If-Modified-Since") != "" {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			_, _ = w.Write([]byte("# Notes\n\n## One\n\ntext\n"))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("just words\n"))
	}))
	defer srv.Close()
	w := NewWeb(Options{Remote: Remote{AllowPrivate: true}})
	emitted, kept, state := map[string]doc.Document{}, map[string]bool{}, map[string]string{}
	r := memRun(emitted, kept, state)
	out, err := w.Load(context.Background(), srv.URL+"/notes.md", r)
	require.NoError(t, err)
	d := emitted[srv.URL+"/notes.md"]
	assert.Equal(t, "# Notes\n\n## One\n\ntext\n", d.Content)
	assert.Equal(t, doc.FormatMarkdown, d.Format)
	assert.Equal(t, "Notes", d.Title)
	assert.Contains(t, out.State, "Mon, 02 Jan 2006")

	// Last-Modified is sent back as If-Modified-Since; 304 keeps the page.
	state[out.StateKey] = out.State
	_, err = w.Load(context.Background(), srv.URL+"/notes.md", r)
	require.NoError(t, err)
	assert.True(t, kept[srv.URL+"/notes.md"])

	_, err = w.Load(context.Background(), srv.URL+"/plain", r)
	require.NoError(t, err)
	assert.Equal(t, "just words\n", emitted[srv.URL+"/plain"].Content)
	assert.Equal(t, doc.FormatText, emitted[srv.URL+"/plain"].Format)
}

func TestRemoteCapsFilesPerSource(t *testing.T) {
	b := budget{maxFiles: 2, maxBytes: 100}
	require.NoError(t, b.add(10))
	require.NoError(t, b.add(10))
	err := b.add(10)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 2 files")
	b = budget{maxFiles: 10, maxBytes: 15}
	require.NoError(t, b.add(10))
	assert.ErrorContains(t, b.add(10), "more than 15 bytes")
}

func TestRateLimitMessage(t *testing.T) {
	rm := newRemote(Options{})
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	rm.now = func() time.Time { return now }
	resp := &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{}}
	resp.Header.Set("X-RateLimit-Remaining", "0")
	resp.Header.Set("X-RateLimit-Reset", "1767272400") // 13:00 UTC
	wait, limited := rm.rateLimited(resp)
	require.True(t, limited)
	err := &rateLimitError{reset: now.Add(wait), in: wait}
	assert.Contains(t, err.Error(), "resets at 13:00:01 UTC")
	assert.Contains(t, err.Error(), "GITHUB_TOKEN")

	resp = &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"7"}}}
	wait, limited = rm.rateLimited(resp)
	assert.True(t, limited)
	assert.Equal(t, 7*time.Second, wait)

	resp = &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{"X-Ratelimit-Remaining": {"12"}}}
	_, limited = rm.rateLimited(resp)
	assert.False(t, limited, "a 403 with requests left is a permission error, not a rate limit")
}

func TestWebDecodesDeclaredCharsets(t *testing.T) {
	// "検索の設定" in Shift_JIS and EUC-JP, and "café" in Windows-1252.
	sjis := "<html><head><meta charset=\"shift_jis\"><title>t</title></head><body><h1>\x8c\x9f\x8d\xf5\x82\xcc\x90\xdd\x92\xe8</h1></body></html>"
	eucjp := "\xb8\xa1\xba\xf7\xa4\xce\xc0\xdf\xc4\xea\n"
	latin := "caf\xe9\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sjis":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(sjis))
		case "/euc":
			w.Header().Set("Content-Type", "text/plain; charset=EUC-JP")
			_, _ = w.Write([]byte(eucjp))
		default:
			w.Header().Set("Content-Type", "text/plain; charset=windows-1252")
			_, _ = w.Write([]byte(latin))
		}
	}))
	defer srv.Close()
	w := NewWeb(Options{Remote: Remote{AllowPrivate: true}})
	emitted := map[string]doc.Document{}
	r := memRun(emitted, map[string]bool{}, map[string]string{})
	for _, p := range []string{"/sjis", "/euc", "/latin"} {
		_, err := w.Load(context.Background(), srv.URL+p, r)
		require.NoError(t, err, p)
	}
	assert.Equal(t, "# 検索の設定\n", emitted[srv.URL+"/sjis"].Content)
	assert.Equal(t, "検索の設定\n", emitted[srv.URL+"/euc"].Content)
	assert.Equal(t, "café\n", emitted[srv.URL+"/latin"].Content)
}
