package planact

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// This file is the one place that knows internal/loop's types; when loop's
// inputs change (search.ResultView → doc.Hit), only it changes.

// LoopResearch is Research over internal/loop.
type LoopResearch struct {
	loop *loop.Engine
}

// NewLoopResearch returns Research over the index that s searches.
func NewLoopResearch(s *search.Engine, opt loop.Options) *LoopResearch {
	return &LoopResearch{loop: loop.New(s, opt)}
}

// Plan makes one stage per aspect of goal (loop.Engine.Aspects), each with
// the query loop.Engine.Plan gives it; an aspect the index has no words
// for gets a stage without a query.
func (r *LoopResearch) Plan(ctx context.Context, goal string) ([]Stage, error) {
	names, err := r.loop.Aspects(ctx, goal, nil)
	if err != nil {
		return nil, fmt.Errorf("split goal into aspects: %w", err)
	}
	out := make([]Stage, 0, len(names))
	for _, name := range names {
		p, err := r.loop.Plan(ctx, goal, loop.PlanOptions{Aspects: []string{name}})
		if err != nil || len(p.Stages) == 0 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out = append(out, Stage{Aspect: name, Description: "Find out about " + name})
			continue
		}
		out = append(out, Stage{Aspect: name, Description: p.Stages[0].Description, Query: p.Stages[0].Query})
	}
	if len(out) == 0 {
		return nil, errors.New("the goal has no aspects to search for")
	}
	return out, nil
}

// maxEvidence is how many pages are cited for one aspect.
const maxEvidence = 3

// Evaluate judges the pool of hits a run has gathered against one aspect
// (loop.Engine.AspectScores, by words and, with an embedder, by meaning):
// it is covered when some hit covers it, and the evidence is the best
// hits that do, one per page, best first, up to maxEvidence.
func (r *LoopResearch) Evaluate(ctx context.Context, goal, aspect string, hits []doc.Hit) (Coverage, error) {
	if len(hits) == 0 {
		return Coverage{Missing: []string{aspect}}, nil
	}
	scores, err := r.loop.AspectScores(ctx, goal, aspect, hits)
	if err != nil {
		return Coverage{}, fmt.Errorf("evaluate %q: %w", aspect, err)
	}
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	// Best covering first; of equals, the one found first (the better
	// ranked of the earlier searches).
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	c := Coverage{Score: scores[order[0]]}
	c.Evidence = bestPages(hits, scores, order, loop.FoundThreshold, maxEvidence)
	c.Covered = len(c.Evidence) > 0
	if !c.Covered {
		c.Missing = []string{aspect}
		c.Leads = bestPages(hits, scores, order, loop.CloseEnough, maxLeads)
	}
	return c, nil
}

// maxLeads is how many pages are cited for an aspect not found for certain.
const maxLeads = 2

// bestPages returns the chunk IDs of the best hits (in order, best first)
// that score at least min, one per page, at most n.
func bestPages(hits []doc.Hit, scores []float64, order []int, min float64, n int) []int64 {
	var out []int64
	pages := map[string]bool{}
	for _, i := range order {
		if scores[i] < min || len(out) == n {
			break
		}
		if pages[hits[i].Source.URI] {
			continue
		}
		pages[hits[i].Source.URI] = true
		out = append(out, hits[i].Chunk.ID)
	}
	return out
}

// Refine asks loop.Engine.Refine for a query aimed at aspect.
func (r *LoopResearch) Refine(ctx context.Context, goal, aspect, query string, hits []doc.Hit, avoid []string) (string, error) {
	ref, err := r.loop.Refine(ctx, loop.RefineInput{
		CurrentQuery: query, Goal: goal, MissingAspects: []string{aspect},
		Results: hits, Avoid: avoid,
	})
	if err != nil {
		return "", fmt.Errorf("refine %q: %w", query, err)
	}
	return ref.RefinedQuery, nil
}
