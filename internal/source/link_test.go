package source

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// A cloned repository ships links to the user's keys and to its own
// dotfiles; walking it must not read them (the attack of issue 35: before,
// `sagasu index .` stored ~/.ssh/id_rsa under docs/setup.md).
func TestWalkDoesNotFollowLinksOut(t *testing.T) {
	home := t.TempDir()
	tree(t, home, map[string]string{
		".ssh/id_rsa":      "-----BEGIN OPENSSH PRIVATE KEY----- secret\n",
		".aws/credentials": "aws_secret_access_key = secret\n",
		"thesis.txt":       "my thesis\n",
		"clone/README.md":  "# Clone\n",
		"clone/.env":       "API_KEY=secret\n",
		"clone/.git/HEAD":  "ref: secret\n",
		"clone/docs/a.md":  "# A\n",
	})
	clone := filepath.Join(home, "clone")
	links := map[string]string{
		"docs/setup.md":  "../../.ssh/id_rsa",                        // outside, relative
		"docs/faq.md":    filepath.Join(home, ".aws", "credentials"), // outside, absolute
		"docs/thesis.md": "../../thesis.txt",                         // outside, not hidden
		"env.txt":        ".env",                                     // a dotfile inside
		"docs/head.md":   "../.git/HEAD",                             // inside a dot-folder inside
		"docs/intro.md":  "../README.md",                             // inside: read
	}
	for name, target := range links {
		err := os.Symlink(target, filepath.Join(clone, filepath.FromSlash(name)))
		testenv.Platform(t, err == nil, fmt.Sprintf("symlinks not supported: %v", err))
	}
	t.Chdir(clone)
	refused := map[string]SkipReason{
		"docs/setup.md": SkipLink, "docs/faq.md": SkipLink, "docs/thesis.md": SkipLink,
		"env.txt": SkipLink, "docs/head.md": SkipLink,
	}
	for _, in := range []string{".", clone, "docs/../", "**/*"} {
		t.Run(in, func(t *testing.T) {
			r := walk(t, []string{in}, Options{})
			if r.err != nil {
				t.Fatal(r.err)
			}
			for _, d := range r.docs {
				if strings.Contains(d.Content, "secret") || strings.Contains(d.Content, "thesis") {
					t.Errorf("%s read through a link: %q", d.URI, d.Content)
				}
			}
			if got, want := r.uris(), []string{"README.md", "docs/a.md", "docs/intro.md"}; !reflect.DeepEqual(got, want) {
				t.Errorf("URIs = %q, want %q", got, want)
			}
			if got := r.skipped(); !reflect.DeepEqual(got, refused) {
				t.Errorf("skips = %v, want %v", got, refused)
			}
			for _, s := range r.skips {
				if !strings.Contains(s.Err.Error(), "name the file as an input") {
					t.Errorf("%s: the reason does not say how to index it: %v", s.Path, s.Err)
				}
			}
			if !strings.Contains(r.log, "symbolic link not followed") {
				t.Errorf("the log does not list the links: %s", r.log)
			}
		})
	}

	// Walking docs alone, a link to the clone's README leads out of it.
	r := walk(t, []string{"docs"}, Options{})
	if r.err != nil || r.skipped()["docs/intro.md"] != SkipLink {
		t.Errorf("walking docs: err %v, skips %v", r.err, r.skipped())
	}

	// A link the user names is read: that is their choice.
	r = walk(t, []string{"docs/thesis.md", "env.txt"}, Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, want := r.uris(), []string{"docs/thesis.md", "env.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("named links: URIs = %q, want %q", got, want)
	}
}
