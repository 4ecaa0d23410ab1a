package ignore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

func TestWildmatch(t *testing.T) {
	// Cases from git's t3070-wildmatch, with WM_PATHNAME (pathname) as
	// .gitignore patterns with a "/" use it.
	tests := []struct {
		pat, text string
		pathname  bool
		want      bool
	}{
		{"foo", "foo", true, true},
		{"bar", "foo", true, false},
		{"???", "foo", true, true},
		{"*f", "foo", true, false},
		{"*", "foo/bar", true, false},
		{"*", "foo/bar", false, true},
		{"**", "foo/bar", true, true},
		{"foo/**/bar", "foo/bar", true, true},
		{"foo/**/bar", "foo/a/b/bar", true, true},
		{"foo/**", "foo/a/b", true, true},
		{"**/foo", "a/b/foo", true, true},
		{"**/foo", "foo", true, true},
		{"a**b", "a/b", true, false},
		{"a**b", "axb", true, true},
		{"foo*bar", "foo/baz/bar", true, false},
		{"*/bar", "foo/bar", true, true},
		{"\\*", "*", true, true},
		{"\\*", "a", true, false},
		{"[ab]", "a", true, true},
		{"[!ab]", "c", true, true},
		{"[^ab]", "a", true, false},
		{"[a-c]x", "bx", true, true},
		{"[]]", "]", true, true},
		{"[]-]", "-", true, true},
		{"[[:alpha:]]", "q", true, true},
		{"[[:digit:]]", "q", true, false},
		{"[[:nope:]]", "q", true, false},
		{"[a/]", "/", true, false},
		{"[a", "[a", true, false},
		{"a\\ ", "a ", true, true},
		{"a/**/b/c", "a/b/x/b/c", true, true},
		{"*.txt", "dir/a.txt", false, true},
		{"**/*.txt", "a.txt", true, true},
		{"foo/**/*.c", "foo/x/y/z.c", true, true},
	}
	for _, tt := range tests {
		if got := wildmatch(tt.pat, tt.text, tt.pathname); got != tt.want {
			t.Errorf("wildmatch(%q, %q, pathname=%v) = %v, want %v", tt.pat, tt.text, tt.pathname, got, tt.want)
		}
	}
}

func TestTreeRules(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", "# comment\n*.log\n!keep.log\nbuild/\n/top.md\nspace\\ \ntrail   \n\\#hash\n\\!bang\ndocs/**/gen\n")
	write(t, root, "sub/.gitignore", "local.md\n!*.log\n")
	write(t, root, "sub/.ignore", "ig.md\n")
	write(t, root, ".sagasuignore", "!trail\n")
	tr, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel   string
		dir   bool
		want  bool
		cause string
	}{
		{"a.log", false, true, "*.log"},
		{"keep.log", false, false, "!keep.log"},
		{"sub/a.log", false, false, "!*.log"}, // a deeper .gitignore re-includes
		{"build", true, true, "build/"},
		{"build", false, false, ""}, // a file called build is not a folder
		{"build/x.md", false, true, "build/"},
		{"x/build/y.md", false, true, "build/"},
		{"top.md", false, true, "/top.md"},
		{"sub/top.md", false, false, ""}, // anchored to the root
		{"space ", false, true, "space\\ "},
		{"trail", false, false, "!trail"}, // .sagasuignore wins over .gitignore
		{"#hash", false, true, "\\#hash"},
		{"!bang", false, true, "\\!bang"},
		{"docs/a/b/gen", false, true, "docs/**/gen"},
		{"docs/gen", false, true, "docs/**/gen"},
		{"sub/local.md", false, true, "local.md"},
		{"sub/deep/local.md", false, true, "local.md"},
		{"local.md", false, false, ""},
		{"sub/ig.md", false, true, "ig.md"},
		{"plain.md", false, false, ""},
	}
	for _, tt := range tests {
		m := tr.Match(tt.rel, tt.dir)
		if m.Ignored != tt.want || m.Pattern != tt.cause {
			t.Errorf("Match(%q, dir=%v) = %+v, want ignored=%v by %q", tt.rel, tt.dir, m, tt.want, tt.cause)
		}
	}
}

func TestRepoRulesAboveTheRoot(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, repo, ".git/info/exclude", "*.secret\n")
	write(t, repo, ".gitignore", "*.log\nsub/\n")
	write(t, repo, "docs/.gitignore", "draft.md\n")
	global := write(t, repo, "global-ignore", "*.tmp\n")
	// Indexing docs/ alone still follows the repository's rules.
	tr, err := New(filepath.Join(repo, "docs"), Options{GlobalExcludes: global})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{"a.log": true, "a.secret": true, "a.tmp": true, "draft.md": true, "a.md": false, "sub/a.md": true} {
		if got := tr.Match(rel, false).Ignored; got != want {
			t.Errorf("docs/%s ignored = %v, want %v", rel, got, want)
		}
	}
	// A folder the user names is read even when the repository ignores it.
	tr, err = New(filepath.Join(repo, "sub"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := tr.Match("a.md", false); m.Ignored {
		t.Errorf("sub/a.md under the named root sub/ is ignored by %s", m)
	}
}

func TestGlobalExcludesFile(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1"}
	getenv := func(k string) string { return env[k] }
	if got, want := GlobalExcludesFile(getenv), filepath.Join(home, ".config", "git", "ignore"); got != want {
		t.Errorf("default = %q, want %q", got, want)
	}
	env["XDG_CONFIG_HOME"] = filepath.Join(home, "xdg")
	if got, want := GlobalExcludesFile(getenv), filepath.Join(home, "xdg", "git", "ignore"); got != want {
		t.Errorf("with XDG_CONFIG_HOME = %q, want %q", got, want)
	}
	write(t, home, ".gitconfig", "[user]\n\texcludesFile = /wrong\n[core \"x\"]\n\texcludesfile = /wrong\n[Core]\n\tExcludesFile = \"~/my ignore\" ; comment\n")
	if got, want := GlobalExcludesFile(getenv), filepath.Join(home, "my ignore"); got != want {
		t.Errorf("core.excludesFile = %q, want %q", got, want)
	}
}

func write(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// names are what generated trees and patterns are made of, so that
// patterns often match: spaces, "#" and "!" exercise escapes.
var names = []string{"a", "b", "c", "ab", "a.md", "b.txt", "a b", "b ", "#a", "!a", "x*"}

var tokens = []string{"a", "b", "c", "*", "?", "**", "[ab]", "[!a]", "[^b]", "[a-c]", "[[:alpha:]]", "\\a", "\\*", ".md", ".txt", " ", "\\ ", "\\#", "\\!", "#", "!"}

func randomPattern(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteString("!")
	}
	if r.IntN(4) == 0 {
		b.WriteString("/")
	}
	segs := 1 + r.IntN(3)
	for i := range segs {
		if i > 0 {
			b.WriteString("/")
		}
		switch r.IntN(6) {
		case 5:
			b.WriteString("**")
		case 0, 1:
			b.WriteString(names[r.IntN(len(names))])
		case 2:
			b.WriteString([]string{"*", "**", "*.md", "a*", "?"}[r.IntN(5)])
		default:
			for range 1 + r.IntN(2) {
				b.WriteString(tokens[r.IntN(len(tokens))])
			}
		}
	}
	switch r.IntN(8) {
	case 0, 1:
		b.WriteString("/")
	case 2:
		b.WriteString("  ")
	}
	return b.String()
}

// TestMatchesGitCheckIgnore generates trees with nested .gitignore files,
// an info/exclude and a global excludes file, asks git check-ignore about
// every file and folder, and compares. SAGASU_IGNORE_CASES sets how many
// trees (default 150).
func TestMatchesGitCheckIgnore(t *testing.T) {
	git, err := exec.LookPath("git")
	testenv.Need(t, err == nil, "git is not on PATH")
	cases := 150
	if v := os.Getenv("SAGASU_IGNORE_CASES"); v != "" {
		fmt.Sscan(v, &cases)
	}
	ignored, total := 0, 0
	defer func() { t.Logf("%d trees, %d paths, %d of them ignored by git", cases, total, ignored) }()
	for seed := range uint64(cases) {
		r := rand.New(rand.NewPCG(seed, 38))
		dir := t.TempDir()
		repo := filepath.Join(dir, "repo")
		paths := map[string]bool{} // rel -> is a folder
		for range 4 + r.IntN(20) {
			depth := 1 + r.IntN(4)
			var segs []string
			for range depth {
				segs = append(segs, names[r.IntN(len(names))])
			}
			rel := strings.Join(segs, "/")
			if isDir, ok := paths[rel]; ok && isDir {
				continue
			}
			clash := false
			for i := 1; i < len(segs); i++ {
				if isDir, ok := paths[strings.Join(segs[:i], "/")]; ok && !isDir {
					clash = true
				}
			}
			if clash {
				continue
			}
			for i := 1; i < len(segs); i++ {
				paths[strings.Join(segs[:i], "/")] = true
			}
			paths[rel] = false
			write(t, repo, rel, "x")
		}
		var dirs []string
		for p, isDir := range paths {
			if isDir {
				dirs = append(dirs, p)
			}
		}
		sort.Strings(dirs)
		dirs = append([]string{""}, dirs...)
		var files []string
		for _, d := range dirs {
			if r.IntN(2) == 0 {
				continue
			}
			var lines []string
			for range 1 + r.IntN(5) {
				lines = append(lines, randomPattern(r))
			}
			files = append(files, fmt.Sprintf("%s/.gitignore:\n%s", d, strings.Join(lines, "\n")))
			write(t, repo, filepath.Join(d, ".gitignore"), strings.Join(lines, "\n")+"\n")
		}
		run(t, repo, git, nil, "init", "-q")
		info := randomPattern(r) + "\n"
		global := randomPattern(r) + "\n"
		write(t, repo, ".git/info/exclude", info)
		globalFile := write(t, dir, "global ignore", global)
		config := write(t, dir, "gitconfig", fmt.Sprintf("[core]\n\texcludesFile = %q\n", globalFile))
		env := map[string]string{"HOME": dir, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": config, "XDG_CONFIG_HOME": filepath.Join(dir, "xdg")}

		var all []string
		for p := range paths {
			all = append(all, p)
		}
		sort.Strings(all)
		var in bytes.Buffer
		for _, p := range all {
			in.WriteString(p + "\x00")
		}
		out := run(t, repo, git, &in, "check-ignore", "--stdin", "-z", "--no-index")
		gitSays := map[string]bool{}
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				gitSays[p] = true
			}
		}
		tr, err := New(repo, Options{GlobalExcludes: GlobalExcludesFile(func(k string) string { return env[k] })})
		if err != nil {
			t.Fatal(err)
		}
		ignored += len(gitSays)
		total += len(all)
		var diffs []string
		for _, p := range all {
			m := tr.Match(p, paths[p])
			if m.Ignored != gitSays[p] {
				diffs = append(diffs, fmt.Sprintf("%q (folder %v): git %v, sagasu %v by %s", p, paths[p], gitSays[p], m.Ignored, m))
			}
		}
		if len(diffs) > 0 {
			t.Fatalf("seed %d: %d of %d paths differ from git check-ignore:\n%s\nignore files:\n%s\ninfo/exclude: %q\nglobal: %q",
				seed, len(diffs), len(all), strings.Join(diffs, "\n"), strings.Join(files, "\n"), info, global)
		}
		// The same tree walked from a folder inside it: the repository's
		// rules above the folder apply too.
		for _, d := range dirs[1:] {
			if gitSays[d] || slices.ContainsFunc(dirs, func(a string) bool { return strings.HasPrefix(d, a+"/") && gitSays[a] }) {
				continue // git would not look inside; a named folder is read anyway
			}
			sub, err := New(filepath.Join(repo, filepath.FromSlash(d)), Options{GlobalExcludes: GlobalExcludesFile(func(k string) string { return env[k] })})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range all {
				rel, ok := strings.CutPrefix(p, d+"/")
				if !ok {
					continue
				}
				if m := sub.Match(rel, paths[p]); m.Ignored != gitSays[p] {
					t.Fatalf("seed %d, walked from %q: %q: git %v, sagasu %v by %s", seed, d, rel, gitSays[p], m.Ignored, m)
				}
			}
			break
		}
	}
}

func run(t *testing.T, dir, git string, stdin *bytes.Buffer, args ...string) string {
	t.Helper()
	cmd := exec.Command(git, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+filepath.Dir(dir), "GIT_CONFIG_GLOBAL="+filepath.Join(filepath.Dir(dir), "gitconfig"), "XDG_CONFIG_HOME="+filepath.Join(filepath.Dir(dir), "xdg"))
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		// check-ignore exits 1 when nothing is ignored.
		if ee, ok := err.(*exec.ExitError); !(ok && ee.ExitCode() == 1 && args[0] == "check-ignore") {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
	}
	return out.String()
}
