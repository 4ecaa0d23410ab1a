package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
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
}
