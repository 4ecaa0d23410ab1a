package analyze

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// The stem cache gives exactly what the Porter stemmer gives, for words
// met once and again, when more words than it has slots push each other
// out, and when several goroutines share it.
func TestStemCacheIsThePorterStemmer(t *testing.T) {
	base := []string{"relational", "conditional", "hopping", "ponies", "caresses", "motoring", "generalizations", "oscillators", "happy", "sky", "agreed", "feed"}
	var words []string
	for i := 0; len(words) < 3*stemSlots; i++ {
		for _, w := range base {
			// Distinct lower-case words with the base's suffix.
			words = append(words, strings.Map(func(r rune) rune { return 'a' + (r-'0')%26 }, fmt.Sprint(i))+w)
		}
	}
	want := make([]string, len(words))
	for i, w := range words {
		want[i] = string(porterStem([]byte(w)))
	}
	a := New(Options{})
	check := func(t *testing.T, from, step int) {
		for i := from; i < len(words); i += step {
			got := a.Terms(words[i])
			if len(got) != 1 || got[0] != want[i] {
				t.Errorf("Terms(%q) = %q, want [%q]", words[i], got, want[i])
				return
			}
		}
	}
	for pass := range 2 {
		t.Run(fmt.Sprint("pass ", pass), func(t *testing.T) { check(t, 0, 1) })
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			check(t, g, 3)
		}()
	}
	wg.Wait()
}
