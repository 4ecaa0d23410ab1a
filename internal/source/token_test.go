package source

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/source/fetch"
	"github.com/sagasu-dev/sagasu/internal/source/githubtest"
)

const testToken = "ghp_t0ken-that-must-stay-with-github"

// authLog records the Authorization header of every request a handler saw.
type authLog struct {
	mu   sync.Mutex
	seen map[string]string // path -> Authorization ("" when none)
}

func (l *authLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		if l.seen == nil {
			l.seen = map[string]string{}
		}
		l.seen[r.URL.Path] = r.Header.Get("Authorization")
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// leaks returns the paths that received the token.
func (l *authLog) leaks() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for p, a := range l.seen {
		if strings.Contains(a, testToken) {
			out = append(out, p)
		}
	}
	return out
}

func (l *authLog) requests() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// page serves a small markdown page at every path.
var page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/markdown")
	_, _ = w.Write([]byte("# A page\n\ntext\n"))
})

// TestWebLoaderNeverSendsTheGitHubToken: the web loader shares the GitHub
// loaders' client, but a web page gets no token: not on the configured
// API's own host, not on another host, and not over plain http to a host
// named like GitHub's.
func TestWebLoaderNeverSendsTheGitHubToken(t *testing.T) {
	var sameHost, otherHost, plainGitHub authLog
	api := httptest.NewServer(sameHost.wrap(page))
	defer api.Close()
	other := httptest.NewServer(otherHost.wrap(page))
	defer other.Close()
	fake := httptest.NewServer(plainGitHub.wrap(page))
	defer fake.Close()

	ctx := context.Background()
	load := func(remote Remote, u string) {
		t.Helper()
		emitted := map[string]doc.Document{}
		_, err := NewWeb(Options{Remote: remote}).Load(ctx, u, memRun(emitted, map[string]bool{}, map[string]string{}))
		require.NoError(t, err, u)
		require.Contains(t, emitted, u, "the page was loaded")
	}

	// The API configured on a test host (as SAGASU_GITHUB_API_URL does):
	// a web page on the same host, and one on another host.
	configured := Remote{AllowPrivate: true, GitHubToken: testToken, GitHubAPIURL: api.URL + "/api/v3"}
	load(configured, api.URL+"/notes.md")
	load(configured, other.URL+"/notes.md")
	assert.Empty(t, sameHost.leaks(), "a web page on the API's host received GITHUB_TOKEN")
	assert.Empty(t, otherHost.leaks(), "a web page on another host received GITHUB_TOKEN")

	// The default GitHub hosts, asked for over plain http: the names
	// resolve to a public-looking address that the test dials on loopback.
	local := fake.Listener.Addr().String()
	defaults := Remote{GitHubToken: testToken, Fetch: fetch.Options{
		LookupNetIP: func(_ context.Context, _, host string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("203.0.113.80")}, nil
		},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, local)
		},
	}}
	load(defaults, "http://raw.githubusercontent.com/acme/docs/main/README.md")
	load(defaults, "http://api.github.com/repos/acme/docs/readme.md")
	assert.Equal(t, 2, plainGitHub.requests())
	assert.Empty(t, plainGitHub.leaks(), "GITHUB_TOKEN went over plain http to a host named like GitHub's")
}

// TestGitHubTokenNotFollowingRedirects: the API the user configured gets the
// token; when it redirects to another origin (here: the same IP address on
// another port, which Go's client counts as the same domain), the token
// stays behind.
func TestGitHubTokenNotFollowingRedirects(t *testing.T) {
	gh := githubtest.New(t)
	gh.Push("acme/docs", "main", map[string]string{"README.md": "# Acme\n\nhello\n"})
	var behind authLog
	gh.Config.Handler = behind.wrap(gh.Config.Handler)
	var front authLog
	redirector := httptest.NewServer(front.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, gh.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})))
	defer redirector.Close()

	g := NewGitHub(Options{Remote: Remote{AllowPrivate: true, GitHubToken: testToken, GitHubAPIURL: redirector.URL + "/api/v3"}})
	emitted := map[string]doc.Document{}
	_, err := g.Load(context.Background(), "github:acme/docs", memRun(emitted, map[string]bool{}, map[string]string{}))
	require.NoError(t, err)
	assert.Contains(t, emitted, "github:acme/docs/README.md")

	assert.NotEmpty(t, front.leaks(), "the configured API gets the token (the user named it)")
	assert.NotZero(t, behind.requests())
	assert.Empty(t, behind.leaks(), "GITHUB_TOKEN followed a redirect to another origin")
}

// TestSendsToken is the rule itself: https to the configured API or raw
// origin; plain http only when the user configured that very origin.
func TestSendsToken(t *testing.T) {
	cases := []struct {
		api, raw, url string
		want          bool
	}{
		{"", "", "https://api.github.com/repos/a/b", true},
		{"", "", "https://raw.githubusercontent.com/a/b/main/x.md", true},
		{"", "", "http://api.github.com/repos/a/b", false},
		{"", "", "http://raw.githubusercontent.com/a/b/main/x.md", false},
		{"", "", "https://api.github.com:8443/repos/a/b", false},
		{"", "", "https://gist.githubusercontent.com/a/raw/x", false},
		{"", "", "https://api.github.com.evil.example/repos", false},
		{"", "", "https://example.com/", false},
		{"https://ghe.example.com/api/v3", "", "https://ghe.example.com/api/v3/repos/a/b", true},
		{"https://ghe.example.com/api/v3", "", "https://ghe.example.com:443/x", true},
		{"https://ghe.example.com/api/v3", "", "http://ghe.example.com/api/v3/repos/a/b", false},
		{"https://ghe.example.com/api/v3", "", "https://api.github.com/repos/a/b", false},
		{"http://127.0.0.1:8080/api/v3", "", "http://127.0.0.1:8080/api/v3/repos", true},
		{"http://127.0.0.1:8080/api/v3", "", "http://127.0.0.1:9090/api/v3/repos", false},
		{"http://127.0.0.1:8080/api/v3", "", "https://127.0.0.1:8080/api/v3/repos", false},
	}
	for _, tc := range cases {
		rm := newRemote(Options{Remote: Remote{GitHubToken: testToken, GitHubAPIURL: tc.api, GitHubRawURL: tc.raw}})
		u, err := http.NewRequest(http.MethodGet, tc.url, nil)
		require.NoError(t, err)
		assert.Equal(t, tc.want, rm.sendsToken(u.URL), "API %q, request %s", tc.api, tc.url)
	}
}
