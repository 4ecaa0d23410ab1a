package source

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestWalkFollowsIgnoreFiles(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		".gitignore":          "dist/\n*.log\n!keep.log\n",
		"docs/.gitignore":     "draft-*.md\n",
		".sagasuignore":       "secret.md\n",
		"global":              "*.bak\n",
		"README.md":           "# r\n",
		"keep.log":            "kept\n",
		"run.log":             "left out\n",
		"dist/bundle.md":      "# generated\n",
		"docs/guide.md":       "# guide\n",
		"docs/draft-plan.md":  "# draft\n",
		"docs/secret.md":      "# secret\n",
		"docs/old.bak":        "old\n",
		"docs/sub/draft-x.md": "# nested draft\n",
	})
	t.Chdir(root)
	global := filepath.Join(root, "global")

	r := walk(t, []string{"."}, Options{GlobalExcludes: global})
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := []string{"README.md", "docs/guide.md", "global", "keep.log"}
	if got := r.uris(); !reflect.DeepEqual(got, want) {
		t.Errorf("indexed %v, want %v", got, want)
	}
	var left []string
	for _, s := range r.skips {
		if s.Reason == SkipIgnoreFile {
			left = append(left, s.Path)
		}
	}
	slices.Sort(left)
	// A folder is reported once, not file by file.
	wantLeft := []string{"dist", "docs/draft-plan.md", "docs/old.bak", "docs/secret.md", "docs/sub/draft-x.md", "run.log"}
	if !reflect.DeepEqual(left, wantLeft) {
		t.Errorf("left out %v, want %v", left, wantLeft)
	}

	// --no-ignore reads them all.
	r = walk(t, []string{"."}, Options{GlobalExcludes: global, NoIgnore: true})
	if got := len(r.uris()); got != 10 {
		t.Errorf("with NoIgnore indexed %d files (%v), want all 10", got, r.uris())
	}

	// A file named as an input is read even when ignored; a glob is not a name.
	r = walk(t, []string{"run.log", "dist/bundle.md", "docs/*.md"}, Options{GlobalExcludes: global})
	if got, want := r.uris(), []string{"run.log", "dist/bundle.md", "docs/guide.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("named files and a glob gave %v, want %v", got, want)
	}
}

func TestWalkOnly(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		".gitignore": "*.log\n",
		"a.md":       "a\n",
		"b.md":       "b\n",
		"b.log":      "b\n",
		"sub/c.md":   "c\n",
		"sub/d/e.md": "e\n",
		"other/f.md": "f\n",
	})
	t.Chdir(root)
	canon, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	// Only b.md, b.log and everything under sub/d: the walk enters sub
	// because it leads there, and the ignore rules still hold.
	wanted := map[string]bool{"b.md": true, "b.log": true}
	only := func(c string, isDir bool) bool {
		rel, _ := filepath.Rel(canon, c)
		rel = filepath.ToSlash(rel)
		return wanted[rel] || rel == "sub" || rel == "sub/d" || filepath.Dir(rel) == "sub/d"
	}
	r := walk(t, []string{"."}, Options{Only: only})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, want := r.uris(), []string{"b.md", "sub/d/e.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Only walked %v, want %v", got, want)
	}
	if _, err := os.Stat("b.log"); err != nil {
		t.Fatal(err)
	}
}
