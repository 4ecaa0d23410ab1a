package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestLinkedSourcesNotServedOverMCP: an index that holds files read through
// symbolic links (made before walks stopped following them, or by the user
// naming the links) does not hand out, over sagasu_get or resources, a
// file whose link leads outside the roots or to a dotfile: the server
// checks where the link leads, not only the URI.
func TestLinkedSourcesNotServedOverMCP(t *testing.T) {
	const secret = "sk-clone-must-not-read"
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "id_rsa"), []byte("PRIVATE "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, allow := range []bool{false, true} {
		f := newFixture(t, Options{AllowDotfiles: allow})
		if err := os.MkdirAll(filepath.Join(f.dir, "docs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.dir, ".env"), []byte("API_KEY="+secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		links := map[string]string{"docs/setup.md": filepath.Join(home, "id_rsa"), "docs/env.txt": "../.env"}
		for name, target := range links {
			if err := os.Symlink(target, filepath.Join(f.dir, filepath.FromSlash(name))); err != nil {
				t.Fatal(err)
			}
		}
		cli, err := tools.New(tools.Options{Engine: search.New(f.store), Roots: []string{f.dir}, Index: index.Options{Chunk: chunk.Options{MaxTokens: 512}}})
		if err != nil {
			t.Fatal(err)
		}
		// The user names the links on the command line: they are indexed.
		if _, err := cli.Index(context.Background(), tools.IndexInput{Files: []string{filepath.Join(f.dir, "docs", "setup.md"), filepath.Join(f.dir, "docs", "env.txt")}, AnyPath: true}, nil); err != nil {
			t.Fatal(err)
		}
		srcs, err := f.store.Sources(context.Background(), store.ListOptions{})
		if err != nil || len(srcs) != 2 {
			t.Fatalf("sources: %v %+v", err, srcs)
		}
		for _, src := range srcs {
			dotfile := strings.HasSuffix(src.URI, "env.txt")
			served := allow && dotfile // the user allowed dotfiles; a link out of the roots stays refused
			msg, isErr := callText(t, f.cs, ToolGet, map[string]any{"source": src.ID})
			if served {
				if isErr || !strings.Contains(msg, secret) {
					t.Errorf("allow dotfiles %v: sagasu_get %s: %.200q, want the file", allow, src.URI, msg)
				}
				continue
			}
			want := "outside the allowed roots"
			if dotfile {
				want = "--allow-dotfiles"
			}
			if !isErr || strings.Contains(msg, secret) || !strings.Contains(msg, want) {
				t.Errorf("allow dotfiles %v: sagasu_get %s: %.200q (error %v), want a refusal saying %q", allow, src.URI, msg, isErr, want)
			}
			if res, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tools.SourceURI(src.ID)}); err == nil {
				t.Errorf("allow dotfiles %v: resource of %s read: %.200v", allow, src.URI, res.Contents[0].Text)
			}
		}
	}
}
