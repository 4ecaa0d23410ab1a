package app

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layers is the picture in docs/design.md, top first: a package may import
// only packages of layers below its own (or of its own package tree).
var layers = [][]string{
	{"cmd/sagasu"},
	{"internal/web"},
	{"internal/app"},
	{"internal/mcpserver"},
	{"internal/runs", "internal/watch"},
	{"internal/agent/react", "internal/agent/planact"},
	{"internal/tools", "internal/testcorpus"},
	{"internal/loop", "internal/eval", "internal/telemetry"},
	{"internal/graph", "internal/mcpclient"},
	{"internal/search", "internal/migrate"},
	{"internal/index"},
	{"internal/source", "internal/chunk", "internal/agentcache"},
	{"internal/store"},
	{"internal/embed", "internal/llm", "internal/budget", "internal/analyze", "internal/glob", "internal/ignore", "internal/httpguard", "internal/mcpconfig", "internal/cite"},
	{"internal/doc", "internal/userfile", "internal/testenv", "internal/clip"},
}

// layerOf returns the layer of a package path relative to the module.
func layerOf(pkg string) (int, string, bool) {
	for i, l := range layers {
		for _, root := range l {
			if pkg == root || strings.HasPrefix(pkg, root+"/") {
				return i, root, true
			}
		}
	}
	return 0, "", false
}

// TestNoImportGoesUp: the packages import as docs/design.md says.
func TestNoImportGoesUp(t *testing.T) {
	const module = "github.com/sagasu-dev/sagasu/"
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "scripts" || name == "bin" || name == "docs") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		p, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		from, fromRoot, ok := layerOf(rel)
		if !ok {
			t.Errorf("package %s is in no layer: add it to the picture in docs/design.md and to this test", rel)
			return nil
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			to, toRoot, ok := layerOf(dep)
			if !ok {
				t.Errorf("%s imports %s, which is in no layer", rel, dep)
				continue
			}
			if toRoot != fromRoot && to <= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must go down", rel, from, dep, to)
			}
			checked++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d imports checked: the walk missed the packages", checked)
	}
}
