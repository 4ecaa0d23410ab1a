package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// vitepressStats are document frequencies shaped like the VitePress
// documentation (600 chunks): "vitepress" and "site" are everywhere,
// "sitemap" is in a handful of chunks.
func vitepressStats() fixedStats {
	return newFixedStats(600, map[string]int{
		"vitepress": 350, "site": 195, "page": 170, "config": 260, "theme": 185, "build": 120, "use": 200,
		"deploy": 35, "github": 100, "sitemap": 7, "generate": 33, "http": 40, "cache": 50, "headers": 20,
		"workflow": 5, "publishes": 3, "serve": 30, "assets": 40, "hostname": 4, "layout": 60, "slots": 10,
		"custom": 90, "css": 45, "components": 80, "extending": 12, "default": 150, "customize": 40,
		"最終更新日時": 6, "サイトマップ": 5, "クリーンURL": 4, "設定": 154, "表示": 67, "生成": 33, "ページ": 120,
		"各": 50, "有効": 40, "lastUpdated": 8,
	})
}

func deployResults() []doc.Hit {
	return []doc.Hit{
		result(1, "guide/deploy.md", "Deploy Your Site > Platform Guides > GitHub Pages", "Create a workflow file that builds the site and publishes it."),
		result(2, "guide/sitemap-generation.md", "Sitemap Generation", "Set sitemap.hostname to generate a sitemap."),
		result(3, "guide/theme.md", "Theme", "The theme decides how pages look."),
	}
}

const deployGoal = "Deploy to GitHub Pages, generate a sitemap, and set HTTP cache headers"

func TestEvaluateEnglishGoal(t *testing.T) {
	e := New(nil, Options{Stats: vitepressStats()})
	ctx := context.Background()
	ev, err := e.Evaluate(ctx, EvaluateInput{Goal: deployGoal, Query: "deploy", Results: deployResults()})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ev.FoundAspects, []string{"Deploy to GitHub Pages", "generate a sitemap"}) || !slices.Equal(ev.MissingAspects, []string{"HTTP cache headers"}) {
		t.Fatalf("found %q, missing %q", ev.FoundAspects, ev.MissingAspects)
	}
	// 2 of 3 aspects, 2 of 3 results on them: 0.667 × (0.75 + 0.25 × 0.667).
	if ev.Coverage != 0.667 || ev.Relevance != 0.667 || ev.Confidence != 0.611 {
		t.Fatalf("coverage %v relevance %v confidence %v; want 0.667 0.667 0.611", ev.Coverage, ev.Relevance, ev.Confidence)
	}
	if !ev.ShouldContinue || ev.Recommendation.Action != ActionRefine || !strings.Contains(ev.Recommendation.Reason, "HTTP cache headers") {
		t.Fatalf("recommendation %+v, continue %v; want refine naming the missing aspect", ev.Recommendation, ev.ShouldContinue)
	}
	ev0 := ev.Aspects[0]
	if ev0.Evidence == nil || ev0.Evidence.ChunkID != 1 || ev0.Evidence.URI != "guide/deploy.md" {
		t.Fatalf("evidence of the first aspect: %+v", ev0.Evidence)
	}

	// The missing section arrives: every aspect is covered.
	results := append(deployResults(), result(4, "guide/deploy.md", "Deploy Your Site > HTTP Cache Headers", "Serve hashed assets with Cache-Control: immutable."))
	ev, err = e.Evaluate(ctx, EvaluateInput{Goal: deployGoal, Query: "HTTP cache headers", Results: results, Iteration: 2, PreviousScore: ptr(0.611)})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Coverage != 1 || ev.Relevance != 0.75 || ev.Confidence != 0.938 {
		t.Fatalf("coverage %v relevance %v confidence %v; want 1 0.75 0.938", ev.Coverage, ev.Relevance, ev.Confidence)
	}
	if ev.ShouldContinue || ev.Recommendation.Action != ActionUseResults || ev.Stagnating {
		t.Fatalf("%+v continue=%v stagnating=%v; want use_results", ev.Recommendation, ev.ShouldContinue, ev.Stagnating)
	}
}

func TestEvaluateJapaneseGoal(t *testing.T) {
	e := New(nil, Options{Stats: vitepressStats()})
	results := []doc.Hit{
		result(1, "ja/guide/last-updated.md", "最終更新日時", "各ページの最終更新日時を表示するには lastUpdated を有効にします。"),
		result(2, "ja/guide/sitemap.md", "サイトマップ生成", "設定ファイルで sitemap.hostname を指定すると、ビルド時に sitemap.xml を生成します。"),
	}
	ev, err := e.Evaluate(context.Background(), EvaluateInput{Goal: "最終更新日時とサイトマップとクリーンURLを設定する", Results: results})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ev.FoundAspects, []string{"最終更新日時", "サイトマップ"}) || !slices.Equal(ev.MissingAspects, []string{"クリーンURL"}) {
		t.Fatalf("found %q missing %q", ev.FoundAspects, ev.MissingAspects)
	}
	if ev.Coverage != 0.667 || ev.Relevance != 1 || ev.Confidence != 0.667 || !ev.ShouldContinue {
		t.Fatalf("coverage %v relevance %v confidence %v continue %v", ev.Coverage, ev.Relevance, ev.Confidence, ev.ShouldContinue)
	}
}

// TestEvaluateHeadingGatesLines pins how text lines count: a line under a
// heading about something else counts half, so a page summary that lists
// "layouts, and slots" does not cover "layout slots"; the section does.
func TestEvaluateHeadingGatesLines(t *testing.T) {
	e := New(nil, Options{Stats: vitepressStats()})
	summary := result(1, "guide/extending-default-theme.md", "Extending the Default Theme", "description: Customize the default theme with custom CSS, components, layouts, and slots.")
	section := result(2, "guide/extending-default-theme.md", "Extending the Default Theme > Layout Slots", "The Layout component has a few slots.")
	for _, tt := range []struct {
		r     doc.Hit
		score float64
		found bool
	}{{summary, 0.5, false}, {section, 1, true}} {
		ev, err := e.Evaluate(context.Background(), EvaluateInput{Goal: "extend the theme", Aspects: []string{"layout slots"}, Results: []doc.Hit{tt.r}})
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.Aspects[0]; a.Score != tt.score || a.Found != tt.found {
			t.Errorf("%q: score %v found %v; want %v %v", tt.r.Chunk.HeadingPath(), a.Score, a.Found, tt.score, tt.found)
		}
	}
}

// TestConfidenceCalibration pins what the numbers mean. Confidence is
// coverage × (0.75 + 0.25 × relevance), so 0.7 is crossed when every aspect
// is found, or when three of four are and at least 80% of the results are on
// the goal; two of three aspects never reach it.
func TestConfidenceCalibration(t *testing.T) {
	e := New(nil, Options{}) // no statistics: every term weighs the same
	names := []string{"alpha widgets", "beta gadgets", "gamma gizmos", "delta doodads"}
	tests := []struct {
		aspects, found, offTopic int
		confidence               float64
		usable                   bool // confidence ≥ 0.7
		action                   string
		cont                     bool
	}{
		{3, 3, 0, 1, true, ActionUseResults, false},
		{3, 3, 3, 0.875, true, ActionUseResults, false},
		{3, 2, 0, 0.667, false, ActionRefine, true},
		{4, 3, 0, 0.75, true, ActionRefine, true}, // usable, but one focused query may find the fourth
		{4, 3, 2, 0.675, false, ActionRefine, true},
		{2, 1, 0, 0.5, false, ActionRefine, true},
		{2, 0, 4, 0, false, ActionRefine, true},
	}
	for _, tt := range tests {
		var rs []doc.Hit
		for i := 0; i < tt.found; i++ {
			rs = append(rs, result(int64(i+1), fmt.Sprintf("doc%d.md", i), names[i], "All about "+names[i]+"."))
		}
		for i := 0; i < tt.offTopic; i++ {
			rs = append(rs, result(int64(100+i), "other.md", "Other", "Nothing to see here."))
		}
		ev, err := e.Evaluate(context.Background(), EvaluateInput{Goal: "test goal", Aspects: names[:tt.aspects], Results: rs})
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%d of %d aspects, %d off-topic", tt.found, tt.aspects, tt.offTopic)
		if ev.Confidence != tt.confidence || (ev.Confidence >= DefaultMinConfidence) != tt.usable {
			t.Errorf("%s: confidence %v; want %v", name, ev.Confidence, tt.confidence)
		}
		if ev.Recommendation.Action != tt.action || ev.ShouldContinue != tt.cont {
			t.Errorf("%s: %s continue=%v; want %s continue=%v", name, ev.Recommendation.Action, ev.ShouldContinue, tt.action, tt.cont)
		}
	}
}

func TestEvaluateStagnationAndLimits(t *testing.T) {
	e := New(nil, Options{Stats: vitepressStats()})
	ctx := context.Background()
	in := EvaluateInput{Goal: deployGoal, Results: deployResults()} // confidence 0.611
	tests := []struct {
		name       string
		iteration  int
		previous   *float64
		history    []float64
		stagnating bool
		action     string
		cont       bool
	}{
		{"first iteration", 1, nil, nil, false, ActionRefine, true},
		{"gain over the previous", 2, ptr(0.3), nil, false, ActionRefine, true},
		{"no gain once: pivot", 2, ptr(0.611), nil, true, ActionPivot, true},
		{"no gain twice: stop with what was found", 3, nil, []float64{0.6, 0.611}, true, ActionUseResults, false},
		{"iteration limit", 5, nil, nil, false, ActionUseResults, false},
	}
	for _, tt := range tests {
		in.Iteration, in.PreviousScore, in.History = tt.iteration, tt.previous, tt.history
		ev, err := e.Evaluate(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Stagnating != tt.stagnating || ev.Recommendation.Action != tt.action || ev.ShouldContinue != tt.cont {
			t.Errorf("%s: stagnating %v, %s, continue %v; want %v, %s, %v (%s)", tt.name, ev.Stagnating, ev.Recommendation.Action, ev.ShouldContinue,
				tt.stagnating, tt.action, tt.cont, ev.Recommendation.Reason)
		}
	}
}

func TestEvaluateBadInput(t *testing.T) {
	e := New(nil, Options{Stats: vitepressStats()})
	ctx := context.Background()
	if _, err := e.Evaluate(ctx, EvaluateInput{Goal: "  ", Results: deployResults()}); !errors.Is(err, ErrEmptyGoal) {
		t.Errorf("empty goal: %v; want ErrEmptyGoal", err)
	}
	// No results: not an error; broaden.
	ev, err := e.Evaluate(ctx, EvaluateInput{Goal: deployGoal})
	if err != nil {
		t.Fatalf("no results: %v", err)
	}
	if ev.Results != 0 || ev.Confidence != 0 || ev.Recommendation.Action != ActionBroaden || !ev.ShouldContinue {
		t.Errorf("no results: %+v", ev.Recommendation)
	}
	// No results and the index has none of the goal's words: index more.
	ev, err = e.Evaluate(ctx, EvaluateInput{Goal: "Deploy with Kubernetes and Terraform"})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Recommendation.Action != ActionIndexMore || ev.ShouldContinue || !slices.Contains(ev.UnindexedWords, "Kubernetes") {
		t.Errorf("unindexed goal: %+v, unindexed %q", ev.Recommendation, ev.UnindexedWords)
	}
	// Results without text.
	blank := []doc.Hit{{Chunk: doc.Chunk{ID: 1}, Source: doc.Source{URI: "a.md"}}, {Chunk: doc.Chunk{ID: 2, Text: "  \n"}}}
	if _, err := e.Evaluate(ctx, EvaluateInput{Goal: deployGoal, Results: blank}); !errors.Is(err, ErrNoText) {
		t.Errorf("results without text: %v; want ErrNoText", err)
	}
	ev, err = e.Evaluate(ctx, EvaluateInput{Goal: deployGoal, Results: append(deployResults(), blank...)})
	if err != nil || ev.Results != 3 || ev.SkippedResults != 2 {
		t.Errorf("mixed results: %v, judged %d skipped %d; want 3 and 2", err, ev.Results, ev.SkippedResults)
	}
	// Explicit aspects with no words at all.
	if _, err := e.Evaluate(ctx, EvaluateInput{Goal: deployGoal, Aspects: []string{"!!", "…"}, Results: deployResults()}); err == nil {
		t.Error("aspects without words were accepted")
	}
}

func TestEvaluateExplicitAspectsAndUnindexed(t *testing.T) {
	e := New(nil, Options{Stats: vitepressStats()})
	ev, err := e.Evaluate(context.Background(), EvaluateInput{
		Goal: "anything", Aspects: []string{"sitemap", "Docker image"}, Results: deployResults(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ev.FoundAspects, []string{"sitemap"}) || !ev.Aspects[1].NotInIndex {
		t.Fatalf("found %q; aspects %+v", ev.FoundAspects, ev.Aspects)
	}
	// The only missing aspect cannot be found in this index: index more.
	if ev.Recommendation.Action != ActionIndexMore || ev.ShouldContinue {
		t.Fatalf("%+v continue %v; want index_more", ev.Recommendation, ev.ShouldContinue)
	}
}

// funcSimilarity is a Similarity from a function of an aspect and a text.
type funcSimilarity func(aspect, text string) float64

func (f funcSimilarity) Scores(_ context.Context, aspect string, hits []doc.Hit) ([]float64, error) {
	out := make([]float64, len(hits))
	for i, h := range hits {
		out[i] = f(aspect, h.Chunk.Text)
	}
	return out, nil
}

// TestEvaluateSimilarity: with a similarity by meaning, an aspect the words
// miss can still be found.
func TestEvaluateSimilarity(t *testing.T) {
	sim := funcSimilarity(func(aspect, text string) float64 {
		if aspect == "SSR" && strings.Contains(text, "server-side") {
			return 0.9
		}
		return 0
	})
	rs := []doc.Hit{result(1, "ssr.md", "Compatibility", "Vue renders pages server-side during the build.")}
	for _, tt := range []struct {
		sim   Similarity
		found bool
	}{{nil, false}, {sim, true}} {
		e := New(nil, Options{Similarity: tt.sim})
		ev, err := e.Evaluate(context.Background(), EvaluateInput{Goal: "g", Aspects: []string{"SSR"}, Results: rs})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Aspects[0].Found != tt.found {
			t.Errorf("similarity set %v: found %v", tt.sim != nil, ev.Aspects[0].Found)
		}
	}
}
