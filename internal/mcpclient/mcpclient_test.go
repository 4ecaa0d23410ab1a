package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverModeEnv); mode != "" {
		runTestServer(mode)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// stdioConfig runs this test binary as a stdio MCP server.
func stdioConfig(t *testing.T, mode string, timeout time.Duration) ServerConfig {
	t.Helper()
	return ServerConfig{
		Command: os.Args[0],
		Args:    []string{"-test.run=^$"},
		Env:     map[string]string{serverModeEnv: mode, markerEnv: filepath.Join(t.TempDir(), "crashed")},
		Timeout: timeout,
	}
}

func newManager(t *testing.T, servers map[string]ServerConfig, opt Options) *Manager {
	t.Helper()
	m, err := New(servers, opt)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Close()) })
	return m
}

func call(t *testing.T, m *Manager, server, tool, args string) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return m.Call(ctx, server, tool, json.RawMessage(args))
}

func pidOf(t *testing.T, m *Manager, server string) int {
	t.Helper()
	r, err := call(t, m, server, "pid", "")
	require.NoError(t, err)
	pid, err := strconv.Atoi(r.Text)
	require.NoError(t, err)
	return pid
}

func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestNewRejectsBadConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  ServerConfig
		want string
	}{
		{"neither", ServerConfig{}, "set command"},
		{"both", ServerConfig{Command: "x", URL: "http://h"}, "not both"},
		{"bad url", ServerConfig{URL: "localhost:8931/mcp"}, "http:// or https://"},
		{"other name", ServerConfig{Name: "other", Command: "x"}, "differs from its key"},
		{"negative timeout", ServerConfig{Command: "x", Timeout: -time.Second}, "negative"},
		{"headers on command", ServerConfig{Command: "x", Headers: map[string]string{"A": "b"}}, "headers apply to a url"},
		{"args on url", ServerConfig{URL: "http://h/mcp", Args: []string{"-v"}}, "args, env and pass_env apply to a command"},
		{"pass_env on url", ServerConfig{URL: "http://h/mcp", PassEnv: []string{"KEY"}}, "pass_env apply to a command"},
		{"bad pass_env", ServerConfig{Command: "x", PassEnv: []string{"A=B"}}, "not a variable name"},
		{"empty tool", ServerConfig{Command: "x", Tools: []string{""}}, "empty name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(map[string]ServerConfig{"web": tc.cfg}, Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "web")
		})
	}
	for _, name := range []string{"a__b", "1st", "has space", "dot.ted", ""} {
		_, err := New(map[string]ServerConfig{name: {Command: "x"}}, Options{})
		assert.ErrorContains(t, err, "server name", name)
	}
}

func TestConfigFromYAML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sagasu.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
mcp_servers:
  playwright:
    command: node
    args: [cli.js, --headless]
    env: {DEBUG: "pw:mcp"}
    pass_env: [PW_TOKEN]
    tools: [browser_navigate, browser_snapshot]
    browser: true
    timeout: 90s
  remote:
    url: http://127.0.0.1:8931/mcp
    headers: {Authorization: Bearer abc}
`), 0o600))
	k := koanf.New(".")
	require.NoError(t, k.Load(file.Provider(path), yaml.Parser()))
	var servers map[string]ServerConfig
	require.NoError(t, k.Unmarshal("mcp_servers", &servers))
	assert.Equal(t, ServerConfig{Command: "node", Args: []string{"cli.js", "--headless"}, Env: map[string]string{"DEBUG": "pw:mcp"},
		PassEnv: []string{"PW_TOKEN"}, Tools: []string{"browser_navigate", "browser_snapshot"}, Browser: true, Timeout: 90 * time.Second}, servers["playwright"])
	assert.Equal(t, ServerConfig{URL: "http://127.0.0.1:8931/mcp", Headers: map[string]string{"Authorization": "Bearer abc"}}, servers["remote"])
	m, err := New(servers, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"playwright", "remote"}, m.Servers())
	require.NoError(t, m.Close())
}

func TestFuncNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	cases := []struct{ server, tool, want string }{
		{"playwright", "browser_navigate", "playwright__browser_navigate"},
		{"fs", "read.file v2", "fs__read_file_v2"},
		{"web", "ページ", "web_____"},
		{"web", long, ("web__" + long)[:64]},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, FuncName(tc.server, tc.tool), tc.tool)
	}

	m, err := New(map[string]ServerConfig{"fs": {Command: "x"}}, Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	// Two tools whose names differ only in characters a function name cannot
	// hold get different function names, and each maps back to its own tool.
	m.mu.Lock()
	a, b, again := m.funcName("fs", "read.file"), m.funcName("fs", "read file"), m.funcName("fs", "read.file")
	m.mu.Unlock()
	assert.Equal(t, "fs__read_file", a)
	assert.Equal(t, "fs__read_file_2", b)
	assert.Equal(t, a, again)
	for name, tool := range map[string]string{a: "read.file", b: "read file"} {
		server, got, ok := m.Resolve(name)
		assert.True(t, ok)
		assert.Equal(t, "fs", server)
		assert.Equal(t, tool, got)
	}
	_, _, ok := m.Resolve("fs__unknown")
	assert.False(t, ok)
	_, err = m.CallFunc(context.Background(), "fs__unknown", nil)
	assert.ErrorContains(t, err, "list the tools first")
}

func TestStdioToolsAndCalls(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"local": stdioConfig(t, "tools", 20*time.Second)}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, m.Connect(ctx))

	tools, err := m.Tools(ctx)
	require.NoError(t, err)
	byName := map[string]Tool{}
	for _, tool := range tools {
		byName[tool.Name] = tool
		assert.Equal(t, "local", tool.Server)
	}
	require.Contains(t, byName, "click")
	assert.Equal(t, "local__click", byName["click"].FuncName)
	assert.Equal(t, "Clicks an element.", byName["click"].Description)
	// The schema is the server's, argument names and descriptions included.
	var schema struct {
		Type       string
		Properties map[string]struct{ Type, Description string }
		Required   []string
	}
	require.NoError(t, json.Unmarshal(byName["click"].InputSchema, &schema))
	assert.Equal(t, "object", schema.Type)
	assert.Equal(t, "Exact target element reference from the page snapshot", schema.Properties["target"].Description)
	assert.ElementsMatch(t, []string{"element", "target"}, schema.Required)

	cases := []struct {
		tool, args, want string
		isError          bool
	}{
		{"echo", `{"text":"こんにちは"}`, "こんにちは", false},
		{"click", `{"element":"Next link","target":"e12"}`, "clicked e12", false},
		{"fail", ``, "the page is gone", true},
	}
	for _, tc := range cases {
		r, err := call(t, m, "local", tc.tool, tc.args)
		require.NoError(t, err, tc.tool)
		assert.Equal(t, tc.want, r.Text, tc.tool)
		assert.Equal(t, tc.want, r.Full, tc.tool)
		assert.Equal(t, tc.isError, r.IsError, tc.tool)
		assert.False(t, r.Truncated || r.Restarted, tc.tool)
	}

	// The same call through its function name.
	r, err := m.CallFunc(ctx, "local__echo", json.RawMessage(`{"text":"via func"}`))
	require.NoError(t, err)
	assert.Equal(t, "via func", r.Text)

	r, err = call(t, m, "local", "image", "")
	require.NoError(t, err)
	assert.Equal(t, "took a screenshot", r.Text)
	assert.Equal(t, 1, r.Images)

	_, err = call(t, m, "local", "echo", `["not", "an object"]`)
	assert.ErrorContains(t, err, "must be a JSON object")
	_, err = call(t, m, "local", "no_such_tool", "")
	assert.ErrorContains(t, err, `"local"`)
	assert.ErrorContains(t, err, "no_such_tool")
	_, err = call(t, m, "elsewhere", "echo", "")
	assert.ErrorContains(t, err, `MCP server "elsewhere" is not configured (configured: local)`)

	// Concurrent calls share the one process.
	var wg sync.WaitGroup
	pids := make([]string, 8)
	for i := range pids {
		wg.Go(func() {
			r, err := call(t, m, "local", "pid", "")
			assert.NoError(t, err)
			pids[i] = r.Text
		})
	}
	wg.Wait()
	for _, pid := range pids {
		assert.Equal(t, pids[0], pid)
	}
}

func TestHungToolTimesOut(t *testing.T) {
	// The timeout bounds starting the server (this test binary, run again)
	// and the echo below as well as the hung call. At 700ms the test
	// depended on the start and the echo being quick (a loaded machine,
	// -race); at 5s only the call that hangs meets it.
	m := newManager(t, map[string]ServerConfig{"slow": stdioConfig(t, "tools", 5*time.Second)}, Options{})
	_, err := call(t, m, "slow", "hang", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `MCP server "slow"`)
	assert.Contains(t, err.Error(), "no answer within 5s")
	assert.Contains(t, err.Error(), "mcp_servers.slow.timeout")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	// The server still answers other calls.
	r, err := call(t, m, "slow", "echo", `{"text":"still here"}`)
	require.NoError(t, err)
	assert.Equal(t, "still here", r.Text)
}

func TestDeadServerIsRestartedOnce(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"flaky": stdioConfig(t, "tools", 10*time.Second)}, Options{})
	before := pidOf(t, m, "flaky")
	r, err := call(t, m, "flaky", "crash-once", "")
	require.NoError(t, err)
	assert.True(t, r.Restarted)
	after := pidOf(t, m, "flaky")
	assert.NotEqual(t, before, after)
	assert.Equal(t, "survived in "+strconv.Itoa(after), r.Text)
	assert.True(t, processGone(before), "the dead server's process is reaped")

	// A server that dies again after its restart is an error that says so.
	_, err = call(t, m, "flaky", "die", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `MCP server "flaky"`)
	assert.Contains(t, err.Error(), "the process exited (exit status 4)")
	assert.Contains(t, err.Error(), "fatal: out of memory")
	assert.Contains(t, err.Error(), "died again after a restart")

	// The next call starts it afresh.
	r, err = call(t, m, "flaky", "echo", `{"text":"back"}`)
	require.NoError(t, err)
	assert.Equal(t, "back", r.Text)
	assert.False(t, r.Restarted, "a server that was left down is started, not restarted")

	// A server that exited between calls is started again, and the call says so.
	pid := pidOf(t, m, "flaky")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	s := m.servers["flaky"]
	s.mu.Lock()
	exited := s.conn.proc.exited
	s.mu.Unlock()
	<-exited
	r, err = call(t, m, "flaky", "echo", `{"text":"again"}`)
	require.NoError(t, err)
	assert.Equal(t, "again", r.Text)
	assert.True(t, r.Restarted)
}

func TestGarbageOnStdout(t *testing.T) {
	t.Run("during a call", func(t *testing.T) {
		m := newManager(t, map[string]ServerConfig{"noisy": stdioConfig(t, "tools", 10*time.Second)}, Options{})
		_, err := call(t, m, "noisy", "garbage", "")
		require.Error(t, err)
		assert.Contains(t, err.Error(), `MCP server "noisy"`)
		assert.Contains(t, err.Error(), "not JSON-RPC on stdout")
		assert.Contains(t, err.Error(), "Debugger listening on port 9229")
	})
	t.Run("at start", func(t *testing.T) {
		m := newManager(t, map[string]ServerConfig{"noisy": stdioConfig(t, "garbage-start", 10*time.Second)}, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err := m.Connect(ctx)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `MCP server "noisy"`)
		assert.Contains(t, err.Error(), "not JSON-RPC on stdout")
		assert.Contains(t, err.Error(), "Welcome! Server starting...")
	})
}

func TestMissingCommand(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"gone": {Command: filepath.Join(t.TempDir(), "no-such-server")}}, Options{})
	_, err := call(t, m, "gone", "echo", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `start MCP server "gone"`)
	assert.Contains(t, err.Error(), "mcp_servers.gone.command")
}

func TestCloseEndsProcesses(t *testing.T) {
	m, err := New(map[string]ServerConfig{
		"a": stdioConfig(t, "tools", 10*time.Second),
		"b": stdioConfig(t, "tools", 10*time.Second),
	}, Options{})
	require.NoError(t, err)
	pids := []int{pidOf(t, m, "a"), pidOf(t, m, "b")}
	assert.NotEqual(t, pids[0], pids[1])
	require.NoError(t, m.Close())
	for _, pid := range pids {
		assert.True(t, processGone(pid), "process %d still runs after Close", pid)
	}
	_, err = call(t, m, "a", "echo", "")
	assert.ErrorContains(t, err, "closed")
}

func TestTrimsLargeResults(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"local": stdioConfig(t, "tools", 10*time.Second)}, Options{MaxResultTokens: 300})
	r, err := call(t, m, "local", "big", `{"lines":2000}`)
	require.NoError(t, err)
	assert.True(t, r.Truncated)
	assert.LessOrEqual(t, r.Tokens, 300)
	assert.Greater(t, r.Tokens, 200, "the budget is used, not wasted")
	assert.Greater(t, r.FullTokens, 10*r.Tokens)
	assert.Equal(t, r.Tokens, m.counter.Count(r.Text))
	assert.True(t, strings.HasPrefix(r.Text, "- line 1: "))
	assert.Contains(t, r.Text, "[result cut to fit 300 tokens")
	assert.Contains(t, r.Full, "- line 2000: ")
	head, _, _ := strings.Cut(r.Text, "\n[result cut")
	assert.True(t, strings.HasPrefix(r.Full, strings.TrimSuffix(head, "…")), "Text is the head of Full")

	r, err = call(t, m, "local", "big", `{"lines":5}`)
	require.NoError(t, err)
	assert.False(t, r.Truncated)
	assert.Equal(t, r.Full, r.Text)
}

func TestTrim(t *testing.T) {
	m, err := New(nil, Options{})
	require.NoError(t, err)
	c := m.counter
	long := strings.Repeat("東京の天気は晴れです。\n", 400)
	cases := []struct {
		name, in string
		max      int
		cut      bool
	}{
		{"fits", "short text", 100, false},
		{"no budget", long, -1, false},
		{"japanese", long, 500, true},
		{"one line", strings.Repeat("word ", 3000), 400, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, tokens, full, cut := trim(c, tc.in, tc.max)
			assert.Equal(t, tc.cut, cut)
			assert.Equal(t, c.Count(tc.in), full)
			assert.Equal(t, c.Count(text), tokens)
			if !tc.cut {
				assert.Equal(t, tc.in, text)
				return
			}
			assert.LessOrEqual(t, tokens, tc.max)
			head, _, found := strings.Cut(text, "\n[result cut to fit")
			require.True(t, found)
			head = strings.TrimSuffix(head, "…")
			assert.True(t, strings.HasPrefix(tc.in, head))
			assert.NotEmpty(t, head)
		})
	}
}

func TestStreamableHTTP(t *testing.T) {
	srv := newTestServer()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the Manager's Close, which ends the sessions

	m := newManager(t, map[string]ServerConfig{
		"remote":   {URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}, Timeout: 10 * time.Second},
		"stranger": {URL: ts.URL, Timeout: 10 * time.Second},
	}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := m.ServerTools(ctx, "remote")
	require.NoError(t, err)
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = tool.FuncName
	}
	assert.Contains(t, names, "remote__echo")
	assert.Contains(t, names, "remote__click")

	r, err := call(t, m, "remote", "echo", `{"text":"over http"}`)
	require.NoError(t, err)
	assert.Equal(t, "over http", r.Text)
	r, err = call(t, m, "remote", "fail", "")
	require.NoError(t, err)
	assert.True(t, r.IsError)

	all, err := m.Tools(ctx)
	require.Error(t, err, "a server that refuses us is reported")
	assert.Contains(t, err.Error(), `MCP server "stranger"`)
	assert.Contains(t, err.Error(), "Unauthorized")
	assert.Len(t, all, len(tools), "the other server's tools are still listed")
}

// BenchmarkTrim cuts a snapshot-sized result (about 200 KB) to the default
// budget.
func BenchmarkTrim(b *testing.B) {
	m, err := New(nil, Options{})
	require.NoError(b, err)
	var sb strings.Builder
	for i := 0; sb.Len() < 200_000; i++ {
		fmt.Fprintf(&sb, "  - listitem [ref=e%d]:\n    - link \"Story number %d about the harbour\" [ref=e%d] [cursor=pointer]:\n      - /url: /item?id=%d\n", i, i, i+1, i)
	}
	full := sb.String()
	b.ResetTimer()
	for b.Loop() {
		if _, _, _, cut := trim(m.counter, full, DefaultMaxResultTokens); !cut {
			b.Fatal("a 200 KB result was not cut")
		}
	}
}

// TestHeadersNotSentAcrossRedirect: a server that answers 307 to another
// host must not get the configured headers (the Authorization token) sent
// there; the redirect is refused and the error says where it pointed. A
// redirect within the server's own origin is still followed.
func TestHeadersNotSentAcrossRedirect(t *testing.T) {
	srv := newTestServer()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var seen []string // Authorization values the other host received
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(other.Close)
	configured := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/old":
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
		default:
			if r.Header.Get("Authorization") != "Bearer s3cret" {
				http.Error(w, "who are you?", http.StatusUnauthorized)
				return
			}
			handler.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(configured.Close)

	headers := map[string]string{"Authorization": "Bearer s3cret"}
	m := newManager(t, map[string]ServerConfig{
		"moved": {URL: configured.URL + "/moved", Headers: headers, Timeout: 10 * time.Second},
		"old":   {URL: configured.URL + "/old", Headers: headers, Timeout: 10 * time.Second},
	}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err := m.ServerTools(ctx, "moved")
	mu.Lock()
	for _, a := range seen {
		assert.Empty(t, a, "the other host received the configured Authorization header")
	}
	mu.Unlock()
	require.Error(t, err, "a redirect to another host is not followed")
	assert.Contains(t, err.Error(), other.URL, "the error names where the server pointed")
	assert.Contains(t, err.Error(), "mcp_servers.moved.url")

	tools, err := m.ServerTools(ctx, "old")
	require.NoError(t, err, "a redirect within the same origin keeps working, with its headers")
	assert.NotEmpty(t, tools)
}
