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
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// playwrightServer returns the config of the Playwright MCP server that
// scripts/playwright-mcp.sh installs, or skips the test when it is absent
// (and fails it when CI=true). The marker finds the browser processes the
// server starts, to check that Close ends them.
func playwrightServer(t *testing.T, marker string) ServerConfig {
	t.Helper()
	root, err := repoRoot()
	require.NoError(t, err)
	cfg, err := Playwright(filepath.Join(root, ".tools"), t.TempDir())
	testenv.Need(t, err == nil, fmt.Sprint(err))
	cfg.Name = ""
	cfg.Env["SAGASU_MCPCLIENT_TEST"] = marker
	return cfg
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// site is a small web site of three pages served on 127.0.0.1.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		"/": `<h1>Harbour Library</h1><p>Welcome to the library by the harbour.</p>
<nav><a href="/hours">Opening hours</a> · <a href="/contact">Contact us</a></nav>`,
		"/hours":   `<h1>Opening hours</h1><p>The reading room opens at 09:30 on Saturdays.</p><a href="/">Home</a>`,
		"/contact": `<h1>Contact</h1><p>Write to desk@harbour.example.</p><a href="/">Home</a>`,
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>Harbour Library</title></head><body>%s</body></html>", body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// schemaProps are the properties of a tool's input schema.
type schemaProps struct {
	Properties map[string]struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// propWhere returns the name of the string property whose description
// contains the first of the words that any description contains, so that no
// argument name is hard-coded.
func (s schemaProps) propWhere(words ...string) string {
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, w := range words {
		for _, name := range names {
			p := s.Properties[name]
			if p.Type == "string" && strings.Contains(strings.ToLower(p.Description), w) {
				return name
			}
		}
	}
	return ""
}

var linkRefRE = regexp.MustCompile(`link "Opening hours"[^\n]*\[ref=([^\]\s]+)\]`)

func TestPlaywrightMCP(t *testing.T) {
	marker := fmt.Sprintf("pw-%d-%d", os.Getpid(), time.Now().UnixNano())
	cfg := playwrightServer(t, marker)
	ts := site(t)
	m, err := New(map[string]ServerConfig{"playwright": cfg}, Options{MaxResultTokens: 4000})
	require.NoError(t, err)
	defer func() {
		start := time.Now()
		require.NoError(t, m.Close())
		t.Logf("closed in %s", time.Since(start).Round(time.Millisecond))
		// Close ends the server and the browser it started.
		assert.Empty(t, waitNoProcesses(marker, 10*time.Second), "processes left after Close")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	start := time.Now()
	tools, err := m.Tools(ctx)
	require.NoError(t, err)
	t.Logf("started Playwright MCP and listed %d tools in %s", len(tools), time.Since(start).Round(time.Millisecond))
	schemas := map[string]schemaProps{}
	for _, tool := range tools {
		var s schemaProps
		require.NoError(t, json.Unmarshal(tool.InputSchema, &s), tool.Name)
		schemas[tool.Name] = s
		assert.Equal(t, "playwright__"+tool.Name, tool.FuncName)
	}
	for _, name := range []string{"browser_navigate", "browser_snapshot", "browser_click"} {
		require.Contains(t, schemas, name, "Playwright MCP lists %s", name)
	}

	args := func(v map[string]any) json.RawMessage {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return b
	}
	urlArg := schemas["browser_navigate"].propWhere("url")
	require.NotEmpty(t, urlArg, "browser_navigate has a URL argument")
	start = time.Now()
	r, err := m.CallFunc(ctx, "playwright__browser_navigate", args(map[string]any{urlArg: ts.URL + "/"}))
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)
	t.Logf("navigated in %s", time.Since(start).Round(time.Millisecond))
	procs := processesWith(marker)
	assert.True(t, slices.ContainsFunc(procs, func(p string) bool { return strings.Contains(p, "/chromium") }),
		"the leak check sees the browser the server started: %q", procs)

	r, err = m.Call(ctx, "playwright", "browser_snapshot", nil)
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)
	assert.Contains(t, r.Text, "Harbour Library")
	match := linkRefRE.FindStringSubmatch(r.Text)
	require.NotNil(t, match, "the snapshot names the link's element reference:\n%s", r.Text)
	ref := match[1]

	click := schemas["browser_click"]
	refArg := click.propWhere("element reference", "ref")
	require.NotEmpty(t, refArg, "browser_click has an element reference argument")
	t.Logf("browser_click takes the element reference as %q; the link is %s", refArg, ref)
	clickArgs := map[string]any{refArg: ref}
	if desc := click.propWhere("human-readable"); desc != "" {
		clickArgs[desc] = "Opening hours link"
	}
	for _, req := range click.Required {
		if _, ok := clickArgs[req]; !ok && click.Properties[req].Type == "string" {
			clickArgs[req] = "Opening hours link"
		}
	}
	r, err = m.Call(ctx, "playwright", "browser_click", args(clickArgs))
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)

	r, err = m.Call(ctx, "playwright", "browser_snapshot", nil)
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)
	assert.Contains(t, r.Text, "The reading room opens at 09:30 on Saturdays.")
	assert.Contains(t, r.Full, ts.URL+"/hours")

	// A tool error from the real server is a Result, not a Go error.
	r, err = m.Call(ctx, "playwright", "browser_click", args(map[string]any{refArg: "e99999"}))
	require.NoError(t, err)
	assert.True(t, r.IsError, "clicking a reference that does not exist: %s", r.Text)

	// The server is killed: the next call starts it again (and its browser),
	// and the killed server's browser goes away (checked after Close).
	s := m.servers["playwright"]
	s.mu.Lock()
	pid := s.conn.proc.cmd.Process.Pid
	s.mu.Unlock()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	start = time.Now()
	r, err = m.Call(ctx, "playwright", "browser_navigate", args(map[string]any{urlArg: ts.URL + "/contact"}))
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)
	assert.True(t, r.Restarted)
	t.Logf("restarted after a kill and navigated in %s", time.Since(start).Round(time.Millisecond))
	r, err = m.Call(ctx, "playwright", "browser_snapshot", nil)
	require.NoError(t, err)
	assert.Contains(t, r.Text, "desk@harbour.example")
}

// waitNoProcesses waits up to d for the processes whose environment holds
// marker to end, and returns those that remain.
func waitNoProcesses(marker string, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		left := processesWith(marker)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesWith lists the processes (pid and command) whose environment
// holds marker.
func processesWith(marker string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(env), "SAGASU_MCPCLIENT_TEST="+marker) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found = append(found, fmt.Sprintf("%d %.100s", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	return found
}
