package testenv

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// skipCalls returns "file:line" of every call of a Skip method (Skip,
// Skipf, SkipNow) in the Go files of fsys that import "testing", outside
// this package, and of every testenv.QdrantServer outside the Qdrant
// driver: every skip goes through Need, Short, Platform or HelperProcess,
// so none can skip for missing data and pass under CI.
func skipCalls(fsys fs.FS) ([]string, int, error) {
	var found []string
	files := 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "bin") {
				return fs.SkipDir
			}
			if p == "internal/testenv" {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", p, err)
		}
		files++
		if !slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool { return s.Path.Value == strconv.Quote("testing") }) {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, _ := sel.X.(*ast.Ident)
			switch {
			case sel.Sel.Name == "Skip" || sel.Sel.Name == "Skipf" || sel.Sel.Name == "SkipNow",
				sel.Sel.Name == "QdrantServer" && pkg != nil && pkg.Name == "testenv" && path.Dir(p) != "internal/store/qdrant":
				found = append(found, fmt.Sprintf("%s:%d", p, fset.Position(call.Pos()).Line))
			}
			return true
		})
		return nil
	})
	return found, files, err
}

// TestSkipsGoThroughTestenv: no test in the repository skips by itself.
// A direct t.Skip on missing data is how a data test passed silently under
// CI; Need makes that a failure there.
func TestSkipsGoThroughTestenv(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	found, files, err := skipCalls(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	if files < 300 {
		t.Fatalf("only %d Go files read: the walk missed the repository", files)
	}
	for _, at := range found {
		t.Errorf("%s: skips directly (or QdrantServer outside the Qdrant driver); use testenv.Need (missing data or service: fails under CI=true), Short, Platform or HelperProcess", at)
	}
}

// TestSkipCheckFindsAPlantedSkip: the check above catches the skip it is
// for, in a test file and in a helper package, and leaves alone what only
// looks like one.
func TestSkipCheckFindsAPlantedSkip(t *testing.T) {
	fsys := fstest.MapFS{
		"go.mod": {Data: []byte("module m\n")},
		"internal/loop/goals_test.go": {Data: []byte(`package loop

import (
	"os"
	"testing"
)

func TestGoals(t *testing.T) {
	if _, err := os.Stat("../../../shared/data/vitepress-docs"); err != nil {
		t.Skipf("the VitePress documentation is not there: %v", err)
	}
}
`)},
		"internal/llm/llmtest/local.go": {Data: []byte(`package llmtest

import "testing"

func Local(b testing.TB) { b.SkipNow() }
`)},
		"internal/ok/ok_test.go": {Data: []byte(`package ok

import (
	"testing"

	"m/internal/testenv"
)

func TestOK(t *testing.T) { testenv.Need(t, false, "no data") }

func TestNotQdrant(t *testing.T) { testenv.QdrantServer(t, false, "no server") }
`)},
		"internal/store/qdrant/server_test.go": {Data: []byte(`package qdrant

import (
	"testing"

	"m/internal/testenv"
)

func TestKeyed(t *testing.T) { testenv.QdrantServer(t, false, "no keyed server") }
`)},
		// Not a test file: a loader's Skip callback is no test skip.
		"internal/source/run.go": {Data: []byte(`package source

type Run struct{ Skip func(string) }

func (r *Run) drop(p string) { r.Skip(p) }
`)},
		"internal/testenv/testenv.go": {Data: []byte(`package testenv

import "testing"

func Need(t testing.TB, ok bool, why string) { t.Skip(why) }
`)},
	}
	found, _, err := skipCalls(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"internal/llm/llmtest/local.go:5", "internal/loop/goals_test.go:10", "internal/ok/ok_test.go:11"}
	slices.Sort(found)
	if !slices.Equal(found, want) {
		t.Errorf("found %v, want %v", found, want)
	}
}

// recorder is a testing.TB that records a skip or a failure instead of
// ending the goroutine (the functions here call only these methods).
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Skip(args ...any)             { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatalf(f string, args ...any) { r.failed = fmt.Sprintf(f, args...) }

func TestNeedSkipsOrFailsUnderCI(t *testing.T) {
	for _, tt := range []struct {
		ci          string
		ok          bool
		skip, fails bool
	}{
		{"", false, true, false},
		{"false", false, true, false},
		{"true", false, false, true},
		{"true", true, false, false},
		{"", true, false, false},
	} {
		t.Run(fmt.Sprintf("CI=%q,ok=%v", tt.ci, tt.ok), func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			r := &recorder{}
			Need(r, tt.ok, "the corpus is not at /nowhere")
			if (r.skipped != "") != tt.skip || (r.failed != "") != tt.fails {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", r.skipped, r.failed, tt.skip, tt.fails)
			}
			if msg := r.skipped + r.failed; (tt.skip || tt.fails) && !strings.Contains(msg, "the corpus is not at /nowhere") {
				t.Errorf("message %q does not say what is missing", msg)
			}
		})
	}
	// Platform skips under CI too: no installation changes it.
	t.Setenv("CI", "true")
	r := &recorder{}
	Platform(r, false, "no symlinks here")
	if r.skipped == "" || r.failed != "" {
		t.Errorf("Platform under CI: skipped %q, failed %q", r.skipped, r.failed)
	}
}

func TestSharedNamesTheFolder(t *testing.T) {
	t.Setenv("SAGASU_SHARED_DATA", t.TempDir())
	t.Setenv("CI", "")
	r := &recorder{}
	dir := Shared(r, "vitepress-docs")
	if path.Base(filepath.ToSlash(dir)) != "vitepress-docs" || !strings.Contains(r.skipped, dir) {
		t.Errorf("Shared: %q, skip %q; want a skip naming the folder", dir, r.skipped)
	}
}
