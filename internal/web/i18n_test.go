package web

import (
	"regexp"
	"strings"
	"testing"
)

// TestMessagesCoverBothLanguages: every word the page asks i18n.js for
// (data-i18n* in index.html, t('…') in the scripts) is in the English
// table, and the Japanese table has exactly the English keys, so no label
// falls back to English or to its key in a Japanese page.
func TestMessagesCoverBothLanguages(t *testing.T) {
	read := func(name string) string {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	src := read("i18n.js")
	en, ja := src[strings.Index(src, "  en: {"):strings.Index(src, "  ja: {")], src[strings.Index(src, "  ja: {"):]
	keyRE := regexp.MustCompile(`(?m)^\s+'([\w.]+)': ['"]`)
	keys := func(block string) map[string]bool {
		out := map[string]bool{}
		for _, m := range keyRE.FindAllStringSubmatch(block, -1) {
			out[m[1]] = true
		}
		return out
	}
	enKeys, jaKeys := keys(en), keys(ja)
	if len(enKeys) < 50 {
		t.Fatalf("found %d English messages; the table's layout changed", len(enKeys))
	}
	for k := range enKeys {
		if !jaKeys[k] {
			t.Errorf("%q has no Japanese message", k)
		}
	}
	for k := range jaKeys {
		if !enKeys[k] {
			t.Errorf("%q is Japanese only", k)
		}
	}
	used := regexp.MustCompile(`data-i18n(?:-\w+)?="([\w.]+)"|\bt\('([\w.]+)'|\bkey: '([\w.]+)'|'(trace\.[\w.]+)' }`)
	n := 0
	for _, name := range []string{"index.html", "app.js", "md.js", "trace.js"} {
		for _, m := range used.FindAllStringSubmatch(read(name), -1) {
			k := m[1] + m[2] + m[3] + m[4]
			n++
			if !enKeys[k] {
				t.Errorf("%s asks for %q, which i18n.js lacks", name, k)
			}
		}
	}
	if n < 80 {
		t.Errorf("only %d words of the page go through i18n.js", n)
	}
}
