package source

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// TestLocalURI: every spelling of a file names one URI, relative to the
// root under it and absolute outside it; symlinked folders are resolved,
// a symlinked file keeps its name, and a deleted file still has its URI.
func TestLocalURI(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "proj")
	tree(t, root, map[string]string{"docs/a.md": "# A\n", "docs/real.md": "# R\n"})
	tree(t, parent, map[string]string{"other/x.md": "# X\n"})
	for link, target := range map[string]string{
		filepath.Join(parent, "other", "docs-link"): filepath.Join(root, "docs"),
		filepath.Join(root, "docs", "file-link.md"): "real.md",
		filepath.Join(parent, "proj-link"):          root,
	} {
		err := os.Symlink(target, link)
		testenv.Platform(t, err == nil, fmt.Sprintf("symlinks not supported: %v", err))
	}
	t.Chdir(filepath.Join(parent, "other"))
	abs := func(p string) string { return filepath.ToSlash(filepath.Join(parent, p)) }
	tests := []struct {
		root, path, want string
	}{
		{root, "../proj/docs/a.md", "docs/a.md"},
		{root, filepath.Join(root, "docs", "a.md"), "docs/a.md"},
		{root, "docs-link/a.md", "docs/a.md"},
		{root, "../proj-link/docs/a.md", "docs/a.md"},
		{filepath.Join(parent, "proj-link"), "../proj/docs/a.md", "docs/a.md"},
		{root, "../proj/docs/file-link.md", "docs/file-link.md"},
		{root, "../proj/docs/deleted.md", "docs/deleted.md"},
		{root, "../proj/docs", "docs"},
		{root, "x.md", abs("other/x.md")},
		{root, "./x.md", abs("other/x.md")},
		{"", "x.md", "x.md"},
		{"", "../proj/docs/a.md", abs("proj/docs/a.md")},
	}
	for _, tt := range tests {
		got, err := LocalURI(tt.root, tt.path)
		if err != nil || got != tt.want {
			t.Errorf("LocalURI(%q, %q) = %q, %v; want %q", tt.root, tt.path, got, err, tt.want)
		}
	}
	if got := URIPath(root, "docs/a.md"); got != filepath.Join(root, "docs", "a.md") {
		t.Errorf("URIPath of a relative URI = %q", got)
	}
	if got := URIPath(root, abs("other/x.md")); got != filepath.Join(parent, "other", "x.md") {
		t.Errorf("URIPath of an absolute URI = %q", got)
	}
}

// TestWalkRoot: with Options.Root set, files under it are named from it
// and files outside it absolutely, whatever the working directory.
func TestWalkRoot(t *testing.T) {
	parent := t.TempDir()
	tree(t, parent, map[string]string{"proj/docs/a.md": "# A\n", "other/x.md": "# X\n"})
	t.Chdir(filepath.Join(parent, "other"))
	r := walk(t, []string{"../proj/docs", "x.md", "../proj/docs/a.md"}, Options{Root: filepath.Join(parent, "proj")})
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := []string{"docs/a.md", filepath.ToSlash(filepath.Join(parent, "other", "x.md"))}
	if got := r.uris(); !reflect.DeepEqual(got, want) {
		t.Errorf("URIs = %q, want %q", got, want)
	}
}

// TestExcludeMatchesURIs: a configured exclude such as "docs/drafts/**"
// keeps a folder out however the walked input was spelled.
func TestExcludeMatchesURIs(t *testing.T) {
	parent := t.TempDir()
	tree(t, parent, map[string]string{"proj/docs/a.md": "# A\n", "proj/docs/drafts/d.md": "# D\n", "other/.keep": ""})
	t.Chdir(filepath.Join(parent, "other"))
	r := walk(t, []string{"../proj/docs"}, Options{Root: filepath.Join(parent, "proj"), Exclude: []string{"docs/drafts/**"}})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.uris(); !reflect.DeepEqual(got, []string{"docs/a.md"}) {
		t.Errorf("URIs = %q, want the drafts excluded", got)
	}
}
