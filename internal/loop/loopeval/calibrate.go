package loopeval

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// ThresholdStat is how well "relatedness ≥ Z" tells the chunks that cover a
// labelled aspect from those that do not, over every (aspect, chunk) pair.
type ThresholdStat struct {
	Z         float64 `json:"z"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Calibration is the sweep of thresholds over a goal set.
type Calibration struct {
	Set       string          `json:"set"`
	Aspects   int             `json:"aspects"`
	Chunks    int             `json:"chunks"`
	Positives int             `json:"positives"`
	Sweep     []ThresholdStat `json:"sweep"`
	// Best is the threshold with the highest F1 (the lowest of equals).
	Best ThresholdStat `json:"best"`
	// AtDefault is the sweep at loop.SemanticThreshold.
	AtDefault ThresholdStat `json:"atDefault"`
}

// CalibrateMeaning measures the loop's similarity by meaning on a labelled
// goal set: every labelled aspect against every chunk of the index, a pair
// positive when the chunk lies in one of the aspect's labelled pages or
// sections, scored by m's relatedness. It sweeps the threshold from 0.5 to
// 6 standard deviations: the threshold is chosen on tuning sets (best F1)
// and checked on a held-out one. st is the index m searches.
func CalibrateMeaning(ctx context.Context, m loop.ByMeaning, st store.Store, set GoalSet) (Calibration, error) {
	if err := set.Validate(); err != nil {
		return Calibration{}, err
	}
	if !m.ComparesMeaning() {
		return Calibration{}, errors.New("calibrate: the index has no embedder: index with --embedder first")
	}
	srcs, err := st.Sources(ctx, store.ListOptions{})
	if err != nil {
		return Calibration{}, err
	}
	uri := map[string]doc.Source{}
	for _, s := range srcs {
		uri[s.ID] = s
	}
	var hits []doc.Hit
	err = st.EachChunk(ctx, func(c doc.Chunk, _ string) error {
		hits = append(hits, doc.Hit{Chunk: c, Source: uri[c.SourceID]})
		return nil
	})
	if err != nil {
		return Calibration{}, err
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.Chunk.ID
	}
	type pair struct {
		z   float64
		pos bool
	}
	var pairs []pair
	cal := Calibration{Set: set.Name, Chunks: len(hits)}
	for _, g := range set.Goals {
		for _, a := range g.Aspects {
			cal.Aspects++
			rel, err := m.Relatedness(ctx, a.Name, ids)
			if err != nil {
				return cal, fmt.Errorf("aspect %q: %w", a.Name, err)
			}
			for _, h := range hits {
				z, ok := rel[h.Chunk.ID]
				if !ok {
					continue
				}
				p := pair{z: z, pos: coversLabel(a, h)}
				if p.pos {
					cal.Positives++
				}
				pairs = append(pairs, p)
			}
		}
	}
	stat := func(z float64) ThresholdStat {
		s := ThresholdStat{Z: z}
		for _, p := range pairs {
			switch {
			case p.z >= z && p.pos:
				s.TP++
			case p.z >= z:
				s.FP++
			case p.pos:
				s.FN++
			}
		}
		if s.TP+s.FP > 0 {
			s.Precision = round3(float64(s.TP) / float64(s.TP+s.FP))
		}
		if s.TP+s.FN > 0 {
			s.Recall = round3(float64(s.TP) / float64(s.TP+s.FN))
		}
		if s.Precision+s.Recall > 0 {
			s.F1 = round3(2 * s.Precision * s.Recall / (s.Precision + s.Recall))
		}
		return s
	}
	for z := 0.5; z <= 6.0001; z += 0.25 {
		s := stat(math.Round(z*100) / 100)
		cal.Sweep = append(cal.Sweep, s)
		if s.F1 > cal.Best.F1 {
			cal.Best = s
		}
	}
	cal.AtDefault = stat(loop.SemanticThreshold)
	return cal, nil
}
