package mcpserver

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/httpguard"
	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// httpSession connects an SDK client to f's server over streamable HTTP,
// sending token.
func httpSession(t *testing.T, f *fixture, opt HTTPOptions, token string) *mcp.ClientSession {
	t.Helper()
	ts := httptest.NewServer(f.srv.Handler(opt))
	t.Cleanup(ts.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: ts.URL + Path, HTTPClient: &http.Client{Transport: httpguardtest.Bearer(token, nil)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callText calls a tool and returns its first text and whether it failed.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return text(res), res.IsError
}

// TestDotfilesRefusedOverMCP: an MCP client (an agent a page or passage may
// steer) can neither index a dotfile or dot-folder nor read one the user
// indexed from the command line, by tool or resource.
func TestDotfilesRefusedOverMCP(t *testing.T) {
	f := newFixture(t, Options{})
	const secret = "sk-neighbour-must-not-read"
	for name, body := range map[string]string{".env": "API_KEY=" + secret + "\n", ".ssh/id_rsa": "PRIVATE " + secret + "\n", "docs/a.md": "# A\n\nAlpha.\n"} {
		p := filepath.Join(f.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(f.dir, ".env"), filepath.Join(f.dir, "docs", "env.md")); err != nil {
		t.Fatal(err)
	}
	// The user names the key on the command line: their choice.
	cli, err := tools.New(tools.Options{Engine: search.New(f.store), Roots: []string{f.dir}, Index: index.Options{Chunk: chunk.Options{MaxTokens: 512}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Index(context.Background(), tools.IndexInput{File: filepath.Join(f.dir, ".ssh", "id_rsa")}, nil); err != nil {
		t.Fatal(err)
	}
	cs := httpSession(t, f, HTTPOptions{Token: "t0ken"}, "t0ken")

	for _, p := range []string{".env", filepath.Join(f.dir, ".env"), ".ssh/id_rsa", ".ssh", "docs/env.md", "**/.env", ".ssh/*"} {
		if msg, isErr := callText(t, cs, ToolIndex, map[string]any{"file": p}); !isErr || !strings.Contains(msg, "--allow-dotfiles") {
			t.Errorf("sagasu_index %s: %q (error %v), want a refusal naming --allow-dotfiles", p, msg, isErr)
		}
	}
	if msg, isErr := callText(t, cs, ToolIndex, map[string]any{"files": []string{"docs"}}); isErr {
		t.Fatalf("sagasu_index docs: %s", msg)
	}
	srcs, err := f.store.Sources(context.Background(), store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var key string
	for _, s := range srcs {
		if strings.HasSuffix(s.URI, "env.md") {
			t.Errorf("the walk of docs indexed %s, a link to .env", s.URI)
		}
		if strings.HasSuffix(s.URI, "id_rsa") {
			key = s.ID
		}
	}
	for _, ref := range []string{key, ".ssh/id_rsa", "id_rsa"} {
		if msg, isErr := callText(t, cs, ToolGet, map[string]any{"source": ref}); !isErr || strings.Contains(msg, secret) || !strings.Contains(msg, "--allow-dotfiles") {
			t.Errorf("sagasu_get %s: %.200q (error %v), want a refusal", ref, msg, isErr)
		}
	}
	if res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tools.SourceURI(key)}); err == nil {
		t.Errorf("resource %s read: %.200v", tools.SourceURI(key), res.Contents[0].Text)
	}
	resp, err := search.New(f.store).Search(context.Background(), search.Request{Query: "PRIVATE", K: 5, Mode: search.ModeKeyword})
	if err != nil || len(resp.Hits) == 0 {
		t.Fatalf("the key's chunks: %v", err)
	}
	uri := "sagasu://chunk/" + strconv.FormatInt(resp.Hits[0].Chunk.ID, 10)
	if res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Errorf("resource %s read: %.200v", uri, res.Contents[0].Text)
	}

	// The user may allow dotfiles for this server.
	open := newFixture(t, Options{AllowDotfiles: true})
	if err := os.WriteFile(filepath.Join(open.dir, ".env"), []byte("A=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, isErr := callText(t, httpSession(t, open, HTTPOptions{Token: "t"}, "t"), ToolIndex, map[string]any{"file": ".env"}); isErr {
		t.Errorf("with AllowDotfiles, sagasu_index .env: %s", msg)
	}
}

// post sends one JSON-RPC message to h and returns the status and body.
func post(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	code, _, b := httpguardtest.PostMCP(t, url, "", token, body)
	return code, b
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestHTTPNeedsToken: the HTTP transport answers nobody without a token,
// unless told to serve without one.
func TestHTTPNeedsToken(t *testing.T) {
	f := newFixture(t, Options{})
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	for _, tc := range []struct {
		name string
		opt  HTTPOptions
		send string
		want int
	}{
		{"no token configured", HTTPOptions{}, "", http.StatusUnauthorized},
		{"no token configured, one sent", HTTPOptions{}, "x", http.StatusUnauthorized},
		{"none sent", HTTPOptions{Token: "s3cret"}, "", http.StatusUnauthorized},
		{"wrong", HTTPOptions{Token: "s3cret"}, "s3cre", http.StatusUnauthorized},
		{"right", HTTPOptions{Token: "s3cret"}, "s3cret", http.StatusOK},
		{"NoToken", HTTPOptions{NoToken: true}, "", http.StatusOK},
	} {
		ts := httptest.NewServer(f.srv.protect(ok, tc.opt))
		code, body := post(t, ts.URL, tc.send, initialize)
		ts.Close()
		if code != tc.want || code == http.StatusUnauthorized && !strings.Contains(body, "Authorization: Bearer") {
			t.Errorf("%s: HTTP %d %q, want %d", tc.name, code, body, tc.want)
		}
	}
	// The real handler, as `sagasu mcp --http` serves it.
	ts := httptest.NewServer(f.srv.Handler(HTTPOptions{}))
	defer ts.Close()
	if code, _ := post(t, ts.URL+Path, "", initialize); code != http.StatusUnauthorized {
		t.Errorf("initialize without a token: HTTP %d, want 401", code)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := f.srv.ServeHTTP(context.Background(), ln, HTTPOptions{}); err == nil || !strings.Contains(err.Error(), "--no-token") {
		t.Errorf("ServeHTTP without a token: %v, want a refusal naming --no-token", err)
	}
}

// TestHTTPCaps: a body over MaxBodyBytes gets 413, requests past
// MaxInFlight 429 at once, and a client that stalls is cut off.
func TestHTTPCaps(t *testing.T) {
	f := newFixture(t, Options{})
	ts := httptest.NewServer(f.srv.Handler(HTTPOptions{Token: "t"}))
	defer ts.Close()
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", MaxBodyBytes) + `"}}`
	if code, body := post(t, ts.URL+Path, "t", big); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "4 MiB") {
		t.Errorf("a body over 4 MiB: HTTP %d %.200s, want 413 naming the limit", code, body)
	}

	// One slot, held by a request (an open event stream, say).
	entered, release := make(chan struct{}), make(chan struct{})
	hold := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})
	held := httptest.NewServer(f.srv.protect(hold, HTTPOptions{Token: "t", MaxInFlight: 1}))
	defer held.Close()
	first := make(chan int, 1)
	go func() { code, _ := post(t, held.URL, "t", "{}"); first <- code }()
	<-entered
	if code, body := post(t, held.URL, "t", "{}"); code != http.StatusTooManyRequests || !strings.Contains(body, "limit") {
		t.Errorf("a request while the one slot is held: HTTP %d %.200s, want 429", code, body)
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("the request that held the slot: HTTP %d", code)
	}

	short := HTTPOptions{Token: "t", Timeouts: httpguard.Timeouts{ReadHeader: 100 * time.Millisecond, Read: 200 * time.Millisecond}}
	for _, slowHeaders := range []bool{true, false} {
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		httpguardtest.SlowClientIsCut(t, func(ln net.Listener) { done <- f.srv.ServeHTTP(ctx, ln, short) }, slowHeaders)
		stop()
		<-done
	}
}
