package loop

import (
	"slices"
	"strings"
	"testing"
)

// TestSplitSectionsReadsHeadingsAsTheChunkerDoes: packed sections start at
// the headings the chunker sees (ATX with a closing #, setext, never inside
// a code fence), and a heading keeps its own text ("C#", not "C").
func TestSplitSectionsReadsHeadingsAsTheChunkerDoes(t *testing.T) {
	text := "Intro line.\n\n## C#\n\nUse dotnet.\n\n```sh\n# not a heading\n```\n\nSetext Title\n------------\n\nBody.\n\n# Top ##\n\nLast.\n"
	got := splitSections([]string{"Guide"}, text)
	want := []struct {
		path  string
		lines []string
	}{
		{"Guide", []string{"Intro line."}},
		{"Guide > C#", []string{"Use dotnet.", "```sh", "# not a heading", "```"}},
		{"Guide > Setext Title", []string{"Body."}},
		{"Top", []string{"Last."}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d sections %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if p := strings.Join(got[i].path, " > "); p != w.path || !slices.Equal(got[i].lines, w.lines) {
			t.Errorf("section %d: %q %q, want %q %q", i, p, got[i].lines, w.path, w.lines)
		}
	}
	// The chunk's own heading repeated in its text starts no new section.
	own := splitSections([]string{"Guide", "Routing"}, "## Routing\n\nRoutes map URLs.\n")
	if len(own) != 1 || !slices.Equal(own[0].lines, []string{"Routes map URLs."}) {
		t.Errorf("repeated own heading: %+v", own)
	}
}
