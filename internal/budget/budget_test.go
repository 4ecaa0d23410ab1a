package budget

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func counter(t *testing.T, margin float64) *Counter {
	t.Helper()
	c, err := New(Options{Margin: margin})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCount(t *testing.T) {
	c := counter(t, 0)
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Hello, world!", 4},
	} {
		if got := c.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	if ja := c.Count("日本語のテキスト"); ja < 4 || ja > 16 {
		t.Errorf("Japanese counts %d tokens", ja)
	}
	o, err := New(Options{Encoding: O200k})
	if err != nil || o.Encoding() != O200k || o.Count("hello world") != 2 {
		t.Errorf("o200k_base: %v, %d tokens", err, o.Count("hello world"))
	}
	m := counter(t, 0.2)
	text := strings.Repeat(" word", 100) // 100 tokens
	if got := m.Count(text); got != 120 {
		t.Errorf("100 tokens with a 20%% margin count as %d, want 120", got)
	}
	if _, err := New(Options{Encoding: "p50k"}); err == nil || !strings.Contains(err.Error(), "cl100k_base") {
		t.Errorf("unknown encoding: %v", err)
	}
	if _, err := New(Options{Margin: 1.5}); err == nil {
		t.Error("a margin of 150% was accepted")
	}
}

func TestLimits(t *testing.T) {
	l := DefaultLimits()
	if l.Mode("summary") != 5000 || l.Mode("detailed") != 15000 || l.Mode("full") != 25000 {
		t.Errorf("default limits %+v", l)
	}
	small, err := WithCap(4000)
	if err != nil || small.Mode("summary") != 4000 || small.Mode("detailed") != 4000 || small.Mode("") != 4000 {
		t.Errorf("WithCap(4000) = %+v, %v", small, err)
	}
	if _, err := WithCap(10); err == nil {
		t.Error("a 10-token cap was accepted")
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"abcdefghij", 5, "abcd…", true},
		{"日本語のテキスト", 4, "日本語…", true},
		{"one two three four five six", 16, "one two three…", true},
		{"x", 0, "", true},
	} {
		got, cut := Truncate(tc.in, tc.n)
		if got != tc.want || cut != tc.cut {
			t.Errorf("Truncate(%q, %d) = %q, %v; want %q, %v", tc.in, tc.n, got, cut, tc.want, tc.cut)
		}
		if utf8.RuneCountInString(got) > max(tc.n, 0) || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q: too long or invalid", tc.in, tc.n, got)
		}
	}
}

// doc is a response made of items with texts, as a tool would build it.
type doc struct {
	Items           []string `json:"items"`
	Omitted         int      `json:"omitted"`
	EstimatedTokens int      `json:"estimatedTokens"`
}

func render(items []string) Render[doc] {
	return func(s Shape, est int) (doc, []byte, error) {
		d := doc{Items: []string{}, Omitted: len(items) - s.Items, EstimatedTokens: est}
		for _, it := range items[:s.Items] {
			t, _ := Truncate(it, s.Text)
			d.Items = append(d.Items, t)
		}
		raw, err := json.Marshal(d)
		return d, raw, err
	}
}

// Fit measures each shape it tries once and does not measure the chosen
// one again: the size it writes in is the size measured, and the reply it
// returns is no larger than it says (nor smaller by more than a token or
// two: the digits of the number it replaced).
func TestFitMeasuresOnce(t *testing.T) {
	c := counter(t, 0.2)
	for _, n := range []int{0, 1, 50, 300, 2000} {
		items := []string{strings.Repeat("sidebar configuration ", n)}
		renders := 0
		r := render(items)
		f, err := Fit(c, 100_000, Shape{Items: 1, Text: 1 << 30}, 10, func(s Shape, est int) (doc, []byte, error) {
			renders++
			return r(s, est)
		})
		if err != nil {
			t.Fatal(err)
		}
		if renders != 2 {
			t.Errorf("%d words: rendered %d times, want 2 (measure, then write the size in)", n, renders)
		}
		got := c.Count(string(f.Wire))
		if f.Value.EstimatedTokens != f.Tokens || got > f.Tokens || f.Tokens-got > 2 {
			t.Errorf("%d words: stated %d (in value %d), measured %d", n, f.Tokens, f.Value.EstimatedTokens, got)
		}
	}
}

func TestFitShortensThenDrops(t *testing.T) {
	c := counter(t, 0)
	var items []string
	for i := range 10 {
		items = append(items, strings.Repeat("lorem ipsum dolor sit amet ", 100+i))
	}
	longest := utf8.RuneCountInString(items[9])
	full := Shape{Items: 10, Text: longest}

	// Room for everything: nothing is cut.
	f, err := Fit(c, 100_000, full, 100, render(items))
	if err != nil || f.Cut || f.Shape != full {
		t.Fatalf("roomy budget: shape %+v cut %v err %v", f.Shape, f.Cut, err)
	}
	// Room for all items, shortened: every item kept, texts cut.
	f, err = Fit(c, 2500, full, 100, render(items))
	if err != nil {
		t.Fatal(err)
	}
	if f.Shape.Items != 10 || f.Shape.Text >= longest || f.Shape.Text < 100 || !f.Cut {
		t.Errorf("medium budget: shape %+v, want all 10 items with shorter texts", f.Shape)
	}
	if got := c.Count(string(f.Wire)); f.Tokens > 2500 || got > f.Tokens || f.Tokens-got > 2 {
		t.Errorf("medium budget: %d tokens stamped, %d measured", f.Tokens, c.Count(string(f.Wire)))
	}
	// Shortening to the minimum is not enough: the last items go first.
	f, err = Fit(c, 200, full, 100, render(items))
	if err != nil {
		t.Fatal(err)
	}
	if f.Shape.Text != 100 || f.Shape.Items == 0 || f.Shape.Items == 10 || f.Value.Omitted != 10-f.Shape.Items {
		t.Errorf("small budget: shape %+v omitted %d", f.Shape, f.Value.Omitted)
	}
	for i, it := range f.Value.Items {
		if !strings.HasPrefix(items[i], strings.TrimSuffix(it, "…")) {
			t.Errorf("item %d is not a prefix of the item at the same rank", i)
		}
	}
	if f.Tokens > 200 || !json.Valid(f.Wire) {
		t.Errorf("small budget: %d tokens, valid JSON %v", f.Tokens, json.Valid(f.Wire))
	}
	// Nothing fits.
	if _, err := Fit(c, 5, full, 100, render(items)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("tiny budget: %v, want ErrTooLarge", err)
	}
}

func TestTextBound(t *testing.T) {
	if got := TextBound([]int{10, 20}, 1000); got != 20 {
		t.Errorf("small texts: %d, want the longest (20)", got)
	}
	got := TextBound([]int{100_000, 100_000, 10}, 1000) // 4,000 runes to share
	if got < 1990 || got > 1995 {
		t.Errorf("two long texts under 1,000 tokens: bound %d, want about 1,995", got)
	}
}
