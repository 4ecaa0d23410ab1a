package loopeval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

// TestCalibrateMeaning sweeps thresholds over labelled aspects and chunks
// (with a stand-in embedder whose vectors share the words' buckets).
func TestCalibrateMeaning(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.InitVectors(ctx, 64); err != nil {
		t.Fatal(err)
	}
	emb := embedtest.New(64)
	pages := map[string]string{
		"sitemap.md": "# Sitemap\n\nGenerate a sitemap of the site with the sitemap hostname option.\n",
		"deploy.md":  "# Deploy\n\nDeploy the built site to a static host such as GitHub Pages.\n",
		"theme.md":   "# Theme\n\nColors and fonts of the default theme are set with CSS variables.\n",
		"routing.md": "# Routing\n\nEvery markdown file is a page; folders become paths.\n",
	}
	var ds []doc.Document
	for uri, c := range pages {
		ds = append(ds, doc.Document{URI: uri, Type: doc.TypeFile, Format: doc.FormatMarkdown, Content: c})
	}
	if _, err := index.New(st, index.Options{Embedder: emb}).Documents(ctx, ds); err != nil {
		t.Fatal(err)
	}
	set := GoalSet{Name: "t", Goals: []GoalCase{{ID: "g", Goal: "sitemap and theme", Query: "q", Aspects: []LabelledAspect{
		{Name: "sitemap hostname", Pages: []string{"sitemap.md"}},
		{Name: "theme colors fonts", Pages: []string{"theme.md"}},
	}}}}
	cal, err := CalibrateMeaning(ctx, search.New(st, search.WithEmbedder(emb)), st, set)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Aspects != 2 || cal.Chunks != 4 || cal.Positives != 2 || len(cal.Sweep) == 0 {
		t.Fatalf("calibration %+v", cal)
	}
	if cal.Best.F1 != 1 {
		t.Errorf("the words' own pages stand out: best F1 %.3f at %.2f, want 1", cal.Best.F1, cal.Best.Z)
	}
	for i := 1; i < len(cal.Sweep); i++ {
		if cal.Sweep[i].Z <= cal.Sweep[i-1].Z || cal.Sweep[i].TP > cal.Sweep[i-1].TP {
			t.Errorf("sweep not monotone at %d: %+v then %+v", i, cal.Sweep[i-1], cal.Sweep[i])
		}
	}
	if _, err := CalibrateMeaning(ctx, search.New(st), st, set); err == nil {
		t.Error("calibrating without an embedder must fail")
	}
}
