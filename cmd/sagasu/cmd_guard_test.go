package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// privateKey is what a neighbour must never read through sagasu's faces.
const privateKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nneighbour-must-not-read-this\n-----END OPENSSH PRIVATE KEY-----\n"

// homeWithKey is a home folder as a user has one: notes, and an SSH key
// that the user indexed on purpose from the command line (their choice,
// which the faces must not hand out).
func homeWithKey(t *testing.T, bin string) string {
	t.Helper()
	home := t.TempDir()
	write(t, filepath.Join(home, ".ssh", "id_rsa"), privateKey)
	write(t, filepath.Join(home, "notes", "a.md"), "# Notes\n\nThe deploy runs on Fridays.\n")
	cmd := exec.Command(bin, "--db", filepath.Join(home, ".sagasu", "sagasu.db"), "index", "notes", ".ssh/id_rsa")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	return home
}

// startServer starts bin with args in dir, as a user would in a shell whose
// HOME is dir, and returns the first line of its output (stdout or stderr)
// that matches re, with everything it printed.
func startServer(t *testing.T, bin, dir string, re *regexp.Regexp, args ...string) (string, *httpguardtest.Output) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "SAGASU_LLM=", "SAGASU_SERVE_TOKEN=", "SAGASU_MCP_TOKEN=")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait(); pw.Close() })
	m, out := httpguardtest.Watch(t, pr, re)
	return m, out
}

// do sends one request and returns its status and body.
func do(t *testing.T, c *http.Client, method, u, body string, header map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestServeOnLoopbackNeedsToken is the attack a local neighbour made on
// `sagasu serve` as started by default: index ~/.ssh/id_rsa through the
// page's API, then read it back. Without the link's token every call is
// refused; with it, the key is still refused as a dotfile.
func TestServeOnLoopbackNeedsToken(t *testing.T) {
	testenv.Short(t, "builds the binary")
	bin := buildBinary(t)
	home := homeWithKey(t, bin)
	link, out := startServer(t, bin, home, regexp.MustCompile(`http://127\.0\.0\.1:\d+/\S*`),
		"--db", filepath.Join(home, ".sagasu", "sagasu.db"), "serve", "--listen", "127.0.0.1:0")
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + u.Host
	write := map[string]string{"X-Sagasu": "1", "Content-Type": "application/json"}

	// The neighbour knows the port, not the token.
	if code, body := do(t, noRedirects, "POST", base+"/api/index", `{"path":".ssh/id_rsa"}`, write); code != http.StatusUnauthorized {
		t.Errorf("POST /api/index without the token: HTTP %d %s, want 401", code, body)
	}
	for _, p := range []string{"/api/source?ref=.ssh/id_rsa", "/api/info", "/api/sources", "/api/openapi.json"} {
		code, body := do(t, noRedirects, "GET", base+p, "", nil)
		if code != http.StatusUnauthorized || strings.Contains(body, "neighbour-must-not-read-this") {
			t.Errorf("GET %s without the token: HTTP %d %.200s, want 401", p, code, body)
		}
	}

	// The token rides in the link's fragment, which no request carries;
	// the page's shell loads without it and sets no cookie.
	token := httpguardtest.LinkToken(u)
	if len(token) < 32 || u.RawQuery != "" {
		t.Fatalf("serve printed %q: want a link with a random #token= and no query (output: %s)", link, out)
	}
	res, err := noRedirects.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || len(res.Cookies()) > 0 {
		t.Fatalf("the link answered %d with cookies %+v: want the page and no cookie", res.StatusCode, res.Cookies())
	}
	// A cookie named as the old page named it, holding the right token, is
	// what another service on 127.0.0.1 would have received: it opens nothing.
	stolen := map[string]string{"X-Sagasu": "1", "Cookie": "sagasu_token_" + u.Port() + "=" + token}
	if code, body := do(t, noRedirects, "GET", base+"/api/info", "", stolen); code != http.StatusUnauthorized {
		t.Errorf("GET /api/info with the token in a cookie: HTTP %d %.200s, want 401", code, body)
	}
	withToken := map[string]string{"X-Sagasu": "1", "Content-Type": "application/json", "Authorization": "Bearer " + token}
	if code, body := do(t, noRedirects, "GET", base+"/api/info", "", withToken); code != http.StatusOK {
		t.Errorf("GET /api/info with the token: HTTP %d %s", code, body)
	}

	// Even the user's own page does not index or hand out a dotfile.
	code, body := do(t, noRedirects, "POST", base+"/api/index", `{"path":".ssh/id_rsa"}`, withToken)
	if code != http.StatusForbidden || !strings.Contains(body, "--allow-dotfiles") {
		t.Errorf("POST /api/index .ssh/id_rsa with the token: HTTP %d %s, want 403 naming --allow-dotfiles", code, body)
	}
	if code, body := do(t, noRedirects, "GET", base+"/api/source?ref=.ssh/id_rsa", "", withToken); code != http.StatusForbidden || strings.Contains(body, "neighbour-must-not-read-this") {
		t.Errorf("GET /api/source .ssh/id_rsa with the token: HTTP %d %.200s, want 403", code, body)
	}
	if strings.Contains(out.String(), "neighbour-must-not-read-this") {
		t.Errorf("the server printed the key")
	}
}

// mcpCall posts one JSON-RPC message to a streamable HTTP endpoint and
// returns the status, the session header and the result message (from a
// JSON or an event-stream answer).
func mcpCall(t *testing.T, endpoint, session, token, msg string) (int, string, map[string]any) {
	t.Helper()
	code, session, body := httpguardtest.PostMCP(t, endpoint, session, token, msg)
	var out map[string]any
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			body = d
		}
	}
	_ = json.Unmarshal([]byte(body), &out)
	return code, session, out
}

// mcpSession initialises a session with token ("" sends none).
func mcpSession(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	code, session, _ := mcpCall(t, endpoint, "", token,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"neighbour","version":"1"}}}`)
	if code == http.StatusOK {
		mcpCall(t, endpoint, session, token, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	return code, session
}

// toolText calls a tool and returns its first text and whether it failed.
func toolText(t *testing.T, endpoint, session, token, tool, args string) (string, bool) {
	t.Helper()
	code, _, msg := mcpCall(t, endpoint, session, token, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`)
	if code != http.StatusOK {
		t.Fatalf("%s: HTTP %d", tool, code)
	}
	b, _ := json.Marshal(msg["result"])
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(b, &res)
	if len(res.Content) == 0 {
		t.Fatalf("%s: no content in %v", tool, msg)
	}
	return res.Content[0].Text, res.IsError
}

// TestMCPHTTPOnLoopbackNeedsToken is the same attack through `sagasu mcp
// --http` on loopback: without the printed token nothing is answered; with
// it, sagasu_index and sagasu_get refuse the key as a dotfile.
func TestMCPHTTPOnLoopbackNeedsToken(t *testing.T) {
	testenv.Short(t, "builds the binary")
	bin := buildBinary(t)
	home := homeWithKey(t, bin)
	addr, out := startServer(t, bin, home, regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`),
		"--db", filepath.Join(home, ".sagasu", "sagasu.db"), "mcp", "--tools", "all", "--http", "127.0.0.1:0")

	if code, _ := mcpSession(t, addr, ""); code != http.StatusUnauthorized {
		t.Fatalf("initialize without a token: HTTP %d, want 401", code)
	}
	if code, _ := mcpSession(t, addr, "wrong-token"); code != http.StatusUnauthorized {
		t.Fatalf("initialize with a wrong token: HTTP %d, want 401", code)
	}

	m := out.Wait(t, regexp.MustCompile(`Authorization: Bearer (\S+)`))
	if len(m[1]) < 32 {
		t.Fatalf("sagasu mcp --http printed no bearer token to configure clients with:\n%s", out)
	}
	token := m[1]
	saved, err := os.ReadFile(filepath.Join(home, ".config", "sagasu", "mcp-token"))
	if err != nil || strings.TrimSpace(string(saved)) != token {
		t.Errorf("the token is not kept for the next start in the user's config folder: %v %q", err, saved)
	}
	if fi, err := os.Stat(filepath.Join(home, ".config", "sagasu", "mcp-token")); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("the kept token is %v, want 0600", fi.Mode().Perm())
	}
	code, session := mcpSession(t, addr, token)
	if code != http.StatusOK {
		t.Fatalf("initialize with the token: HTTP %d", code)
	}
	text, isErr := toolText(t, addr, session, token, "sagasu_index", `{"file":".ssh/id_rsa"}`)
	if !isErr || !strings.Contains(text, "--allow-dotfiles") {
		t.Errorf("sagasu_index .ssh/id_rsa: %q (error %v), want a refusal naming --allow-dotfiles", text, isErr)
	}
	if text, isErr := toolText(t, addr, session, token, "sagasu_get", `{"source":".ssh/id_rsa"}`); !isErr || strings.Contains(text, "neighbour-must-not-read-this") {
		t.Errorf("sagasu_get .ssh/id_rsa: %.200q (error %v), want a refusal", text, isErr)
	}
}
