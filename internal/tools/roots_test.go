package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// swapLink points the symbolic link at link to target, replacing it in one
// rename as an attacker would.
func swapLink(t *testing.T, target, link string) {
	t.Helper()
	tmp := link + ".new"
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
}

// TestSymlinkSwapCannotEscapeRoots: a link inside the root passes the
// roots check while it points inside; an attacker points it at a file
// outside just for the open, and back before anything looks again. The
// hook does the swap at that moment, every time, without timing. The run
// may refuse the link or read what it leads to inside the root; it never
// reads the file outside.
func TestSymlinkSwapCannotEscapeRoots(t *testing.T) {
	ts, dir := newToolset(t)
	root := filepath.Join(dir, "docs")
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("# Secret\n\nsk-outside-the-root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "notes.md")
	inside := filepath.Join(root, "theme.md")
	swapLink(t, inside, link)
	swaps := 0
	ts.openHook = func(name string, open func() (*os.File, error)) (*os.File, error) {
		if filepath.Base(name) != "notes.md" {
			return open()
		}
		swaps++
		swapLink(t, secret, link)
		defer swapLink(t, inside, link)
		return open()
	}
	ctx := context.Background()
	for _, in := range []IndexInput{{File: link}, {Files: []string{root}, Force: true}, {Files: []string{filepath.Join(root, "*.md")}, Force: true}} {
		res, err := ts.Index(ctx, in, nil)
		if err != nil && !errors.Is(err, ErrOutsideRoots) {
			t.Errorf("index %+v: %v, want a refusal as outside the roots", in, err)
		}
		if err == nil && res.Added+res.Updated+len(res.Skipped) == 0 {
			t.Errorf("index %+v: nothing read, nothing skipped", in)
		}
	}
	if swaps < 3 {
		t.Fatalf("the hook swapped the link %d times, want one per run", swaps)
	}
	srcs, err := ts.Store().Sources(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		content, err := ts.Store().Content(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(content, "sk-outside-the-root") {
			t.Errorf("%s holds the file outside the root", s.URI)
		}
	}
}

func TestDotSegment(t *testing.T) {
	for p, want := range map[string]string{".ssh/id_rsa": ".ssh", "a/.git/config": ".git", ".env": ".env", "docs/a.md": "", "./docs/../a.md": "",
		"**/.github/*.yml": ".github", "docs/.*": ".*", "a..b/c": "", "": ""} {
		if got := dotSegment(p); got != want {
			t.Errorf("dotSegment(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestDotfileRule: a toolset made for the command line reads dotfiles the
// user names; the faces' toolset refuses them, as paths, walked links and
// sources, with one error the faces recognise.
func TestDotfileRule(t *testing.T) {
	ts, dir := newToolset(t)
	root := filepath.Join(dir, "docs")
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("API_KEY=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ts.Index(ctx, IndexInput{File: ".env"}, nil); err != nil {
		t.Fatalf("the command line's toolset refused a dotfile named on purpose: %v", err)
	}
	face := ts.WithDotfiles(false)
	if face.WithDotfiles(false) != face || face == ts {
		t.Error("WithDotfiles must copy only to change the rule")
	}
	for _, p := range []string{".env", filepath.Join(root, ".env"), "**/.env", ".git/config"} {
		if err := face.CheckPath(p); !errors.Is(err, ErrDotfile) || !strings.Contains(err.Error(), "--allow-dotfiles") {
			t.Errorf("CheckPath(%q) = %v, want ErrDotfile naming --allow-dotfiles", p, err)
		}
	}
	if err := face.CheckPath("https://example.com/.env"); err != nil {
		t.Errorf("a URL is checked when fetched, not as a path: %v", err)
	}
	if _, err := face.Get(ctx, GetInput{Source: ".env"}); !errors.Is(err, ErrDotfile) {
		t.Errorf("Get .env through the faces' toolset: %v, want ErrDotfile", err)
	}
	if _, err := ts.Get(ctx, GetInput{Source: ".env"}); err != nil {
		t.Errorf("Get .env through the command line's toolset: %v", err)
	}
	for uri, bad := range map[string]bool{filepath.Join(root, "a.md"): false, filepath.Join(root, ".git", "HEAD"): true, ".ssh/id_rsa": true, "docs/a.md": false} {
		err := face.Readable(doc.Source{URI: filepath.ToSlash(uri), Type: doc.TypeFile})
		if (err != nil) != bad {
			t.Errorf("Readable(%s) = %v, want refused %v", uri, err, bad)
		}
	}
	if err := face.Readable(doc.Source{URI: "https://example.com/.well-known/x", Type: doc.TypeURL}); err != nil {
		t.Errorf("a web page's path is no local dotfile: %v", err)
	}
}

// TestSymlinkSwapToDotfileIsRefused: the same swap, to a dotfile inside the
// root, through the faces' toolset: the opened file's own path (from /proc)
// is checked before it is read.
func TestSymlinkSwapToDotfileIsRefused(t *testing.T) {
	testenv.Platform(t, runtime.GOOS == "linux", "only Linux tells which file an open file is (/proc/self/fd)")
	ts, dir := newToolset(t)
	root := filepath.Join(dir, "docs")
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("API_KEY=sk-dotfile-secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Relative links, which os.Root follows inside the root.
	link := filepath.Join(root, "notes.md")
	swapLink(t, "theme.md", link)
	face := ts.WithDotfiles(false)
	face.openHook = func(name string, open func() (*os.File, error)) (*os.File, error) {
		if filepath.Base(name) != "notes.md" {
			return open()
		}
		swapLink(t, ".env", link)
		defer swapLink(t, "theme.md", link)
		return open()
	}
	res, err := face.Index(context.Background(), IndexInput{Files: []string{root}, Force: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sk := range res.Skipped {
		found = found || strings.HasSuffix(sk.Path, "notes.md") && sk.Reason == "dotfile"
	}
	if !found {
		t.Errorf("skipped %+v, want notes.md skipped as a dotfile", res.Skipped)
	}
	got, err := ts.Get(context.Background(), GetInput{Source: "notes.md"})
	if err == nil && strings.Contains(got.Content, "sk-dotfile-secret") {
		t.Error("notes.md holds the .env it pointed at during the open")
	}
}
