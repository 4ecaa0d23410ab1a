package loop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

func refineStats() fixedStats {
	s := vitepressStats()
	for w, df := range map[string]int{
		"frontmatter": 96, "yaml": 20, "customize": 40, "pages": 170, "caching": 50, "immutable": 3, "control": 10,
		"クリーンURL": 4,
	} {
		for _, t := range New(nil, Options{}).an.QueryTerms(w) {
			s.df[t] = df
		}
	}
	return s
}

func TestRefineJapaneseCombine(t *testing.T) {
	e := New(nil, Options{Stats: refineStats()})
	r, err := e.Refine(context.Background(), RefineInput{
		Goal: "最終更新日時とサイトマップとクリーンURLを設定する", CurrentQuery: "最終更新日時",
		FoundAspects: []string{"最終更新日時"}, MissingAspects: []string{"サイトマップ", "クリーンURL"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// combine is the default with aspects missing; 設定 is in a quarter of
	// the index, too common to add.
	if r.Strategy != StrategyCombine || r.RefinedQuery != "サイトマップ" || r.Target != "サイトマップ" || r.Origin != OriginAspect {
		t.Fatalf("refinement %+v", r)
	}
	want := Alternative{Query: "クリーン URL", Purpose: `find the missing aspect "クリーンURL"`}
	if !slices.Contains(r.Alternatives, want) {
		t.Fatalf("alternatives %+v lack %+v", r.Alternatives, want)
	}
	if !strings.HasPrefix(r.Reasoning, "combine: ") {
		t.Fatalf("reasoning %q", r.Reasoning)
	}
}

// TestRefineNarrowUsesSurfaceForms: feedback words come from the results in
// the form the documents write them ("YAML", not the stem "yaml"), only
// when they recur and the index has them.
func TestRefineNarrowUsesSurfaceForms(t *testing.T) {
	e := New(nil, Options{Stats: refineStats()})
	results := []doc.Hit{
		result(1, "guide/frontmatter.md", "Frontmatter > Usage", "Frontmatter is written in YAML at the top of a page.\nYAML frontmatter sets the title."),
		result(2, "reference/frontmatter-config.md", "Frontmatter Config > titleTemplate", "Set titleTemplate in the YAML frontmatter."),
	}
	r, err := e.Refine(context.Background(), RefineInput{Goal: "Customize the frontmatter of pages", CurrentQuery: "frontmatter", Results: results})
	if err != nil {
		t.Fatal(err)
	}
	if r.Strategy != StrategyNarrow || r.RefinedQuery != "frontmatter YAML" || r.Origin != OriginFeedback {
		t.Fatalf("refinement %+v; want narrow to \"frontmatter YAML\"", r)
	}
}

func TestRefinePivotToHeading(t *testing.T) {
	e := New(nil, Options{Stats: refineStats()})
	results := []doc.Hit{
		result(1, "guide/deploy.md", "Deploy Your Site > Caching Assets with HTTP Headers", "Hashed assets never change."),
		result(2, "guide/theme.md", "Theme", "The theme decides how pages look."),
	}
	r, err := e.Refine(context.Background(), RefineInput{
		Goal: deployGoal, CurrentQuery: "HTTP cache headers", Strategy: StrategyPivot,
		MissingAspects: []string{"HTTP cache headers"}, Results: results,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.RefinedQuery != "Caching Assets with HTTP Headers" || r.Origin != OriginHeading || r.Target != "HTTP cache headers" {
		t.Fatalf("refinement %+v; want the section heading", r)
	}
}

func TestRefineNeverRepeatsAQuery(t *testing.T) {
	e := New(nil, Options{Stats: refineStats()})
	results := []doc.Hit{result(1, "guide/sitemap.md", "Sitemap Generation", "Set sitemap.hostname to generate a sitemap.\nThe hostname is the URL of the site.")}
	r, err := e.Refine(context.Background(), RefineInput{
		Goal: deployGoal, CurrentQuery: "GitHub Pages", MissingAspects: []string{"generate a sitemap"},
		Avoid: []string{"Sitemap generate"}, Results: results,
	})
	if err != nil {
		t.Fatal(err)
	}
	q := newQuerySet(e, "Sitemap generate", "GitHub Pages")
	if q.has(r.RefinedQuery) || !strings.Contains(r.RefinedQuery, "hostname") {
		t.Fatalf("refined %q: repeats a query or lacks the feedback word", r.RefinedQuery)
	}
	for _, a := range r.Alternatives {
		if q.has(a.Query) {
			t.Errorf("alternative %q repeats an issued query", a.Query)
		}
	}
}

func TestRefineBadInput(t *testing.T) {
	e := New(nil, Options{Stats: refineStats()})
	ctx := context.Background()
	if _, err := e.Refine(ctx, RefineInput{Goal: " ", CurrentQuery: "x"}); !errors.Is(err, ErrEmptyGoal) {
		t.Errorf("empty goal: %v", err)
	}
	if _, err := e.Refine(ctx, RefineInput{Goal: deployGoal, Strategy: "sideways"}); err == nil || !strings.Contains(err.Error(), "broaden, narrow, pivot or combine") {
		t.Errorf("unknown strategy: %v", err)
	}
	_, err := e.Refine(ctx, RefineInput{Goal: "Kubernetes operators", CurrentQuery: "Helm charts", MissingAspects: []string{"Terraform"}})
	if err == nil || !strings.Contains(err.Error(), "index documents") {
		t.Errorf("nothing indexed: %v; want advice to index more", err)
	}
	// A missing aspect the index lacks is skipped, with a reason.
	r, err := e.Refine(ctx, RefineInput{Goal: deployGoal, CurrentQuery: "deploy", MissingAspects: []string{"Terraform", "generate a sitemap"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Target != "generate a sitemap" || !strings.Contains(r.Reasoning, `skipped "Terraform"`) {
		t.Errorf("refinement %+v", r)
	}
}

// TestRefinePrefersWhatWorkedBefore: a refinement that found the same
// aspect for a similar goal is proposed first; one that did not work is not.
func TestRefinePrefersWhatWorkedBefore(t *testing.T) {
	ctx := context.Background()
	cache, err := agentcache.Open(t.TempDir(), agentcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := New(nil, Options{Stats: refineStats(), Cache: cache})
	in := RefineInput{Goal: "Deploy to GitHub Pages and set HTTP cache headers", CurrentQuery: "deploy", MissingAspects: []string{"HTTP cache headers"}}
	first, err := e.Refine(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if first.Origin == OriginCache {
		t.Fatalf("an empty cache supplied %+v", first)
	}
	// A loop's record: the query found the aspect.
	e.saveRefinement(deployGoal, Refinement{CurrentQuery: "deploy", RefinedQuery: "Cache-Control immutable", Strategy: StrategyPivot, Target: "HTTP cache headers"},
		&outcome{Gain: 0.3, TargetFound: true})
	// A record that did not work.
	e.saveRefinement(deployGoal, Refinement{CurrentQuery: "deploy", RefinedQuery: "caching", Strategy: StrategyPivot, Target: "HTTP cache headers"},
		&outcome{Gain: 0, TargetFound: false})
	r, err := e.Refine(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if r.RefinedQuery != "Cache-Control immutable" || r.Origin != OriginCache || !strings.Contains(r.Reasoning, "worked before") {
		t.Fatalf("refinement %+v; want the query that worked before", r)
	}
	// Already issued: the cached query is not repeated.
	in.Avoid = []string{"Cache-Control immutable"}
	if r, err = e.Refine(ctx, in); err != nil || r.Origin == OriginCache {
		t.Fatalf("with the cached query issued: %+v, %v", r, err)
	}
	// Refine itself recorded its refinements (three calls, two seeded records).
	recs, err := cache.List(agentcache.ListOptions{Kind: agentcache.Refinements})
	if err != nil || len(recs) != 5 {
		t.Fatalf("%d refinement records, %v; want 5", len(recs), err)
	}
}

// TestRefineLearnsFromAgentEvaluations: a refinement an agent asked for is
// saved without an outcome; a later evaluation of its query that found the
// aspect marks it as one that worked.
func TestRefineLearnsFromAgentEvaluations(t *testing.T) {
	ctx := context.Background()
	cache, err := agentcache.Open(t.TempDir(), agentcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := New(nil, Options{Stats: refineStats(), Cache: cache})
	e.saveRefinement(deployGoal, Refinement{CurrentQuery: "deploy", RefinedQuery: "Cache-Control immutable", Target: "HTTP cache headers"}, nil)
	in := RefineInput{Goal: deployGoal, CurrentQuery: "deploy", MissingAspects: []string{"HTTP cache headers"}}
	if r, _ := e.Refine(ctx, in); r.Origin == OriginCache {
		t.Fatal("a refinement with no known outcome was reused")
	}
	results := []doc.Hit{result(4, "guide/deploy.md", "Deploy Your Site > HTTP Cache Headers", "Serve assets with Cache-Control: immutable.")}
	if _, err := e.Evaluate(ctx, EvaluateInput{Goal: deployGoal, Query: "Cache-Control immutable", Results: results, Iteration: 2}); err != nil {
		t.Fatal(err)
	}
	r, err := e.Refine(ctx, in)
	if err != nil || r.RefinedQuery != "Cache-Control immutable" || r.Origin != OriginCache {
		t.Fatalf("after the evaluation: %+v, %v", r, err)
	}
}
