package search

import (
	"context"
	"fmt"
	"math"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/embed"
)

// DocFreq gives how many chunks of the index contain each term, and how
// many chunks there are (terms analysed with Analyzer).
func (e *Engine) DocFreq(ctx context.Context, terms []string) (map[string]int, int, error) {
	return e.store.DocFreq(ctx, terms)
}

// ComparesMeaning reports whether the engine compares texts by meaning: the
// index has an embedder and the default mode uses it (an embedder kept
// for recall only, as static word vectors are, does not count).
func (e *Engine) ComparesMeaning() bool {
	return e.embedder != nil && e.DefaultMode() != ModeKeyword
}

// backgroundSize is how many chunks' vectors stand for the index when
// relatedness is standardised: enough for a steady mean and deviation.
const backgroundSize = 512

// Relatedness returns how close each chunk's stored embedding is to text's
// (embedded as a query): its cosine similarity less the mean similarity of
// the index's chunks to text, in standard deviations of that similarity.
// Standardised so, a value reads alike for any embedding model, whose raw
// cosines sit in ranges of their own. The index's chunks are represented
// by a sample of up to backgroundSize of them, read once per engine. A
// chunk without a stored vector is left out.
func (e *Engine) Relatedness(ctx context.Context, text string, ids []int64) (map[int64]float64, error) {
	if e.embedder == nil {
		return nil, fmt.Errorf("relatedness needs an embedder, and this index has none")
	}
	bg, err := e.background(ctx)
	if err != nil {
		return nil, err
	}
	q, err := e.embedder.EmbedQuery(ctx, text)
	if err != nil {
		return nil, fmt.Errorf("embed %q: %w", text, err)
	}
	vecs, err := e.store.VectorsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	mean, sd := 0.0, 0.0
	for _, v := range bg {
		mean += float64(embed.Dot(q, v))
	}
	if len(bg) > 0 {
		mean /= float64(len(bg))
		for _, v := range bg {
			d := float64(embed.Dot(q, v)) - mean
			sd += d * d
		}
		sd = math.Sqrt(sd / float64(len(bg)))
	}
	if sd < 1e-6 {
		sd = 1e-6
	}
	out := make(map[int64]float64, len(vecs))
	for id, v := range vecs {
		out[id] = (float64(embed.Dot(q, v)) - mean) / sd
	}
	return out, nil
}

// background returns the sample of chunk vectors relatedness is measured
// against: every chunk's up to backgroundSize, else an even spread of the
// first chunks in index order (a stride of at most 8), read once.
func (e *Engine) background(ctx context.Context) ([][]float32, error) {
	e.bgMu.Lock()
	defer e.bgMu.Unlock()
	if e.bg != nil {
		return e.bg, nil
	}
	st, err := e.store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	stride := min(max(1, st.Chunks/backgroundSize), 8)
	var ids []int64
	n := 0
	errEnough := fmt.Errorf("enough")
	err = e.store.EachChunk(ctx, func(c doc.Chunk, _ string) error {
		if n%stride == 0 {
			ids = append(ids, c.ID)
		}
		n++
		if len(ids) >= backgroundSize {
			return errEnough
		}
		return nil
	})
	if err != nil && err != errEnough {
		return nil, fmt.Errorf("sample the index's vectors: %w", err)
	}
	vecs, err := e.store.VectorsByID(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("sample the index's vectors: %w", err)
	}
	bg := make([][]float32, 0, len(vecs))
	for _, id := range ids {
		if v := vecs[id]; v != nil {
			bg = append(bg, v)
		}
	}
	e.bg = bg
	return bg, nil
}
