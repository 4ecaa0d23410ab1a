package loop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/search"
)

func TestPlanAndExecuteStages(t *testing.T) {
	e := testEngine(t, corpus, Options{})
	ctx := context.Background()
	p, err := e.Plan(ctx, deployGoal, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Stages) != 3 || !strings.HasPrefix(p.ID, "plan-") || p.Goal != deployGoal {
		t.Fatalf("plan %+v", p)
	}
	wantQueries := []string{"Deploy GitHub Pages", "generate sitemap", "HTTP cache headers"}
	for i, s := range p.Stages {
		if s.StageNumber != i+1 || s.Query != wantQueries[i] || s.ExpectedResults.MinConfidence != DefaultMinConfidence {
			t.Errorf("stage %d: %+v", i, s)
		}
		if len(s.ExpectedResults.Keywords) == 0 || len(s.ExpectedResults.Keywords) > maxKeywords {
			t.Errorf("stage %d keywords %q", i, s.ExpectedResults.Keywords)
		}
		for _, k := range s.ExpectedResults.Keywords {
			if isFunctionWord(k) {
				t.Errorf("stage %d expects the function word %q", i, k)
			}
		}
	}
	again, _ := e.Plan(ctx, deployGoal, PlanOptions{})
	if again.ID != p.ID {
		t.Errorf("the same goal planned twice has IDs %s and %s", p.ID, again.ID)
	}
	for i := range p.Stages {
		r, err := e.ExecuteStage(ctx, p, i, QueryOptions{K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Success || !r.Evaluation.IsSuccessful || r.Evaluation.Score < DefaultMinConfidence || len(r.Results) == 0 || len(r.Results) > 3 {
			t.Fatalf("stage %d: %+v", i, r.Evaluation)
		}
		last := i == len(p.Stages)-1
		if r.ShouldContinue == last {
			t.Errorf("stage %d: shouldContinue %v", i, r.ShouldContinue)
		}
		want := StageNext{Step: StepAnswer}
		if !last {
			want = StageNext{Step: StepNextStage, Index: i + 1, Stage: &p.Stages[i+1]}
		}
		if r.Next.Step != want.Step || r.Next.Index != want.Index || (want.Stage != nil) != (r.Next.Stage != nil) ||
			want.Stage != nil && r.Next.Stage.Query != want.Stage.Query {
			t.Errorf("stage %d next %+v, want %+v", i, r.Next, want)
		}
	}
}

func TestExecuteStageJudgesKeywords(t *testing.T) {
	e := testEngine(t, corpus, Options{})
	p := Plan{ID: "plan-x", Goal: "sitemap", Stages: []Stage{{StageNumber: 1, Description: "d", Query: "sitemap",
		ExpectedResults: Expected{Keywords: []string{"sitemap", "hostname", "Kubernetes"}, MinConfidence: 0.9}}}}
	r, err := e.ExecuteStage(context.Background(), p, 0, QueryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Evaluation.IsSuccessful || !slices.Equal(r.Evaluation.MissingKeywords, []string{"Kubernetes"}) || !r.ShouldContinue {
		t.Fatalf("%+v continue %v", r.Evaluation, r.ShouldContinue)
	}
	if r.Next.Step != StepRetry {
		t.Fatalf("next %+v, want a retry of the stage", r.Next)
	}
	// Score: the weighted share of keywords found, strictly between 0 and 1.
	if r.Evaluation.Score <= 0 || r.Evaluation.Score >= 1 {
		t.Fatalf("score %v", r.Evaluation.Score)
	}
}

func TestExecuteStageBadInput(t *testing.T) {
	dir := t.TempDir()
	cache, err := agentcache.Open(dir, agentcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := testEngine(t, corpus, Options{Cache: cache})
	ctx := context.Background()
	good, err := e.Plan(ctx, deployGoal, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ExecuteStage(ctx, good, 0, QueryOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, idx := range []int{-1, 3, 100} {
		_, err := e.ExecuteStage(ctx, good, idx, QueryOptions{})
		if err == nil || !strings.Contains(err.Error(), "out of range") || !strings.Contains(err.Error(), "0 to 2") {
			t.Errorf("stage index %d: %v", idx, err)
		}
	}
	malformed := map[string]func(p *Plan){
		"no stages":     func(p *Plan) { p.Stages = nil },
		"empty goal":    func(p *Plan) { p.Goal = "" },
		"numbering":     func(p *Plan) { p.Stages[1].StageNumber = 7 },
		"empty query":   func(p *Plan) { p.Stages[2].Query = "  " },
		"confidence":    func(p *Plan) { p.Stages[0].ExpectedResults.MinConfidence = 1.5 },
		"empty keyword": func(p *Plan) { p.Stages[0].ExpectedResults.Keywords = []string{"a", ""} },
	}
	for name, breakIt := range malformed {
		p := good
		p.Stages = slices.Clone(good.Stages)
		for i := range p.Stages {
			p.Stages[i].ExpectedResults.Keywords = slices.Clone(good.Stages[i].ExpectedResults.Keywords)
		}
		breakIt(&p)
		if _, err := e.ExecuteStage(ctx, p, 0, QueryOptions{}); err == nil || !strings.Contains(err.Error(), "malformed plan") {
			t.Errorf("%s: %v; want a malformed plan error", name, err)
		}
	}
	if _, err := e.Plan(ctx, "  ", PlanOptions{}); !errors.Is(err, ErrEmptyGoal) {
		t.Errorf("empty goal: %v", err)
	}
	if _, err := e.Plan(ctx, "Kubernetes and Terraform", PlanOptions{}); err == nil || !strings.Contains(err.Error(), "index documents") {
		t.Errorf("unindexed goal: %v", err)
	}
	// Bad input cost nothing already cached: the one good stage is there.
	recs, err := cache.List(agentcache.ListOptions{Kind: agentcache.Stages})
	if err != nil || len(recs) != 1 {
		t.Errorf("stage records %d, %v; want the one good stage", len(recs), err)
	}
}

// blockingSearcher waits for its context to end: a search that never returns.
type blockingSearcher struct{}

func (blockingSearcher) Search(ctx context.Context, _ search.Request) (search.Response, error) {
	<-ctx.Done()
	return search.Response{}, ctx.Err()
}

func (blockingSearcher) DocFreq(context.Context, []string) (map[string]int, int, error) {
	return nil, 0, nil
}

func TestExecuteStageTimeoutCancelsTheSearch(t *testing.T) {
	e := New(blockingSearcher{}, Options{})
	p := Plan{ID: "plan-t", Goal: "g", Stages: []Stage{{StageNumber: 1, Query: "q", ExpectedResults: Expected{MinConfidence: 0.7}}}}
	_, err := e.ExecuteStage(context.Background(), p, 0, QueryOptions{Timeout: time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 1ms") {
		t.Fatalf("err = %v; want a timeout naming its length", err)
	}
	// The caller's own cancellation is reported as such, not as a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.ExecuteStage(ctx, p, 0, QueryOptions{})
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "timed out") {
		t.Fatalf("cancelled: %v", err)
	}
}
