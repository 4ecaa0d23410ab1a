package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRunes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"one two three", 8, "one two…"},
		{"one two three", 9, "one two…"}, // the space before the cut goes
		{"日本語のテキスト", 4, "日本語…"},
		{"anything", 0, "anything"},
		{"anything", 1, "…"},
		{"", 3, ""},
	} {
		if got := Runes(tt.in, tt.n); got != tt.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestRunesNeverExceedsNorSplits(t *testing.T) {
	s := strings.Repeat("aé日🙂 ", 50)
	for n := 1; n < utf8.RuneCountInString(s)+2; n++ {
		got := Runes(s, n)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > n {
			t.Fatalf("Runes(s, %d) = %q: %d runes, valid %v", n, got, utf8.RuneCountInString(got), utf8.ValidString(got))
		}
		if got != s && !strings.HasSuffix(got, Ellipsis) {
			t.Fatalf("Runes(s, %d) = %q: cut without a mark", n, got)
		}
	}
}

func TestLine(t *testing.T) {
	if got := Line("a\n\n  b\tc  ", 10); got != "a b c" {
		t.Errorf("Line = %q", got)
	}
	if got := Line("first line\nsecond line", 12); got != "first line…" {
		t.Errorf("Line = %q", got)
	}
}
