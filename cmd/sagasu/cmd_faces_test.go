package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
)

// TestQueryFacesAgree runs the same queries through `sagasu query --json`,
// through sagasu_query of `sagasu mcp` (an MCP client over its standard
// input and output) and through the page's API of `sagasu serve` (POST
// /api/ops/sagasu_query): one operation behind all three, so each answers
// the very same JSON.
func TestQueryFacesAgree(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	db := filepath.Join(dir, ".sagasu", "sagasu.db")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb strings.Builder
		code := run(ctx, []string{"--db", db, "mcp", "--root", dir, "--no-cache"}, inR, outW, &errb, []string{"HOME=" + dir})
		outW.Close()
		if code != 0 {
			t.Errorf("sagasu mcp: exit %d: %s", code, errb.String())
		}
		done <- code
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "faces-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		inW.Close()
		<-done
	}()

	// The page, as its user starts it: the link on stdout holds the token.
	serveCtx, stopServe := context.WithCancel(ctx)
	pageR, pageW := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		var errb strings.Builder
		run(serveCtx, []string{"--db", db, "serve", "--listen", "127.0.0.1:0"}, strings.NewReader(""), pageW, &errb, []string{"HOME=" + dir})
		pageW.Close()
	}()
	defer func() { stopServe(); <-served }()
	link, _ := httpguardtest.Watch(t, pageR, regexp.MustCompile(`^http://127\.0\.0\.1:\d+/#token=\S+`))
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	page := func(args map[string]any) map[string]any {
		body, _ := json.Marshal(args)
		req, _ := http.NewRequest(http.MethodPost, "http://"+u.Host+"/api/ops/sagasu_query", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+httpguardtest.LinkToken(u))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Sagasu", "1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("page API: HTTP %d, %v %v", res.StatusCode, err, out)
		}
		return out
	}

	for _, q := range []string{"dynamic routes", "テーマ", "deploying notes", "guide pages"} {
		var cli map[string]any
		out := mustRun(t, dir, "query", "--json", "-k", "5", "--mode", "keyword", q)
		if err := json.Unmarshal([]byte(out), &cli); err != nil {
			t.Fatal(err)
		}
		args := map[string]any{"query": q, "k": 5, "mode": "keyword"}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sagasu_query", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("sagasu_query %q: %v %v", q, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var viaMCP map[string]any
		if err := json.Unmarshal(raw, &viaMCP); err != nil {
			t.Fatal(err)
		}
		viaPage := page(args)
		if rs, _ := cli["results"].([]any); len(rs) == 0 {
			t.Fatalf("%q: the CLI found nothing: %s", q, out)
		}
		if !reflect.DeepEqual(cli, viaMCP) || !reflect.DeepEqual(cli, viaPage) {
			a, _ := json.Marshal(cli)
			b, _ := json.Marshal(viaPage)
			t.Errorf("%q: the faces differ\nCLI  %s\nMCP  %s\npage %s", q, a, raw, b)
		}
	}
}
