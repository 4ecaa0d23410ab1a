package loopeval

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// tuningSets are the project's goal sets; heldOut was written for issue 26
// before the loop's selection, its semantic aspects and the research brain
// were changed, and is only ever reported on.
var (
	tuningSets = []string{"../../../testdata/goals/vitepress.json", "../../../testdata/goals/vitepress-holdout.json"}
	heldOut    = "../../../testdata/goals/vitepress-holdout2.json"
	allSets    = append(slices.Clone(tuningSets), heldOut)
)

// vitepressEngine indexes the VitePress documentation, or skips the test
// when it is not there, and returns its search engine and a loop over it.
func vitepressEngine(t *testing.T) (*search.Engine, *loop.Engine) {
	t.Helper()
	// The real corpus the goal sets label, beside the repository.
	vitepressDocs := testenv.Shared(t, "vitepress-docs")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "vp.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rep, err := IndexCorpus(ctx, index.New(st, index.Options{}), vitepressDocs, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added < 60 {
		t.Fatalf("indexed only %d documents", rep.Added)
	}
	s := search.New(st)
	return s, loop.New(s, loop.Options{})
}

func result(id int64, uri, heading, text string) doc.Hit {
	var h []string
	if heading != "" {
		h = strings.Split(heading, " > ")
	}
	return doc.Hit{Chunk: doc.Chunk{ID: id, Text: text, Heading: h}, Source: doc.Source{URI: uri}}
}

func TestLoadGoalSetRejectsBadSets(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]string{
		"not json":        `{"goals": [`,
		"unknown field":   `{"goals": [{"id": "a", "goal": "g", "query": "q", "aspects": [{"name": "x", "pages": ["a.md"]}], "extra": 1}]}`,
		"no goals":        `{"name": "x", "goals": []}`,
		"duplicate id":    `{"goals": [{"id": "a", "goal": "g", "query": "q", "aspects": [{"name": "x", "pages": ["a.md"]}]}, {"id": "a", "goal": "g", "query": "q", "aspects": [{"name": "x", "pages": ["a.md"]}]}]}`,
		"empty goal":      `{"goals": [{"id": "a", "goal": " ", "query": "q", "aspects": [{"name": "x", "pages": ["a.md"]}]}]}`,
		"aspect no pages": `{"goals": [{"id": "a", "goal": "g", "query": "q", "aspects": [{"name": "x", "pages": []}]}]}`,
		"no aspects":      `{"goals": [{"id": "a", "goal": "g", "query": "q", "aspects": []}]}`,
	}
	for name, content := range tests {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadGoalSet(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v; want an error naming the file", name, err)
		}
	}
	if _, err := LoadGoalSet(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestCoversLabel(t *testing.T) {
	a := LabelledAspect{Name: "x", Pages: []string{"en/a.md", "en/b.md#Search > Local Search", "en/c.md#ClientOnly"}}
	tests := []struct {
		uri, heading string
		want         bool
	}{
		{"en/a.md", "Anything > Else", true},
		{"en/b.md", "Search > Local Search > i18n", true},
		{"en/b.md", "Search > Algolia Search > i18n", false},
		{"en/b.md", "Local Search", false}, // the label's path must appear whole
		{"en/c.md", "Runtime API > `<ClientOnly />` <Badge type=\"info\" text=\"component\" />", true},
		{"en/d.md", "Search > Local Search", false},
	}
	for _, tt := range tests {
		if got := coversLabel(a, result(1, tt.uri, tt.heading, "text")); got != tt.want {
			t.Errorf("coversLabel(%s, %q) = %v", tt.uri, tt.heading, got)
		}
	}
	// A section the chunker packed into a chunk's text counts; a heading
	// inside a code fence does not.
	packed := result(1, "en/b.md", "Search", "Intro.\n\n## Local Search\n\nEnable it.")
	fenced := result(1, "en/b.md", "Search", "```sh\n## Local Search\n```")
	if !coversLabel(a, packed) || coversLabel(a, fenced) {
		t.Errorf("packed section: %v, fenced comment: %v; want true, false", coversLabel(a, packed), coversLabel(a, fenced))
	}
}

// TestGoalSetLabelsResolve checks the committed goal sets against the
// corpus: every labelled page exists and every labelled section heading is
// the heading of some chunk, so no label silently never matches.
func TestGoalSetLabelsResolve(t *testing.T) {
	s, _ := vitepressEngine(t)
	ctx := context.Background()
	st := s.Store()
	for _, file := range allSets {
		set, err := LoadGoalSet(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Goals) < 8 {
			t.Errorf("%s has %d goals; the issue asks for at least 8", file, len(set.Goals))
		}
		ja := 0
		for _, g := range set.Goals {
			if strings.ContainsFunc(g.Goal, func(r rune) bool { return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) }) {
				ja++
			}
			if len(g.Aspects) < 2 || len(g.Aspects) > 4 {
				t.Errorf("%s: goal %s has %d aspects; want 2 to 4", file, g.ID, len(g.Aspects))
			}
			for _, a := range g.Aspects {
				for _, p := range a.Pages {
					page, _, _ := strings.Cut(p, "#")
					src, err := st.SourceByURI(ctx, page)
					if err != nil {
						t.Errorf("%s: goal %s: page %q: %v", file, g.ID, page, err)
						continue
					}
					chunks, err := st.Chunks(ctx, src.ID)
					if err != nil {
						t.Fatal(err)
					}
					one := LabelledAspect{Name: a.Name, Pages: []string{p}}
					found := false
					for _, c := range chunks {
						r := result(c.ID, src.URI, c.HeadingPath(), c.Text)
						if coversLabel(one, r) {
							found = true
							break
						}
					}
					if !found {
						t.Errorf("%s: goal %s: label %q matches no chunk", file, g.ID, p)
					}
				}
			}
		}
		if ja == 0 || ja == len(set.Goals) {
			t.Errorf("%s: %d of %d goals are Japanese; want a mix", file, ja, len(set.Goals))
		}
	}
}

// TestLoopBeatsBaselines is the closing note as a test: on the
// project's goal sets the loop covers more labelled aspects in its top 10
// than one query and than the goal text as a query, and never fewer than
// the single query on any goal, with no exception. Its own confidence is
// calibrated: result lists it scores 0.7 or more cover more than those it
// scores below 0.5.
func TestLoopBeatsBaselines(t *testing.T) {
	s, e := vitepressEngine(t)
	for _, file := range tuningSets {
		loopBeatsBaselines(t, s, e, file)
	}
}

// loopBeatsBaselines checks one goal set. The held-out set is not checked
// here: it is measured and reported (sagasu eval goals), never a gate the
// loop is fitted to.
func loopBeatsBaselines(t *testing.T, s *search.Engine, e *loop.Engine, file string) {
	t.Helper()
	set, err := LoadGoalSet(file)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := EvaluateGoals(context.Background(), s, e, set, GoalOptions{K: 10})
	if err != nil {
		t.Fatal(err)
	}
	av := rep.Average
	t.Logf("%s: single %.3f, goal text %.3f, loop %.3f (%.1f iterations), from goal %.3f, with aspects %.3f",
		set.Name, av.Single, av.GoalText, av.Loop, av.Iterations, av.LoopFromGoal, av.LoopAspects)
	if av.Loop <= av.Single || av.Loop <= av.GoalText {
		t.Errorf("%s: loop %.3f does not beat single %.3f and goal text %.3f", set.Name, av.Loop, av.Single, av.GoalText)
	}
	if av.LoopFromGoal <= av.Single {
		t.Errorf("%s: the loop from the goal alone %.3f does not beat one query %.3f", set.Name, av.LoopFromGoal, av.Single)
	}
	if len(rep.LoopWorseThanSingle) > 0 {
		t.Errorf("%s: the loop covers fewer aspects than one query on %v", set.Name, rep.LoopWorseThanSingle)
	}
	for _, g := range rep.Goals {
		if g.Iterations < 1 || g.Iterations > loop.DefaultMaxIterations {
			t.Errorf("%s: goal %s used %d iterations", set.Name, g.ID, g.Iterations)
		}
	}
	// Lists pooled on each side (a bin may hold a single list).
	var low, high struct{ lists, covered float64 }
	for _, b := range rep.Calibration {
		switch {
		case b.High <= 0.5:
			low.lists += float64(b.Lists)
			low.covered += float64(b.Lists) * b.MeanCoverage
		case b.Low >= 0.7:
			high.lists += float64(b.Lists)
			high.covered += float64(b.Lists) * b.MeanCoverage
		}
	}
	if low.lists == 0 || high.lists == 0 {
		t.Errorf("%s: calibration lacks lists on both sides of 0.7: %+v", set.Name, rep.Calibration)
	} else if high.covered/high.lists <= low.covered/low.lists {
		t.Errorf("%s: lists scored ≥ 0.7 cover %.2f, not more than those below 0.5 (%.2f)", set.Name, high.covered/high.lists, low.covered/low.lists)
	}
}
