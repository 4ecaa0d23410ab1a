package glob

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		// "**" matches zero or more whole segments.
		{"docs/**/*.md", "docs/a.md", true},
		{"docs/**/*.md", "docs/x/a.md", true},
		{"docs/**/*.md", "docs/x/y/a.md", true},
		{"docs/**/*.md", "docs/x/y/a.txt", false},
		{"docs/**/*.md", "src/a.md", false},
		{"docs/**/*.md", "a.md", false},
		{"docs/**/*.md", "docs", false},
		{"**/*.md", "a.md", true},
		{"**/*.md", "a/b/c.md", true},
		{"**/*.md", "a/b/c.mdx", false},
		{"**", "a", true},
		{"**", "a/b/c", true},
		{"**", ".", true},
		{"**", "", true},
		{"docs/**", "docs", true},
		{"docs/**", "docs/a/b", true},
		{"docs/**", "doc", false},
		{"docs/**", "docsx/a", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"a/**/b/**/c", "a/b/c", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/b/b/c", true},
		{"a/**/b/**/c", "a/c", false},
		{"**/**/x", "x", true},
		{"**/**/x", "a/b/x", true},
		{"**/node_modules/**", "web/node_modules/react/index.js", true},
		{"**/node_modules/**", "node_modules", true},
		{"**/node_modules/**", "web/node_module/x", false},
		{"**/b", "a/b/c", false},
		// "**" inside a segment is a plain "*".
		{"a**b", "axxb", true},
		{"a**b", "ax/xb", false},
		{"docs**/x", "docs1/x", true},
		{"docs**/x", "docs/1/x", false},

		// Within a segment: like path.Match.
		{"*.md", "a.md", true},
		{"*.md", ".md", true},
		{"*.md", "docs/a.md", false},
		{"*", "a", true},
		{"*", ".hidden", true},
		{"*", "a/b", false},
		{"*/*", "a/b", true},
		{"?", "a", true},
		{"?", "é", true},
		{"?", "ab", false},
		{"a?c", "abc", true},
		{"a?c", "a/c", false},
		{"[abc].go", "b.go", true},
		{"[abc].go", "d.go", false},
		{"[a-c].go", "b.go", true},
		{"[^a-c].go", "b.go", false},
		{"[^a-c].go", "x.go", true},
		{"[é]", "é", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`a\[1\].md`, "a[1].md", true},
		{`[\]]`, "]", true},
		{`[\-]`, "-", true},
		{"a]", "a]", true},

		// Literal patterns.
		{"README.md", "README.md", true},
		{"README.md", "readme.md", false},
		{"docs/a.md", "docs/a.md", true},
		{"docs/a.md", "docs/b/a.md", false},

		// Names and patterns are cleaned.
		{"docs/*.md", "./docs/a.md", true},
		{"docs/*.md", "docs//a.md", true},
		{"docs/*.md", "docs/x/../a.md", true},
		{"./docs/*.md", "docs/a.md", true},
		{"docs//*.md", "docs/a.md", true},
		{"docs/**/", "docs/a", true},
		{"docs/*.md", "docs/a.md/", true},

		// Backslashes are not separators.
		{"*.md", `docs\a.md`, true},
		{"docs/*.md", `docs\a.md`, false},
		{`docs\\*.md`, `docs\a.md`, true},

		// Absolute paths: the root is matched only by "/" or "**".
		{"/srv/*.md", "/srv/a.md", true},
		{"/srv/*.md", "srv/a.md", false},
		{"srv/*.md", "/srv/a.md", false},
		{"*/srv/*.md", "/srv/a.md", false},
		{"**/*.md", "/srv/a.md", true},
		{"/**/*.md", "/srv/x/a.md", true},
		{"/**", "/", true},
		{"/*", "/a", true},
		{"/*", "/", false},
		{"*", "/", false},

		// Parent directories are plain segments.
		{"../*.md", "../a.md", true},
		{"*/*.md", "../a.md", true},
		{"../*.md", "a.md", false},

		// Malformed patterns match nothing.
		{"[", "[", false},
		{"a/[b", "a/[b", false},
		{`a\`, `a\`, false},
		{"", "", false},
		{"", ".", false},
		{"x/[/../y", "y", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" ~ "+tt.name, func(t *testing.T) {
			if got := Match(tt.pattern, tt.name); got != tt.want {
				t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
			}
		})
	}
}

func TestMatchBelow(t *testing.T) {
	tests := []struct {
		pattern, dir string
		want         bool
	}{
		{"docs/*/a.md", ".", true},
		{"docs/*/a.md", "docs", true},
		{"docs/*/a.md", "docs/x", true},
		{"docs/*/a.md", "docs/x/y", false},
		{"docs/*/a.md", "src", false},
		{"docs/**/*.md", "docs/x/y/z", true},
		{"docs/**/*.md", "docsx", false},
		{"docs/**", "docs", true},
		{"**", "anything/at/all", true},
		{"*.md", ".", true},
		{"*.md", "sub", false},
		{"a/b", "a", true},
		{"a/b", "a/b", false},
		{"/srv/**/*.md", "/srv/x", true},
		{"/srv/**/*.md", "/etc", false},
		{"[", ".", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" below "+tt.dir, func(t *testing.T) {
			if got := MatchBelow(tt.pattern, tt.dir); got != tt.want {
				t.Errorf("MatchBelow(%q, %q) = %v, want %v", tt.pattern, tt.dir, got, tt.want)
			}
		})
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		pattern string
		problem string // substring of the error; "" means valid
	}{
		{"docs/**/*.md", ""},
		{"*.md", ""},
		{"**", ""},
		{"a**b", ""},
		{"[abc]", ""},
		{"[^a-z]", ""},
		{`[\]]`, ""},
		{`[\-]`, ""},
		{`[a\-z]`, ""},
		{"[*]", ""},
		{"[[]", ""},
		{"a]", ""},
		{`\[`, ""},
		{`a\\b`, ""},
		{"/abs/*.md", ""},
		{"./x", ""},
		{"a//b", ""},
		{"[é-ü]", ""},

		{"", "pattern is empty"},
		{"[", "unclosed character class"},
		{"docs/[a", "unclosed character class"},
		{"[a-", "unclosed character class"},
		{"[a-b", "unclosed character class"},
		{`[\`, "unclosed character class"},
		{`[a\]`, "unclosed character class"},
		{"[^", "unclosed character class"},
		{"x/[a/b]/y", `a class cannot contain "/"`},
		{"[]", `empty character class "[]"`},
		{"[^]", `empty character class "[]"`},
		{"[]a]", `empty character class "[]"`},
		{"[-a]", `"-" in a character class`},
		{"[a-]", `"]" in a character class`},
		{"[a--]", `"-" in a character class`},
		{`a\`, `escapes nothing`},
		{`docs/\`, `escapes nothing`},
		{"[\xff]", "invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			err := Valid(tt.pattern)
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("Valid(%q) = %v, want nil", tt.pattern, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Valid(%q) = nil, want an error about %q", tt.pattern, tt.problem)
			}
			if !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("Valid(%q) = %q, want it to say %q", tt.pattern, err, tt.problem)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.pattern)) {
				t.Errorf("Valid(%q) = %q does not name the pattern", tt.pattern, err)
			}
			var pe *PatternError
			if !errors.Is(err, ErrBadPattern) || !errors.As(err, &pe) {
				t.Errorf("Valid(%q) = %#v, want a *PatternError wrapping ErrBadPattern", tt.pattern, err)
			}
		})
	}
}

func TestValidErrorNamesSegment(t *testing.T) {
	err := Valid("docs/[ab/x.md")
	want := `glob pattern "docs/[ab/x.md": segment "[ab": unclosed character class "[" (add "]", or write "\[" for a literal "["); a class cannot contain "/"`
	if err == nil || err.Error() != want {
		t.Errorf("Valid = %v, want %s", err, want)
	}
}

func TestHasMeta(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"docs/a.md", false},
		{"", false},
		{".", false},
		{"a-b_c d.txt", false},
		{"{a,b}", false}, // braces are not special here
		{"*.md", true},
		{"a?", true},
		{"[ab]", true},
		{"docs/**", true},
		{`a\b`, true},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := HasMeta(tt.s); got != tt.want {
				t.Errorf("HasMeta(%q) = %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestBase(t *testing.T) {
	tests := []struct {
		pattern, want string
	}{
		{"docs/**/*.md", "docs"},
		{"docs/guide/*.md", "docs/guide"},
		{"docs/*/intro.md", "docs"},
		{"docs/a.md", "docs"},
		{"a.md", "."},
		{"*.md", "."},
		{"**/*.md", "."},
		{"**", "."},
		{"./docs/*.md", "docs"},
		{"docs//x/*.md", "docs/x"},
		{"docs/**", "docs"},
		{"docs/", "."},
		{"/srv/docs/**/*.md", "/srv/docs"},
		{"/*.md", "/"},
		{"/", "."},
		{"../notes/*.txt", "../notes"},
		{"a/b?/c/*.md", "a"},
		{`a/b\*c/*.md`, "a"},
		{"", "."},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			if got := Base(tt.pattern); got != tt.want {
				t.Errorf("Base(%q) = %q, want %q", tt.pattern, got, tt.want)
			}
		})
	}
}

// FuzzMatch checks that nothing panics on any input, and the properties that
// the rest of sagasu relies on.
func FuzzMatch(f *testing.F) {
	seeds := [][2]string{
		{"docs/**/*.md", "docs/x/y/a.md"},
		{"**", ""},
		{"/**/x", "/a/x"},
		{"[a-z]*?", "abc"},
		{`[\]]`, "]"},
		{"[^]", "x"},
		{`a\`, "a"},
		{"a/[b/c]", "a/b"},
		{"../*/**", "../a/b"},
		{"[\xff]", "\xff"},
		{"*", "/"},
		{"a**b/**/c", "axb/c"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		matched := Match(pattern, name)
		below := MatchBelow(pattern, name)
		base := Base(pattern)
		_ = HasMeta(pattern)
		err := Valid(pattern)

		// Valid agrees with path.Match on every segment.
		if pattern != "" {
			var stdErr error
			for _, seg := range strings.Split(pattern, "/") {
				if _, e := path.Match(seg, "x"); e != nil {
					stdErr = e
					break
				}
			}
			if (err == nil) != (stdErr == nil) {
				t.Fatalf("Valid(%q) = %v, path.Match says %v", pattern, err, stdErr)
			}
		}
		if err != nil {
			if matched || below {
				t.Fatalf("malformed pattern %q matched %q", pattern, name)
			}
			return
		}

		// Within one segment, Match is path.Match.
		if !strings.ContainsAny(pattern+name, "/") && !strings.Contains(pattern, "**") &&
			name != "" && name != "." {
			want, _ := path.Match(pattern, name)
			if clean := path.Clean(pattern); clean != pattern {
				want, _ = path.Match(clean, name)
			}
			if matched != want {
				t.Fatalf("Match(%q, %q) = %v, path.Match says %v", pattern, name, matched, want)
			}
		}

		// Every match lies in or under Base, so a walk from Base finds it.
		if matched && base != "." {
			n := path.Clean(name)
			under := n == base || strings.HasPrefix(n, strings.TrimSuffix(base, "/")+"/")
			if !under {
				t.Fatalf("Match(%q, %q) but %q is not under Base %q", pattern, name, n, base)
			}
		}

		// A name matches only if its parent directory could hold a match.
		if matched && name != "" {
			if dir := path.Dir(path.Clean(name)); dir != path.Clean(name) && !MatchBelow(pattern, dir) {
				t.Fatalf("Match(%q, %q) but not MatchBelow(%q)", pattern, name, dir)
			}
		}
	})
}
