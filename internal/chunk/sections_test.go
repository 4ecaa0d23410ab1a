package chunk

import (
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

func TestSections(t *testing.T) {
	src := "---\ntitle: x\n---\n# Guide\n\nintro\n\n## Routing\n\nroutes\n\n```md\n# not a heading\n```\n\n### Dynamic Routes\n\nparams\n\n## Deploying\n\nship\n"
	secs := Sections(src)
	want := []struct {
		path string
		text string
	}{
		{"Guide", src[17:]},
		{"Guide > Routing", "## Routing\n\nroutes\n\n```md\n# not a heading\n```\n\n### Dynamic Routes\n\nparams\n\n"},
		{"Guide > Routing > Dynamic Routes", "### Dynamic Routes\n\nparams\n\n"},
		{"Guide > Deploying", "## Deploying\n\nship\n"},
	}
	if len(secs) != len(want) {
		t.Fatalf("got %d sections: %+v", len(secs), secs)
	}
	for i, w := range want {
		got := secs[i]
		if p := doc.JoinHeading(got.Heading); p != w.path || src[got.Start:got.End] != w.text {
			t.Errorf("section %d = %q %q, want %q %q", i, p, src[got.Start:got.End], w.path, w.text)
		}
	}
	if !slices.Equal(secs[2].Heading, []string{"Guide", "Routing", "Dynamic Routes"}) || secs[2].Level != 3 {
		t.Errorf("nested section: %+v", secs[2])
	}
	if len(Sections("no headings at all")) != 0 {
		t.Errorf("plain text has sections")
	}
}
