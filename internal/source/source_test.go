package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// tree writes files (slash paths relative to root) with their contents.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// project makes a small project in a temporary directory and changes into it.
func project(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	tree(t, root, map[string]string{
		"README.md":                   "# Sagasu\n\nSearch things.\n",
		"docs/a.md":                   "---\ntitle: \"Page A\"\n---\n# Not the title\n",
		"docs/guide/intro.md":         "Intro\n=====\n\ntext\n",
		"docs/guide/notes.txt":        "plain notes\n",
		"docs/sub/code.py":            "print('hi')\n",
		"docs/sub/main.go":            "package main\n",
		"docs/.hidden/secret.md":      "# hidden\n",
		"docs/.git/config":            "[core]\n",
		"docs/node_modules/pkg/r.md":  "# dep\n",
		"docs/.sagasu/cache/agent.md": "# cache\n",
		".github/workflows/ci.yml":    "on: push\n",
		"src/app.ts":                  "export const x = 1\n",
		"src/.env":                    "API_KEY=secret\n",
	})
	t.Chdir(root)
	return root
}

type result struct {
	docs  []doc.Document
	skips []Skip
	err   error
	log   string
}

func walk(t *testing.T, inputs []string, opt Options) result {
	t.Helper()
	var r result
	var buf bytes.Buffer
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	r.err = Walk(context.Background(), inputs, opt,
		func(d doc.Document) error { r.docs = append(r.docs, d); return nil },
		func(s Skip) { r.skips = append(r.skips, s) })
	r.log = buf.String()
	return r
}

func (r result) uris() []string {
	out := []string{}
	for _, d := range r.docs {
		out = append(out, d.URI)
	}
	return out
}

func (r result) skipped() map[string]SkipReason {
	out := map[string]SkipReason{}
	for _, s := range r.skips {
		out[s.Path] = s.Reason
	}
	return out
}

func TestWalkInputs(t *testing.T) {
	root := project(t)
	abs := filepath.ToSlash(root)
	tests := []struct {
		name   string
		inputs []string
		want   []string
	}{
		{"directory, lexical order, defaults skipped", []string{"docs"},
			[]string{"docs/a.md", "docs/guide/intro.md", "docs/guide/notes.txt", "docs/sub/code.py", "docs/sub/main.go"}},
		{"trailing slash", []string{"docs/sub/"}, []string{"docs/sub/code.py", "docs/sub/main.go"}},
		{"dot slash file", []string{"./README.md"}, []string{"README.md"}},
		{"unclean file", []string{"docs/../README.md"}, []string{"README.md"}},
		{"current directory", []string{"."},
			[]string{"README.md", "docs/a.md", "docs/guide/intro.md", "docs/guide/notes.txt", "docs/sub/code.py", "docs/sub/main.go", "src/app.ts"}},
		{"absolute directory under the root is shown relative", []string{root + "/docs/sub"},
			[]string{"docs/sub/code.py", "docs/sub/main.go"}},
		{"absolute file under the root", []string{filepath.Join(root, "README.md")}, []string{"README.md"}},
		{"a path through the parent", []string{"../" + filepath.Base(root) + "/docs/sub"},
			[]string{"docs/sub/code.py", "docs/sub/main.go"}},
		{"a file reached through three spellings is loaded once",
			[]string{"docs/sub/main.go", abs + "/docs/sub/main.go", "../" + filepath.Base(root) + "/docs/sub/main.go"},
			[]string{"docs/sub/main.go"}},
		{"explicit hidden directory", []string{"docs/.hidden"}, []string{"docs/.hidden/secret.md"}},
		{"explicit node_modules", []string{"docs/node_modules"}, []string{"docs/node_modules/pkg/r.md"}},
		{"explicit .github", []string{".github"}, []string{".github/workflows/ci.yml"}},
		{"dotfiles are skipped when walking", []string{"src"}, []string{"src/app.ts"}},
		{"an explicit dotfile is read", []string{"src/.env"}, []string{"src/.env"}},
		{"inputs in order", []string{"src", "README.md"}, []string{"src/app.ts", "README.md"}},
		{"a file reached twice is loaded once", []string{"docs/sub", "./docs/sub/code.py"}, []string{"docs/sub/code.py", "docs/sub/main.go"}},

		{"glob with **", []string{"docs/**/*.md"}, []string{"docs/a.md", "docs/guide/intro.md"}},
		{"glob one level", []string{"docs/*.md"}, []string{"docs/a.md"}},
		{"glob from current dir", []string{"**/*.py"}, []string{"docs/sub/code.py"}},
		{"glob with dot slash", []string{"./docs/*/*.go"}, []string{"docs/sub/main.go"}},
		{"glob naming a hidden dir", []string{"**/.hidden/*.md"}, []string{"docs/.hidden/secret.md"}},
		{"glob naming node_modules", []string{"docs/node_modules/**"}, []string{"docs/node_modules/pkg/r.md"}},
		{"glob does not enter hidden dirs", []string{"**/*.yml"}, nil},
		{"absolute glob", []string{root + "/docs/**/*.txt"}, []string{"docs/guide/notes.txt"}},
		{"class glob", []string{"docs/sub/[a-m]*"}, []string{"docs/sub/code.py", "docs/sub/main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := walk(t, tt.inputs, Options{})
			if tt.want == nil { // no match
				if r.err == nil || !strings.Contains(r.err.Error(), "matches no files") {
					t.Fatalf("want a no-match error, got %v (docs %v)", r.err, r.uris())
				}
				return
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got := r.uris(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("URIs = %q\nwant   %q", got, tt.want)
			}
		})
	}
}

func TestWalkDocuments(t *testing.T) {
	project(t)
	r := walk(t, []string{"."}, Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := map[string]doc.Document{
		"README.md":            {Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Sagasu"},
		"docs/a.md":            {Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Page A"},
		"docs/guide/intro.md":  {Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Intro"},
		"docs/guide/notes.txt": {Type: doc.TypeFile, Format: doc.FormatText, Title: "notes.txt"},
		"docs/sub/code.py":     {Type: doc.TypeFile, Format: doc.FormatCode, Lang: "python", Title: "code.py"},
		"docs/sub/main.go":     {Type: doc.TypeFile, Format: doc.FormatGo, Lang: "go", Title: "main.go"},
		"src/app.ts":           {Type: doc.TypeFile, Format: doc.FormatCode, Lang: "typescript", Title: "app.ts"},
	}
	for _, d := range r.docs {
		w, ok := want[d.URI]
		if !ok {
			t.Errorf("unexpected document %q", d.URI)
			continue
		}
		got := d
		got.URI, got.Content = "", ""
		if got != w {
			t.Errorf("%s: got %+v, want %+v", d.URI, got, w)
		}
	}
	if r.docs[0].Content != "# Sagasu\n\nSearch things.\n" {
		t.Errorf("content of README.md = %q", r.docs[0].Content)
	}
	if len(r.skips) != 0 {
		t.Errorf("routine skips must not be reported: %+v", r.skips)
	}
	for _, dir := range []string{"docs/.git", "docs/node_modules", "docs/.sagasu", "docs/.hidden", ".github"} {
		if !strings.Contains(r.log, dir) {
			t.Errorf("debug log does not mention skipped %s:\n%s", dir, r.log)
		}
	}
}

func TestWalkExclude(t *testing.T) {
	project(t)
	tests := []struct {
		name    string
		inputs  []string
		exclude []string
		want    []string
	}{
		{"directory base name", []string{"docs"}, []string{"guide"},
			[]string{"docs/a.md", "docs/sub/code.py", "docs/sub/main.go"}},
		{"file base name", []string{"docs"}, []string{"*.txt", "*.go"},
			[]string{"docs/a.md", "docs/guide/intro.md", "docs/sub/code.py"}},
		{"path as given", []string{"docs"}, []string{"docs/sub/**"},
			[]string{"docs/a.md", "docs/guide/intro.md", "docs/guide/notes.txt"}},
		{"path relative to the input", []string{"docs"}, []string{"guide/*.md", "sub/code.py"},
			[]string{"docs/a.md", "docs/guide/notes.txt", "docs/sub/main.go"}},
		{"applies to globs", []string{"docs/**/*.md"}, []string{"intro.md"},
			[]string{"docs/a.md"}},
		{"explicit files are not excluded", []string{"docs/sub/main.go"}, []string{"*.go"},
			[]string{"docs/sub/main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := walk(t, tt.inputs, Options{Exclude: tt.exclude})
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got := r.uris(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("URIs = %q\nwant   %q", got, tt.want)
			}
		})
	}

	r := walk(t, []string{"docs"}, Options{Exclude: []string{"docs/[x"}})
	if r.err == nil || !strings.Contains(r.err.Error(), `exclude pattern: glob pattern "docs/[x"`) {
		t.Errorf("malformed exclude: err = %v", r.err)
	}
	if len(r.docs) != 0 {
		t.Errorf("nothing is loaded when an exclude pattern is malformed")
	}
}

func TestWalkErrors(t *testing.T) {
	project(t)
	tests := []struct {
		name   string
		inputs []string
		want   []string // substrings of the error
		is     error
	}{
		{"missing file", []string{"nope.md"}, []string{`input "nope.md" does not exist`, "check the path"}, fs.ErrNotExist},
		{"missing after a good input", []string{"README.md", "docs/missing"}, []string{`input "docs/missing" does not exist`}, fs.ErrNotExist},
		{"empty input", []string{""}, []string{"empty input"}, nil},
		{"glob matching nothing", []string{"docs/**/*.rst"}, []string{`input "docs/**/*.rst" matches no files`}, nil},
		{"glob under a missing dir", []string{"nodir/**/*.md"}, []string{`input "nodir/**/*.md"`, `base directory "nodir" does not exist`}, nil},
		{"malformed glob", []string{"docs/[a.md"}, []string{`input "docs/[a.md" does not exist, and as a glob it is malformed`, "unclosed character class"}, nil},
		{"backslash path is not a glob", []string{`C:\docs\a.md`}, []string{`does not exist; check the path`}, fs.ErrNotExist},
		{"path through a file", []string{"README.md/x"}, []string{`input "README.md/x"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := walk(t, tt.inputs, Options{})
			if r.err == nil {
				t.Fatalf("no error; docs %q", r.uris())
			}
			for _, w := range tt.want {
				if !strings.Contains(r.err.Error(), w) {
					t.Errorf("error %q does not say %q", r.err, w)
				}
			}
			if tt.is != nil && !errors.Is(r.err, tt.is) {
				t.Errorf("error %v is not %v", r.err, tt.is)
			}
			if len(r.docs) != 0 && !strings.Contains(tt.name, "glob matching nothing") {
				t.Errorf("inputs are checked before any is loaded, but got %q", r.uris())
			}
		})
	}
}

func TestWalkSkips(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	mostlyInvalid := make([]byte, 400)
	for i := range mostlyInvalid {
		mostlyInvalid[i] = byte(0x80 + i%0x40)
	}
	tree(t, root, map[string]string{
		"d/binary.bin":  "abc\x00def",
		"d/late-nul.md": strings.Repeat("x", 9000) + "\x00",
		"d/latin1.txt":  string(mostlyInvalid),
		"d/repair.md":   "# Caf\xe9\n\ncaf\xe9 au lait\n",
		"d/empty.md":    "",
		"d/exact.txt":   "0123456789",
		"d/large.txt":   "0123456789a",
		"d/bom.md":      "\xEF\xBB\xBF# BOM title\n",
		"d/utf16.txt":   "\xFF\xFEh\x00i\x00 \x00\xE9\x00",
		"d/utf16be.txt": "\xFE\xFF\x00h\x00i",
	})
	r := walk(t, []string{"d"}, Options{MaxFileSize: 10})
	if r.err != nil {
		t.Fatal(r.err)
	}
	wantSkips := map[string]SkipReason{
		"d/binary.bin":  SkipBinary,
		"d/latin1.txt":  SkipTooLarge, // over 10 bytes: size is checked first
		"d/large.txt":   SkipTooLarge,
		"d/late-nul.md": SkipTooLarge,
		"d/repair.md":   SkipTooLarge,
		"d/bom.md":      SkipTooLarge,
	}
	if got := r.skipped(); !reflect.DeepEqual(got, wantSkips) {
		t.Errorf("skips = %v\nwant    %v", got, wantSkips)
	}

	r = walk(t, []string{"d"}, Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	wantSkips = map[string]SkipReason{
		"d/binary.bin": SkipBinary,
		"d/latin1.txt": SkipBinary,
	}
	if got := r.skipped(); !reflect.DeepEqual(got, wantSkips) {
		t.Errorf("skips = %v\nwant    %v", got, wantSkips)
	}
	for _, s := range r.skips {
		if s.Err == nil {
			t.Errorf("skip %s has no Err", s.Path)
		}
	}
	content := map[string]string{}
	titles := map[string]string{}
	for _, d := range r.docs {
		content[d.URI] = d.Content
		titles[d.URI] = d.Title
	}
	checks := []struct{ uri, content, title string }{
		{"d/repair.md", "# Caf\uFFFD\n\ncaf\uFFFD au lait\n", "Caf\uFFFD"},
		{"d/empty.md", "", "empty.md"},
		{"d/exact.txt", "0123456789", "exact.txt"},
		{"d/large.txt", "0123456789a", "large.txt"},
		{"d/late-nul.md", strings.Repeat("x", 9000) + "\x00", "late-nul.md"},
		{"d/bom.md", "# BOM title\n", "BOM title"},
		{"d/utf16.txt", "hi é", "utf16.txt"},
		{"d/utf16be.txt", "hi", "utf16be.txt"},
	}
	for _, c := range checks {
		got, ok := content[c.uri]
		if !ok {
			t.Errorf("%s was not loaded", c.uri)
			continue
		}
		if got != c.content {
			t.Errorf("%s content = %q, want %q", c.uri, got, c.content)
		}
		if titles[c.uri] != c.title {
			t.Errorf("%s title = %q, want %q", c.uri, titles[c.uri], c.title)
		}
	}
	for _, want := range []string{
		`level=WARN msg="repaired invalid UTF-8`, "path=d/repair.md", "bytes=2",
		`level=INFO msg="skipped binary file" path=d/binary.bin`,
	} {
		if !strings.Contains(r.log, want) {
			t.Errorf("log does not contain %q:\n%s", want, r.log)
		}
	}

	// An explicitly named file that is too large or binary is skipped, not an error.
	r = walk(t, []string{"d/large.txt", "d/binary.bin"}, Options{MaxFileSize: 10})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.skipped(); !reflect.DeepEqual(got, map[string]SkipReason{"d/large.txt": SkipTooLarge, "d/binary.bin": SkipBinary}) {
		t.Errorf("skips = %v", got)
	}
	if !strings.Contains(r.log, "level=WARN") || !strings.Contains(r.log, "d/large.txt") {
		t.Errorf("too-large file is not warned about:\n%s", r.log)
	}
}

// unreadable makes path unreadable, or skips the test when that is not
// possible (running as root, or on a file system without permissions).
func unreadable(t *testing.T, path string) {
	t.Helper()
	err := os.Chmod(path, 0)
	testenv.Platform(t, err == nil, fmt.Sprintf("chmod: %v", err))
	t.Cleanup(func() { _ = os.Chmod(path, 0o755) })
	if f, err := os.Open(path); err == nil {
		_, rerr := f.Read(make([]byte, 1))
		f.Close()
		if rerr == nil || rerr == io.EOF {
			if os.Getenv("SAGASU_TEST_UNPRIVILEGED") != "" {
				t.Fatal("chmod 000 does not stop reading, though this run is meant to be unprivileged")
			}
			testenv.Platform(t, false, "chmod 000 does not stop reading here (running as root?); scripts/unprivileged-tests.sh runs this test as nobody")
		}
	}
}

func TestWalkUnreadable(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	tree(t, root, map[string]string{
		"d/a.md":          "# A\n",
		"d/locked.md":     "# secret\n",
		"d/z.md":          "# Z\n",
		"d/lockdir/in.md": "# in\n",
	})
	unreadable(t, filepath.Join(root, "d", "locked.md"))
	unreadable(t, filepath.Join(root, "d", "lockdir"))

	r := walk(t, []string{"d"}, Options{})
	if r.err != nil {
		t.Fatalf("an unreadable file inside a directory is not fatal: %v", r.err)
	}
	if got, want := r.uris(), []string{"d/a.md", "d/z.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("URIs = %q, want %q", got, want)
	}
	want := map[string]SkipReason{"d/locked.md": SkipUnreadable, "d/lockdir": SkipUnreadable}
	if got := r.skipped(); !reflect.DeepEqual(got, want) {
		t.Errorf("skips = %v, want %v", got, want)
	}
	if !strings.Contains(r.log, "level=WARN") {
		t.Errorf("no warning logged:\n%s", r.log)
	}

	for _, in := range []string{"d/locked.md", "d/lockdir"} {
		r = walk(t, []string{in}, Options{})
		if r.err == nil || !strings.Contains(r.err.Error(), "cannot read") || !strings.Contains(r.err.Error(), in) ||
			!strings.Contains(r.err.Error(), "permission") {
			t.Errorf("explicit unreadable %s: err = %v", in, r.err)
		}
		if !errors.Is(r.err, fs.ErrPermission) {
			t.Errorf("explicit unreadable %s: %v is not fs.ErrPermission", in, r.err)
		}
	}
}

func TestWalkSymlinks(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	tree(t, root, map[string]string{
		"d/a.md":          "# A\n",
		"d/sub/b.md":      "# B\n",
		"outside/real.md": "# Real\n",
	})
	links := map[string]string{
		"d/loop":      "..",                 // a loop back up
		"d/sub/self":  ".",                  // a loop onto itself
		"d/link.md":   "sub/b.md",           // a symlinked file inside the folder is read
		"d/out.md":    "../outside/real.md", // one that leads out of the folder is not
		"d/broken.md": "nowhere.md",         // a dangling link
		"d/outside":   "../outside",         // a symlinked directory is not followed
		"linked-d":    "d",
	}
	for name, target := range links {
		err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name)))
		testenv.Platform(t, err == nil, fmt.Sprintf("symlinks not supported: %v", err))
	}

	done := make(chan result, 1)
	go func() { done <- walk(t, []string{"d"}, Options{}) }()
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("walking a directory with symlink loops does not finish")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, want := r.uris(), []string{"d/a.md", "d/link.md", "d/sub/b.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("URIs = %q, want %q", got, want)
	}
	if r.docs[1].Content != "# B\n" || r.docs[1].Title != "B" {
		t.Errorf("symlinked file: %+v", r.docs[1])
	}
	want := map[string]SkipReason{
		"d/out.md":    SkipLink,
		"d/loop":      SkipIgnored,
		"d/sub/self":  SkipIgnored,
		"d/outside":   SkipIgnored,
		"d/broken.md": SkipLink,
	}
	if got := r.skipped(); !reflect.DeepEqual(got, want) {
		t.Errorf("skips = %v, want %v", got, want)
	}

	// A symlinked directory named as an input is followed, once, and its
	// files keep the identity of the real folder's.
	r = walk(t, []string{"linked-d", "d"}, Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, want := r.uris(), []string{"d/a.md", "d/link.md", "d/sub/b.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("URIs = %q, want %q", got, want)
	}
}

func TestStdin(t *testing.T) {
	md := "# Hello\n\nworld\n"
	plain := "just some words\n"
	tests := []struct {
		name   string
		stdin  string
		format doc.Format
		title  string
	}{
		{"markdown", md, doc.FormatMarkdown, "Hello"},
		{"plain", plain, doc.FormatText, "stdin"},
		{"empty", "", doc.FormatText, "stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := walk(t, []string{"-"}, Options{Stdin: strings.NewReader(tt.stdin)})
			if r.err != nil {
				t.Fatal(r.err)
			}
			if len(r.docs) != 1 {
				t.Fatalf("got %d documents", len(r.docs))
			}
			d := r.docs[0]
			want := doc.Document{
				URI:     "stdin:" + doc.ContentHash(tt.stdin)[:12],
				Type:    doc.TypeText,
				Format:  tt.format,
				Title:   tt.title,
				Content: tt.stdin,
			}
			if d != want {
				t.Errorf("got  %+v\nwant %+v", d, want)
			}
		})
	}

	r := walk(t, []string{"-"}, Options{Stdin: strings.NewReader("bin\x00ary")})
	if r.err != nil || len(r.docs) != 0 || r.skipped()["-"] != SkipBinary {
		t.Errorf("binary stdin: err %v, docs %d, skips %v", r.err, len(r.docs), r.skips)
	}
	r = walk(t, []string{"-"}, Options{Stdin: strings.NewReader("0123456789a"), MaxFileSize: 10})
	if r.err != nil || len(r.docs) != 0 || r.skipped()["-"] != SkipTooLarge {
		t.Errorf("large stdin: err %v, docs %d, skips %v", r.err, len(r.docs), r.skips)
	}
	r = walk(t, []string{"-"}, Options{Stdin: iotestErrReader{}})
	if r.err == nil || !strings.Contains(r.err.Error(), `cannot read input "-" (stdin)`) {
		t.Errorf("failing stdin: err = %v", r.err)
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("device gone") }

func TestWalkCancel(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for _, name := range []string{"a", "b", "c", "d/e", "d/f", "g"} {
		files[name+".md"] = "# " + name + "\n"
	}
	tree(t, root, files)

	t.Run("cancelled during the walk", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls := 0
		err := Walk(ctx, []string{root}, Options{}, func(doc.Document) error {
			calls++
			cancel()
			return nil
		}, nil)
		if err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled itself", err)
		}
		if calls != 1 {
			t.Errorf("fn called %d times after cancel, want 1", calls)
		}
	})

	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := Walk(ctx, []string{root}, Options{}, func(doc.Document) error {
			t.Error("fn called")
			return nil
		}, nil)
		if err != context.Canceled {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("stdin that never ends", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			errc <- Walk(ctx, []string{"-"}, Options{Stdin: pr}, func(doc.Document) error { return nil }, nil)
		}()
		cancel()
		select {
		case err := <-errc:
			if err != context.Canceled {
				t.Errorf("err = %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("Walk did not return after cancel")
		}
	})

	t.Run("fn error stops the walk", func(t *testing.T) {
		stop := errors.New("stop here")
		calls := 0
		err := Walk(context.Background(), []string{root}, Options{}, func(doc.Document) error {
			calls++
			if calls == 2 {
				return stop
			}
			return nil
		}, nil)
		if err != stop {
			t.Errorf("err = %v, want fn's error as is", err)
		}
		if calls != 2 {
			t.Errorf("fn called %d times", calls)
		}
	})
}

func TestWalkDeterministic(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	names := []string{"b.md", "a/z.md", "a.md", "B.md", "a/b/c.md", "_x.md", "10.md", "9.md", "ä.md"}
	for _, n := range names {
		tree(t, root, map[string]string{n: "x\n"})
	}
	want := []string{"10.md", "9.md", "B.md", "_x.md", "a/b/c.md", "a/z.md", "a.md", "b.md", "ä.md"}
	for i := 0; i < 3; i++ {
		r := walk(t, []string{"."}, Options{})
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got := r.uris(); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: URIs = %q\nwant %q", i, got, want)
		}
	}
}

func TestWalkNilSkip(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{"bin": "\x00"})
	// A nil skip func and nil logger are fine.
	err := Walk(context.Background(), []string{root}, Options{}, func(doc.Document) error { return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
}

func TestWalkLiteralPathWithGlobCharacters(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	tree(t, root, map[string]string{"a[1].md": "# one\n", "a1.md": "# other\n", "x/*.md": "# star\n"})
	r := walk(t, []string{"a[1].md", "x/*.md"}, Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, want := r.uris(), []string{"a[1].md", "x/*.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("URIs = %q, want %q", got, want)
	}
	// Not an existing path: a glob, which matches "a1.md".
	r = walk(t, []string{"a[0-9].md"}, Options{})
	if got, want := r.uris(), []string{"a1.md"}; r.err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("URIs = %q, %v; want %q", got, r.err, want)
	}
}

// TestReadLimit checks reading a file or stdin whole: the content comes
// back exactly whether its size is known, unknown or wrong (a file that
// grew), and more than max bytes is reported as too large, not cut.
func TestReadLimit(t *testing.T) {
	content := strings.Repeat("日本語 text\n", 1000)
	tests := []struct {
		name      string
		max, size int64
		tooLarge  bool
	}{
		{"size known", 1 << 20, int64(len(content)), false},
		{"size unknown", 1 << 20, 0, false},
		{"file grew", 1 << 20, 100, false},
		{"exactly max", int64(len(content)), int64(len(content)), false},
		{"over max", int64(len(content)) - 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, tooLarge, err := readLimit(strings.NewReader(content), tt.max, tt.size)
			if err != nil || tooLarge != tt.tooLarge {
				t.Fatalf("readLimit = tooLarge %v, %v; want tooLarge %v", tooLarge, err, tt.tooLarge)
			}
			if !tt.tooLarge && got != content {
				t.Fatalf("readLimit returned %d bytes, want the %d of the input", len(got), len(content))
			}
		})
	}
}
