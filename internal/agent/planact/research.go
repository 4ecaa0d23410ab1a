package planact

import (
	"context"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Research is what the research brain needs of sagasu's own search loop:
// plan a goal into aspects, judge hits against an aspect, and refine a
// query; it searches through the knowledge base's functions (sagasu_query).
// Without a language model it is the whole brain. NewLoopResearch
// (adapter.go) backs it with internal/loop.
type Research interface {
	// Plan splits goal into stages, one per aspect.
	Plan(ctx context.Context, goal string) ([]Stage, error)
	// Evaluate judges whether hits (all a run has gathered) cover aspect of
	// goal, and which cover it best.
	Evaluate(ctx context.Context, goal, aspect string, hits []doc.Hit) (Coverage, error)
	// Refine proposes a better query for aspect than query, none of avoid.
	Refine(ctx context.Context, goal, aspect, query string, hits []doc.Hit, avoid []string) (string, error)
}

// Stage is one aspect of a research goal and the query to search it with.
// An empty Query means the index has none of the aspect's words.
type Stage struct {
	Aspect      string `json:"aspect"`
	Description string `json:"description"`
	Query       string `json:"query"`
}

// Coverage is how hits meet an aspect.
type Coverage struct {
	Covered bool     `json:"covered"`
	Score   float64  `json:"score"`
	Missing []string `json:"missing,omitempty"`
	// Evidence are the chunks that cover the aspect, best first (one per
	// page).
	Evidence []int64 `json:"evidence,omitempty"`
	// Leads are, for an aspect not covered, the chunks that come closest
	// (one per page): what to read when the aspect is not found for certain.
	Leads []int64 `json:"leads,omitempty"`
}
