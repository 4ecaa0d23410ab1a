package chunk

import (
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

func TestCleanHeading(t *testing.T) {
	for in, want := range map[string]string{
		"useData <Badge type=\"info\" text=\"composable\" />": "useData",
		"`base` {#base}": "base",
		"概要 { #about }":  "概要",
		"`yield`を持つ依存関係 { #dependencies-with-yield }": "yieldを持つ依存関係",
		"Using <code>vite</code> plugins":             "Using vite plugins",
		"See [the guide](./guide.md) **now**":         "See the guide now",
		"a < b and c > d":                             "a < b and c > d",
		"C++ {.cpp}":                                  "C++",
		"Plain":                                       "Plain",
	} {
		if got := CleanHeading(in); got != want {
			t.Errorf("CleanHeading(%q) = %q, want %q", in, got, want)
		}
	}
}

// Heading paths carry no markup: what the reader sees of the heading.
func TestHeadingPathsWithoutMarkup(t *testing.T) {
	src := "# Runtime API { #runtime }\n\nIntro.\n\n## `useData` <Badge type=\"info\" text=\"composable\" />\n\nReturns page data.\n\nSetext <Badge text=\"x\"/>\n---\n\nMore.\n"
	chunks, err := Split(doc.Document{URI: "a.md", Format: doc.FormatMarkdown, Content: src}, Options{MaxTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, c := range chunks {
		paths[c.HeadingPath()] = true
	}
	for _, want := range []string{"Runtime API", "Runtime API > useData", "Runtime API > Setext"} {
		if !paths[want] {
			t.Errorf("no chunk under %q: %v", want, paths)
		}
	}
	secs := Sections(src)
	if len(secs) != 3 || secs[1].Heading[1] != "useData" {
		t.Errorf("sections: %+v", secs)
	}
}
