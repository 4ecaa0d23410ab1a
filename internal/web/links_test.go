package web

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestLinkedSourcesNotServed: the page does not hand out an indexed file
// whose symbolic link leads outside its roots (a clone's
// docs/setup.md -> ~/.ssh/id_rsa) or to a dotfile, by /api/source or
// /api/chunks, however the file got into the index.
func TestLinkedSourcesNotServed(t *testing.T) {
	const secret = "sk-clone-must-not-read"
	f := newFixture(t, "", nil)
	home, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "id_rsa"), []byte("PRIVATE "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("API_KEY "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"setup.md": filepath.Join(home, "id_rsa"), "env.txt": ".env"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	cli, err := tools.New(tools.Options{Engine: f.srv.rt.Engine, Index: f.srv.app.IndexOptions(), Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Index(context.Background(), tools.IndexInput{Files: []string{filepath.Join(dir, "setup.md"), filepath.Join(dir, "env.txt")}, AnyPath: true}, nil); err != nil {
		t.Fatal(err)
	}
	f.roots(t, dir)
	var list tools.ListOutput
	f.call(t, "GET", "/api/sources", nil, &list)
	if len(list.Sources) != 2 {
		t.Fatalf("sources: %+v", list.Sources)
	}
	for _, src := range list.Sources {
		var e struct{ Error string }
		if code := f.call(t, "GET", "/api/source?ref="+src.ID, nil, &e); code != http.StatusForbidden || strings.Contains(e.Error, secret) {
			t.Errorf("read %s: %d %q, want 403", src.URI, code, e.Error)
		}
	}
	var sr struct{ Results []searchResult }
	f.call(t, "POST", "/api/search", map[string]any{"query": "PRIVATE API_KEY"}, &sr)
	if len(sr.Results) == 0 {
		t.Fatal("no hits to try the chunks with")
	}
	for _, r := range sr.Results {
		var e struct{ Error string }
		if code := f.call(t, "GET", "/api/chunks/"+itoa(r.ChunkID), nil, &e); code != http.StatusForbidden {
			t.Errorf("read a chunk of %s: %d, want 403", r.Source.URI, code)
		}
	}
}
