package loop

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Similarity says by meaning how well results cover an aspect: synonyms,
// paraphrases and translations that share no word with it (a Japanese goal
// over English pages).
type Similarity interface {
	// Scores returns, for each hit, how well it covers aspect by meaning,
	// on the scale of the lexical coverage (0..1; FoundThreshold and above
	// is covered).
	Scores(ctx context.Context, aspect string, hits []doc.Hit) ([]float64, error)
}

// ByMeaning is a searcher that compares a text with the index's chunks by
// meaning: *search.Engine over an index with an embedder.
type ByMeaning interface {
	// ComparesMeaning reports whether it can: the index has an embedder
	// that its default mode uses.
	ComparesMeaning() bool
	// Relatedness returns how close each chunk's stored embedding is to
	// text's as a query, in standard deviations above the mean closeness of
	// the index's chunks to it (so that it reads the same for any model).
	Relatedness(ctx context.Context, text string, ids []int64) (map[int64]float64, error)
}

// SemanticThreshold is the relatedness (standard deviations above the
// index's mean) at which a chunk covers an aspect by meaning. It was
// calibrated with multilingual-e5-small on the labelled goals of
// testdata/goals/vitepress.json and vitepress-holdout.json. Pairwise (`sagasu
// eval goals --calibrate`: every labelled aspect against every chunk of the
// VitePress docs, a pair positive when the chunk lies in one of the aspect's
// labelled pages or sections) the best F1 is at 2.5 (precision 0.71, recall
// 0.55 over both sets); but a false "covered" stops the loop before it finds
// the aspect, and at 2.5 the loop's labelled coverage fell from 1.000 to
// 0.833 on the first set. 3.5 is the lowest threshold at which the loop
// covers as much as it does by words alone on both sets (1.000, 1.000)
// while it needs fewer searches (2.6 instead of 3.0 on the first set); its
// pairwise precision is 0.94 and 0.85, recall 0.26 and 0.41. docs/loop.md
// has the sweeps and the check on the held-out vitepress-holdout2.json.
const SemanticThreshold = 3.5

// NewSimilarity returns the Similarity of a searcher that compares by
// meaning, calibrated by SemanticThreshold: a chunk at the threshold scores
// FoundThreshold, one at the index's mean or below 0, one a standard
// deviation above the threshold 1. The aspect's scores are remembered for
// the engine's lifetime per (aspect, chunk), so a loop asks once.
func NewSimilarity(s ByMeaning) Similarity {
	return &meaning{s: s, memo: map[string]map[int64]float64{}}
}

type meaning struct {
	s    ByMeaning
	mu   sync.Mutex
	memo map[string]map[int64]float64 // aspect → chunk → relatedness
}

// maxMemo bounds the remembered aspects (an MCP server lives long).
const maxMemo = 256

func (m *meaning) Scores(ctx context.Context, aspect string, hits []doc.Hit) ([]float64, error) {
	m.mu.Lock()
	known := m.memo[aspect]
	var ask []int64
	for _, h := range hits {
		if _, ok := known[h.Chunk.ID]; !ok && h.Chunk.ID != 0 {
			ask = append(ask, h.Chunk.ID)
		}
	}
	m.mu.Unlock()
	if len(ask) > 0 {
		rel, err := m.s.Relatedness(ctx, aspect, ask)
		if err != nil {
			return nil, fmt.Errorf("relatedness of %q: %w", aspect, err)
		}
		m.mu.Lock()
		if m.memo[aspect] == nil {
			if len(m.memo) >= maxMemo {
				clear(m.memo)
			}
			m.memo[aspect] = map[int64]float64{}
		}
		for _, id := range ask {
			m.memo[aspect][id] = rel[id] // a chunk without a vector: 0
		}
		known = m.memo[aspect]
		m.mu.Unlock()
	}
	out := make([]float64, len(hits))
	m.mu.Lock()
	for i, h := range hits {
		out[i] = scaleRelatedness(known[h.Chunk.ID])
	}
	m.mu.Unlock()
	return out, nil
}

// scaleRelatedness maps a relatedness z to the loop's 0..1 scale:
// 0 at z ≤ 0, FoundThreshold at SemanticThreshold, 1 at SemanticThreshold+1.
func scaleRelatedness(z float64) float64 {
	switch {
	case z <= 0:
		return 0
	case z < SemanticThreshold:
		return FoundThreshold * z / SemanticThreshold
	}
	return math.Min(1, FoundThreshold+(1-FoundThreshold)*(z-SemanticThreshold))
}
