package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestQueryFacesAgree runs the same queries through `sagasu query --json`
// and through sagasu_query of `sagasu mcp` (an MCP client over its standard
// input and output): one toolset behind both, so the same chunks come back
// in the same order with the same scores.
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

	for _, q := range []string{"dynamic routes", "テーマ", "deploying notes", "guide pages"} {
		cli := query(t, dir, "-k", "5", "--mode", "keyword", q)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sagasu_query", Arguments: map[string]any{"query": q, "k": 5, "mode": "keyword"}})
		if err != nil || res.IsError {
			t.Fatalf("sagasu_query %q: %v %v", q, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var got queryJSON
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if len(cli.Results) == 0 || len(got.Results) != len(cli.Results) {
			t.Fatalf("%q: the CLI found %d results, MCP %d", q, len(cli.Results), len(got.Results))
		}
		for i, c := range cli.Results {
			m := got.Results[i]
			if c.ChunkID != m.ChunkID || c.Heading != m.Heading || c.Source.URI != m.Source.URI || c.Text != m.Text ||
				math.Abs(c.Score-m.Score) > 1e-4 {
				t.Errorf("%q result %d: CLI %d %s %q %.4f, MCP %d %s %q %.4f", q, i+1,
					c.ChunkID, c.Source.URI, c.Heading, c.Score, m.ChunkID, m.Source.URI, m.Heading, m.Score)
			}
		}
	}
}
