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
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// SciFact returns "title\n\ntext" of the first max documents of SciFact's
// corpus.jsonl (all of them when max <= 0).
func SciFact(t testing.TB, max int) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.SciFact(t), "corpus.jsonl"))
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
	root := testenv.Shared(t, "vitepress-docs")
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
