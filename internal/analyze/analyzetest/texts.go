// Package analyzetest gives the tests of the analysis and indexing path real
// text to check a faster path against the plain one: SciFact abstracts and
// the VitePress documentation (English and Japanese Markdown) from the
// shared data beside the repository. It imports nothing of sagasu, so the
// tests of any package may use it.
package analyzetest

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// sharedData is ../shared/data beside the repository root, or
// $SAGASU_SHARED_DATA.
func sharedData() string {
	if d := os.Getenv("SAGASU_SHARED_DATA"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "data")
}

// need returns the directory of corpus name, or skips the test (fails it
// when CI=true) when it is absent.
func need(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(sharedData(), name)
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not at %s (CI runs with ../shared beside the repository)", name, dir)
		}
		t.Skipf("%s is not at %s (set SAGASU_SHARED_DATA): %v", name, dir, err)
	}
	return dir
}

// SciFact returns "title\n\ntext" of the first max documents of SciFact's
// corpus.jsonl (all of them when max <= 0).
func SciFact(t testing.TB, max int) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(need(t, "scifact"), "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() && (max <= 0 || len(out) < max) {
		var d struct{ Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("read SciFact corpus: %v", err)
		}
		out = append(out, d.Title+"\n\n"+d.Text)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read SciFact corpus: %v", err)
	}
	if len(out) == 0 {
		t.Fatal("the SciFact corpus is empty")
	}
	return out
}

// VitePress returns the Markdown files of the VitePress documentation (all
// languages), in path order.
func VitePress(t testing.TB) []string {
	t.Helper()
	root := need(t, "vitepress-docs")
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatalf("list VitePress docs: %v", err)
	}
	slices.Sort(paths)
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	if len(out) == 0 {
		t.Fatal("no Markdown files in the VitePress docs")
	}
	return out
}
