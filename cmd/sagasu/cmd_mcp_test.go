package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
	"github.com/sagasu-dev/sagasu/internal/testenv"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// mcpClients finds the real MCP clients installed by scripts/mcp-clients.sh.
// Without them the test is skipped, except in CI, where it fails.
func mcpClients(t *testing.T) (clients, script string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	clients = filepath.Join(root, ".tools", "mcp-clients")
	_, errSDK := os.Stat(filepath.Join(clients, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	_, errInsp := os.Stat(filepath.Join(clients, "node_modules", "@modelcontextprotocol", "inspector", "package.json"))
	_, errNode := exec.LookPath("node")
	testenv.Need(t, errSDK == nil && errInsp == nil && errNode == nil,
		"the MCP clients (TypeScript SDK, Inspector) are not installed: run scripts/mcp-clients.sh")
	return clients, filepath.Join(root, "internal", "mcpserver", "testdata", "client.mjs")
}

// mcpWorkspace is a folder with an index of a few guides and an unindexed
// corpus large enough to cancel an index run in.
func mcpWorkspace(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	for i := range 6 {
		write(t, filepath.Join(dir, "guide", fmt.Sprintf("sidebar%d.md", i)), fmt.Sprintf(
			"# Sidebar guide %d\n\n## Configure the sidebar\n\nSet the sidebar in config.js with links and groups (%d).\n\n"+
				"## Theme\n\nThe theme layout and colors are set in the theme config (%d).\n", i, i, i))
	}
	write(t, filepath.Join(dir, "guide", "ja.md"), "# サイドバーの設定\n\nサイドバーは設定ファイルで指定します。テーマの設定も同じです。\n")
	para := strings.Repeat("The sidebar configuration option controls navigation and layout. ", 150) + "\n\n"
	for i := range 60 {
		write(t, filepath.Join(dir, "corpus", fmt.Sprintf("f%03d.md", i)), fmt.Sprintf("# Doc %d\n\n%s", i, strings.Repeat(para, 20)))
	}
	cmd := exec.Command(bin, "--db", filepath.Join(dir, ".sagasu", "sagasu.db"), "index", "guide")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	return dir
}

// clientReport is what client.mjs check prints.
type clientReport struct {
	OK          bool            `json:"ok"`
	Checks      []string        `json:"checks"`
	Failures    []string        `json:"failures"`
	AfterCancel json.RawMessage `json:"afterCancel"`
}

func runClient(t *testing.T, clients string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Env = append(os.Environ(), "SAGASU_MCP_CLIENTS="+clients)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

// checkClientRun asserts a client.mjs check run passed and that every
// result it received stayed within its budget, measured here with the
// server's tokenizer.
func checkClientRun(t *testing.T, out []byte, resultsFile string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var rep clientReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("client report: %v\n%s", err, out)
	}
	if !rep.OK || len(rep.Checks) < 60 {
		t.Fatalf("client checks failed (%d run): %s", len(rep.Checks), strings.Join(rep.Failures, "\n"))
	}
	t.Logf("%d client checks passed; index after the cancelled run: %s", len(rep.Checks), rep.AfterCancel)
	raw, err := os.ReadFile(resultsFile)
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		Tool   string          `json:"tool"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(raw, &results); err != nil {
		t.Fatal(err)
	}
	c, err := budget.New(budget.Options{Margin: budget.DefaultMargin})
	if err != nil {
		t.Fatal(err)
	}
	largest := map[string]int{}
	for _, r := range results {
		var res struct {
			IsError bool `json:"isError"`
			SC      struct {
				EstimatedTokens int `json:"estimatedTokens"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			continue
		}
		n := c.Count(string(r.Result))
		largest[r.Tool] = max(largest[r.Tool], n)
		// The client re-encodes what it received without escaping <, > and
		// &, so it can only measure as much as the server did, or less.
		// What the wire adds around the result (the protocol's _meta) is
		// the server's envelope, which every budget keeps free.
		if n > res.SC.EstimatedTokens+tools.Envelope || n > budget.DefaultCap {
			t.Errorf("%s: the client received %d tokens; the server measured %d", r.Tool, n, res.SC.EstimatedTokens)
		}
	}
	t.Logf("largest results as received: %v", largest)
}

func TestMCPWithRealClients(t *testing.T) {
	clients, script := mcpClients(t)
	bin := buildBinary(t)
	dir := mcpWorkspace(t, bin)
	db := filepath.Join(dir, ".sagasu", "sagasu.db")

	t.Run("stdio", func(t *testing.T) {
		results := filepath.Join(t.TempDir(), "results.json")
		server, _ := json.Marshal([]string{bin, "mcp", "--tools", "all", "--db", db})
		out := runClient(t, clients, script, "check", "--stdio", string(server), "--cwd", dir, "--corpus", "corpus", "--out", results)
		checkClientRun(t, out, results)
	})

	// An agent that follows the replies toward a two-part goal, on the
	// default tools: search, evaluate, refine, search, read. client.mjs
	// fails on a reply that contradicts itself (two next steps, a refine
	// with nothing missing, a chunk twice, markup in a heading).
	t.Run("transcript", func(t *testing.T) {
		server, _ := json.Marshal([]string{bin, "mcp", "--db", db})
		out := runClient(t, clients, script, "transcript", "--stdio", string(server), "--cwd", dir,
			"--goal", "configure the sidebar and deploy the site", "--query", "sidebar", "--out", filepath.Join(t.TempDir(), "transcript.json"))
		var rep struct {
			Steps          []string `json:"steps"`
			Contradictions []string `json:"contradictions"`
		}
		if err := json.Unmarshal(out, &rep); err != nil || len(rep.Steps) < 4 || len(rep.Contradictions) > 0 {
			t.Fatalf("transcript: %v %s", err, out)
		}
		t.Logf("steps: %v", rep.Steps)
	})

	t.Run("http", func(t *testing.T) {
		url := startHTTP(t, bin, dir, "--tools", "all", "--db", db, "--token", "s3cret")
		results := filepath.Join(t.TempDir(), "results.json")
		out := runClient(t, clients, script, "check", "--url", url, "--token", "s3cret", "--corpus", "corpus", "--out", results)
		checkClientRun(t, out, results)

		for _, tc := range []struct {
			name   string
			header map[string]string
			want   int
		}{
			{"no token", map[string]string{}, http.StatusUnauthorized},
			{"wrong token", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
			{"foreign origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://evil.example"}, http.StatusForbidden},
			{"rebinding host", map[string]string{"Authorization": "Bearer s3cret", "Host": "evil.example"}, http.StatusForbidden},
		} {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				req.Header.Set(k, v)
				if k == "Host" {
					req.Host = v
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s: HTTP %d, want %d", tc.name, resp.StatusCode, tc.want)
			}
		}
	})

	t.Run("inspector", func(t *testing.T) {
		inspector := filepath.Join(clients, "node_modules", ".bin", "mcp-inspector")
		// Started as a user would, with the token it keeps and prints.
		url, out := startServer(t, bin, dir, regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`), "mcp", "--tools", "all", "--http", "127.0.0.1:0", "--db", db)
		header := "Authorization: Bearer " + printedToken(t, out)
		for _, target := range [][]string{{bin, "mcp", "--tools", "all", "--db", db}, {url, "--transport", "http", "--header", header}} {
			list := inspect(t, inspector, dir, append(append([]string{}, target...), "--method", "tools/list"))
			var tl struct {
				Tools []struct {
					Name         string         `json:"name"`
					OutputSchema map[string]any `json:"outputSchema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(list, &tl); err != nil || len(tl.Tools) != 20 {
				t.Fatalf("inspector tools/list via %v: %v, %d tools\n%s", target, err, len(tl.Tools), list)
			}
			call := inspect(t, inspector, dir, append(append([]string{}, target...), "--method", "tools/call", "--tool-name", "sagasu_search",
				"--tool-arg", "goal=configure the sidebar", "--tool-arg", "query=sidebar", "--tool-arg", `options={"k":3,"detail":"detailed"}`))
			var res struct {
				IsError bool `json:"isError"`
				SC      struct {
					Results []any `json:"results"`
				} `json:"structuredContent"`
			}
			if err := json.Unmarshal(call, &res); err != nil || res.IsError || len(res.SC.Results) != 3 {
				t.Fatalf("inspector tools/call via %v: %v\n%s", target, err, call)
			}
			// Bad arguments: the answer names the argument, what was given
			// and what is allowed.
			for _, bad := range []struct {
				args []string
				want string
			}{
				{[]string{"--tool-name", "sagasu_search", "--tool-arg", "goal=g", "--tool-arg", "query=q", "--tool-arg", `options={"k":-1}`},
					"options.k: got -1; give a whole number from 1 to 10"},
				{[]string{"--tool-name", "sagasu_query", "--tool-arg", "query=q", "--tool-arg", "k=0.5"},
					"k: got 0.5; give a whole number from 1 to 50"},
				{[]string{"--tool-name", "sagasu_list", "--tool-arg", "kind=file"},
					"kind: unknown argument; sagasu_list takes type, glob, limit, cursor"},
				{[]string{"--tool-name", "sagasu_index", "--tool-arg", "file=/nonexistent/secret.md"},
					`file: path "/nonexistent/secret.md" is not inside the allowed roots`},
			} {
				out := inspect(t, inspector, dir, append(append(append([]string{}, target...), "--method", "tools/call"), bad.args...))
				var res struct {
					IsError bool `json:"isError"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				}
				if err := json.Unmarshal(out, &res); err != nil || !res.IsError || len(res.Content) == 0 || !strings.HasPrefix(res.Content[0].Text, bad.want) {
					t.Errorf("inspector %v: %v\n%s\nwant an error starting %q", bad.args, err, out, bad.want)
				}
			}
		}
	})
}

// startHTTP starts `sagasu mcp --http 127.0.0.1:0` in dir, as a user whose
// home is dir would, and returns its URL.
func startHTTP(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	url, _ := startServer(t, bin, dir, regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`), append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	return url
}

// printedToken is the bearer token a server printed for its clients.
func printedToken(t *testing.T, out *httpguardtest.Output) string {
	t.Helper()
	return out.Wait(t, regexp.MustCompile(`Authorization: Bearer ([0-9a-f]{32,})`))[1]
}

func inspect(t *testing.T, inspector, dir string, args []string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, inspector, append([]string{"--cli"}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-inspector --cli %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

func TestMCPRefusesOpenAddressWithoutToken(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := sagasu(t, dir, "", "--db", filepath.Join(dir, "x.db"), "mcp", "--http", "0.0.0.0:0")
	if code != exitUsage || !strings.Contains(errs, "--token") {
		t.Errorf("exit %d, stderr %q: want a usage error asking for --token", code, errs)
	}
	code, _, errs = sagasu(t, dir, "", "--db", filepath.Join(dir, "x.db"), "mcp", "--max-output-tokens", "10")
	if code != exitUsage || !strings.Contains(errs, "at least 1000") {
		t.Errorf("tiny cap: exit %d, stderr %q", code, errs)
	}
}

func TestMCPStdoutIsOnlyProtocol(t *testing.T) {
	dir := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errs strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--db", filepath.Join(dir, "x.db"), "--log-level", "debug", "mcp"}, inR, outW, &errs, nil)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	send := func(msg string) {
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		if !lines.Scan() {
			t.Fatalf("stdout ended early: %v; stderr: %s", lines.Err(), errs.String())
		}
		return lines.Text()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	first := read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sagasu_list","arguments":{}}}`)
	second := read()
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, l := range []string{first, second} {
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			Result  json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil || msg.JSONRPC != "2.0" || msg.Result == nil {
			t.Errorf("stdout line is not a JSON-RPC result: %s", l)
		}
	}
	if lines.Scan() {
		t.Errorf("stdout has more than the two responses: %s", lines.Text())
	}
	if !strings.Contains(second, "estimatedTokens") {
		t.Errorf("the tool call's answer lacks estimatedTokens: %s", second)
	}
	if errs.Len() == 0 {
		t.Error("debug logs did not go to stderr")
	}
}
