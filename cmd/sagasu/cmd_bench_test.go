package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/eval"
)

// TestBenchVectorSection runs `sagasu bench --vectors` without a corpus or
// model: it prints the vector section (and no keyword section) with recall
// of every path against the exact scan.
func TestBenchVectorSection(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	run := func(args ...string) string {
		var out, errb bytes.Buffer
		g := &globals{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), environ: []string{"HOME=" + dir}}
		root := newRootCmd(g)
		root.SetArgs(append([]string{"bench"}, args...))
		root.SetOut(&out)
		root.SetErr(&errb)
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("bench %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	text := run("--vectors", "3000", "--dim", "32", "--vector-queries", "20")
	for _, want := range []string{"vectors    3000 x 32", "exact      p50", "int8       p50", "hnsw       p50", "built in"} {
		if !strings.Contains(text, want) {
			t.Errorf("bench output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "indexing") {
		t.Errorf("bench --vectors alone ran the keyword section:\n%s", text)
	}
	var res struct {
		Vectors  int `json:"vectors"`
		Portable struct {
			Recall float64 `json:"recallAtK"`
		} `json:"portable"`
		Approx struct {
			Recall float64 `json:"recallAtK"`
		} `json:"approx"`
	}
	if err := json.Unmarshal([]byte(run("--vectors", "3000", "--dim", "32", "--vector-queries", "20", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Vectors != 3000 || res.Portable.Recall != 1 || res.Approx.Recall < 0.9 {
		t.Errorf("bench --json = %+v: want 3000 vectors, portable recall 1, HNSW recall >= 0.9", res)
	}

	// --export-vectors writes what the section searches, for another
	// engine, and measures nothing; re-read, the file extends to the same
	// collection again.
	text = run("--vectors", "500", "--dim", "32", "--vector-queries", "20", "--export-vectors", "v.vec")
	if !strings.Contains(text, "exported   500 vectors and 20 queries of 32 dimensions") || strings.Contains(text, "hnsw") {
		t.Errorf("bench --export-vectors printed:\n%s", text)
	}
	rows, queries, err := eval.ReadVectorFile("v.vec")
	if err != nil {
		t.Fatal(err)
	}
	want, wantQ, _, _ := eval.BenchVectors(eval.VectorBenchOptions{Vectors: 500, Dim: 32, Queries: 20, Seed: 1})
	if len(rows) != 500 || len(queries) != 20 || !slices.Equal(rows[499], want[499]) || !slices.Equal(queries[19], wantQ[19]) {
		t.Errorf("exported %d rows and %d queries, not the bench's 500 and 20 (or other values)", len(rows), len(queries))
	}
	run("--vectors", "800", "--vectors-from", "v.vec", "--vector-queries", "5", "--export-vectors", "w.vec")
	if rows2, queries2, err := eval.ReadVectorFile("w.vec"); err != nil || len(rows2) != 800 || !slices.Equal(rows2[0], rows[0]) || !slices.Equal(queries2[4], queries[4]) || slices.Equal(rows2[600], rows2[100]) {
		t.Errorf("export from a vector file: %d rows, %v; want its 500 rows first, mixes after, its queries", len(rows2), err)
	}
}

// TestBenchKeywordSection runs the keyword bench on a small corpus: it
// reports the store's own latency beside the engine's and the keyword
// cache's size, and --export-chunks writes the chunks it indexes (one JSON
// line each) without indexing them; --queries-file times other queries.
func TestBenchKeywordSection(t *testing.T) {
	dir := t.TempDir()
	var corpus, queries strings.Builder
	for i := range 40 {
		fmt.Fprintf(&corpus, `{"_id": "d%d", "title": "Paper %d", "text": "Cells of type %d grow. Proteins fold in tissue %d. The membrane protein binds ligand %d."}`+"\n", i, i, i%7, i%5, i%3)
	}
	fmt.Fprintln(&queries, `{"_id": "q1", "text": "protein binds ligand"}`)
	fmt.Fprintln(&queries, `{"_id": "q2", "text": "cells grow in tissue"}`)
	for name, text := range map[string]string{"corpus.jsonl": corpus.String(), "queries.jsonl": queries.String(), "other.jsonl": `{"_id": "o", "text": "membrane"}` + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) []byte {
		var out, errb bytes.Buffer
		g := &globals{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), environ: []string{"HOME=" + dir}}
		root := newRootCmd(g)
		root.SetArgs(append([]string{"--json", "bench", "--corpus", filepath.Join(dir, "corpus.jsonl"), "--chunks", "300", "--mode", "keyword"}, args...))
		root.SetOut(&out)
		root.SetErr(&errb)
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("bench %v: %v\n%s", args, err, errb.String())
		}
		return out.Bytes()
	}
	var res struct {
		Chunks  int `json:"chunks"`
		Queries int `json:"queries"`
		Latency struct {
			P50 float64 `json:"p50"`
		} `json:"latencyMs"`
		Store *struct {
			P50 float64 `json:"p50"`
		} `json:"storeLatencyMs"`
		CacheMB float64 `json:"keywordCacheMb"`
	}
	if err := json.Unmarshal(run(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Chunks < 300 || res.Queries != 2 || res.Store == nil || res.Store.P50 <= 0 || res.Latency.P50 <= 0 || res.CacheMB <= 0 {
		t.Errorf("keyword bench = %+v: want 300+ chunks, 2 queries, engine and store latencies, a keyword cache", res)
	}
	if err := json.Unmarshal(run("--queries-file", filepath.Join(dir, "other.jsonl")), &res); err != nil || res.Queries != 1 {
		t.Errorf("bench --queries-file timed %d queries (%v), want the file's 1", res.Queries, err)
	}
	exported := filepath.Join(dir, "chunks.jsonl")
	var sum struct {
		Sources, Chunks int
		MB              float64
	}
	if err := json.Unmarshal(run("--export-chunks", exported), &sum); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if sum.Sources != 300 || sum.Chunks != res.Chunks || len(lines) != sum.Chunks || sum.MB <= 0 {
		t.Errorf("export: %+v and %d lines; want 300 sources and the %d chunks the bench indexes", sum, len(lines), res.Chunks)
	}
	var first struct{ ID, Title, Text string }
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.ID == "" || first.Title == "" || first.Text == "" {
		t.Errorf("first exported line %q: %+v, %v", lines[0], first, err)
	}
}
