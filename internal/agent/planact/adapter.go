package planact

import (
	"context"
	"errors"
	"fmt"

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

// Evaluate judges hits against the one aspect with loop.Engine.Evaluate.
func (r *LoopResearch) Evaluate(ctx context.Context, goal, aspect string, hits []doc.Hit) (Coverage, error) {
	if len(hits) == 0 {
		return Coverage{Missing: []string{aspect}}, nil
	}
	ev, err := r.loop.Evaluate(ctx, loop.EvaluateInput{Goal: goal, Aspects: []string{aspect}, Results: hits})
	if err != nil {
		return Coverage{}, fmt.Errorf("evaluate %q: %w", aspect, err)
	}
	c := Coverage{Covered: len(ev.FoundAspects) > 0, Score: ev.Confidence, Missing: ev.MissingAspects}
	for _, a := range ev.Aspects {
		if a.Found && a.Evidence != nil {
			c.Evidence = append(c.Evidence, a.Evidence.ChunkID)
		}
	}
	return c, nil
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
