package loop

import (
	"context"
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/search"
)

func pageHit(id int64, page string) doc.Hit {
	h := result(id, page, "Title > Section", "text")
	h.Source.ID = page
	return h
}

// TestTopKeepsTheFirstSearchsPages: a second chunk of a page already chosen,
// however often later searches return it, does not push out a page the
// loop's first search found.
func TestTopKeepsTheFirstSearchsPages(t *testing.T) {
	e := New(nil, Options{})
	aspects := []aspect{{name: "a", terms: []string{"zzz"}, weight: []float64{1}, total: 1}}
	p := &pool{byID: map[int64]*pooled{}}
	a1, b1, c1, a2, d1 := pageHit(1, "a.md"), pageHit(2, "b.md"), pageHit(3, "c.md"), pageHit(4, "a.md"), pageHit(5, "d.md")
	ctx := context.Background()
	if _, err := p.add(ctx, e, aspects, []doc.Hit{a1, b1, c1}); err != nil {
		t.Fatal(err)
	}
	p.byID[1].cover[0] = 1 // a1 covers the aspect
	for range 3 {
		if _, err := p.add(ctx, e, aspects, []doc.Hit{a2, d1}); err != nil {
			t.Fatal(err)
		}
	}
	var got []int64
	for _, h := range p.top(aspects, 3) {
		got = append(got, h.Chunk.ID)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("top 3 = chunks %v; want the first search's three pages (1, 2, 3), not a second chunk of a.md (4)", got)
	}
	// With room to spare the rest come by fused rank.
	got = got[:0]
	for _, h := range p.top(aspects, 5) {
		got = append(got, h.Chunk.ID)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("top 5 = %v", got)
	}
}

// meaningSearcher compares by meaning with fixed relatedness per chunk.
type meaningSearcher struct {
	fixedStats
	rel   map[int64]float64
	on    bool
	calls int
}

func (m *meaningSearcher) Search(context.Context, search.Request) (search.Response, error) {
	return search.Response{}, nil
}
func (m *meaningSearcher) ComparesMeaning() bool { return m.on }
func (m *meaningSearcher) Relatedness(_ context.Context, _ string, ids []int64) (map[int64]float64, error) {
	m.calls++
	out := map[int64]float64{}
	for _, id := range ids {
		out[id] = m.rel[id]
	}
	return out, nil
}

func TestSimilarityByMeaning(t *testing.T) {
	for z, want := range map[float64]float64{-1: 0, 0: 0, SemanticThreshold / 2: FoundThreshold / 2, SemanticThreshold: FoundThreshold, SemanticThreshold + 1: 1, SemanticThreshold + 5: 1} {
		if got := scaleRelatedness(z); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("scaleRelatedness(%v) = %v, want %v", z, got, want)
		}
	}
	m := &meaningSearcher{fixedStats: newFixedStats(100, nil), rel: map[int64]float64{1: SemanticThreshold + 1, 2: 0.5}, on: true}
	e := New(m, Options{})
	if e.opt.Similarity == nil {
		t.Fatal("a searcher that compares meaning gives the loop a similarity")
	}
	hits := []doc.Hit{result(1, "ssr.md", "Compatibility", "Vue renders pages on the server."), result(2, "other.md", "Other", "Unrelated.")}
	ev, err := e.Evaluate(context.Background(), EvaluateInput{Goal: "g", Aspects: []string{"サーバーサイドレンダリング"}, Results: hits})
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Aspects[0].Found || ev.Aspects[0].Evidence.ChunkID != 1 {
		t.Errorf("a Japanese aspect over an English page is found by meaning: %+v", ev.Aspects[0])
	}
	// Scores are remembered: asking again costs no call.
	calls := m.calls
	if _, err := e.opt.Similarity.Scores(context.Background(), "サーバーサイドレンダリング", hits); err != nil || m.calls != calls {
		t.Errorf("second ask: %d calls, %v; want none", m.calls-calls, err)
	}
	// Without the embedder (or with one kept for recall) there is none.
	m.on = false
	if New(m, Options{}).opt.Similarity != nil {
		t.Error("a searcher that does not compare meaning gives no similarity")
	}
}

func TestWordsSplitJapaneseIntoContentWords(t *testing.T) {
	an := analyze.New(analyze.Options{})
	if got := words(an, "ビルド時のデータ読み込み and VitePress config.mts"); !slices.Equal(got, []string{"ビルド", "データ読み込み", "and", "VitePress", "config.mts"}) {
		t.Errorf("words = %q", got)
	}
	// The version 1 analyzer reads bigrams: words are runs of one script.
	if got := words(analyze.New(analyze.Options{Version: 1}), "データ読み込み"); !slices.Equal(got, []string{"データ", "読", "込"}) {
		t.Errorf("words with version 1 = %q", got)
	}
}

// modes records the mode of every search it passes on.
type modes struct {
	Searcher
	seen []search.Mode
}

func (m *modes) Search(ctx context.Context, req search.Request) (search.Response, error) {
	m.seen = append(m.seen, req.Mode)
	return m.Searcher.Search(ctx, req)
}

// TestEverySearchUsesTheRunsMode: a loop's searches, its probes for facets
// and feedback and a plan's probes included, search in the mode asked for,
// and with none asked for in the index's default (decided by the search
// engine alone: hybrid when the index has an embedder).
func TestEverySearchUsesTheRunsMode(t *testing.T) {
	base := testEngine(t, corpus, Options{}).search
	for _, mode := range []search.Mode{"", search.ModeKeyword} {
		m := &modes{Searcher: base}
		e := New(m, Options{})
		ctx := context.Background()
		if _, err := e.Run(ctx, RunOptions{Goal: deployGoal, Query: "deploy", K: 4, Mode: mode}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Plan(ctx, "deploy", PlanOptions{Mode: mode}); err != nil {
			t.Fatal(err)
		}
		if len(m.seen) < 3 {
			t.Fatalf("only %d searches", len(m.seen))
		}
		for i, got := range m.seen {
			if got != mode {
				t.Errorf("mode %q: search %d ran in %q", mode, i+1, got)
			}
		}
	}
}

// TestTopKeepsTheFirstSearchsSectionsThatAnswer: a second section of a page
// the first search found, which covers an aspect fairly though another
// page covers it best, stays in the selection ahead of hits that later
// searches return often.
func TestTopKeepsTheFirstSearchsSectionsThatAnswer(t *testing.T) {
	e := New(nil, Options{})
	aspects := []aspect{
		{name: "a", terms: []string{"zzz"}, weight: []float64{1}, total: 1},
		{name: "b", terms: []string{"yyy"}, weight: []float64{1}, total: 1},
	}
	p := &pool{byID: map[int64]*pooled{}}
	a1, a2, c1, d1, e1 := pageHit(1, "a.md"), pageHit(2, "a.md"), pageHit(3, "c.md"), pageHit(4, "d.md"), pageHit(5, "e.md")
	ctx := context.Background()
	if _, err := p.add(ctx, e, aspects, []doc.Hit{a1, a2, c1}); err != nil {
		t.Fatal(err)
	}
	p.byID[1].cover[0] = 1   // a1 covers a
	p.byID[2].cover[1] = 0.5 // a2, a second section of a.md, covers b fairly
	for range 3 {
		if _, err := p.add(ctx, e, aspects, []doc.Hit{e1, d1}); err != nil {
			t.Fatal(err)
		}
	}
	p.byID[4].cover[1] = 1 // d1 covers b best
	var got []int64
	for _, h := range p.top(aspects, 4) {
		got = append(got, h.Chunk.ID)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Errorf("top 4 = chunks %v; want a1 and d1 (each aspect's best), a2 (the first search's section on b) and c1 (its other page), not e1 (5)", got)
	}
}
