package qdrant

import (
	"context"
	"math"
	"sync"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// pointFilter turns a store.Filter into a Qdrant filter over the chunk and
// vector collections (both carry sid and type). A glob is matched here
// against the source records, as every store matches it
// (store.Filter.SourceMatcher). none reports a filter nothing can pass.
func (s *Store) pointFilter(ctx context.Context, f store.Filter) (qf *qdrant.Filter, none bool, err error) {
	qf = &qdrant.Filter{}
	if f.PathGlob != "" {
		keep := f.SourceMatcher()
		srcs, _, err := s.allSources(ctx, nil)
		if err != nil {
			return nil, false, err
		}
		var ids []string
		for _, src := range srcs {
			if keep(src.ID, src.URI, src.Type) {
				ids = append(ids, src.ID)
			}
		}
		if len(ids) == 0 {
			return nil, true, nil
		}
		qf.Must = append(qf.Must, qdrant.NewMatchKeywords("sid", ids...))
	} else {
		if len(f.Types) > 0 {
			ts := make([]string, len(f.Types))
			for i, t := range f.Types {
				ts[i] = string(t)
			}
			qf.Must = append(qf.Must, qdrant.NewMatchKeywords("type", ts...))
		}
		if len(f.SourceIDs) > 0 {
			qf.Must = append(qf.Must, qdrant.NewMatchKeywords("sid", f.SourceIDs...))
		}
	}
	if len(f.ExcludeChunks) > 0 {
		ids := make([]*qdrant.PointId, len(f.ExcludeChunks))
		for i, id := range f.ExcludeChunks {
			ids[i] = numID(id)
		}
		qf.MustNot = append(qf.MustNot, qdrant.NewHasID(ids...))
	}
	if len(qf.Must) == 0 && len(qf.MustNot) == 0 {
		return nil, false, nil
	}
	return qf, false, nil
}

// queryTerms returns the distinct terms of terms in query order (a term
// given twice counts once, as in bm25.Score).
func queryTerms(terms []string) []string {
	seen := map[string]bool{}
	var uniq []string
	for _, t := range terms {
		if !seen[t] {
			uniq = append(uniq, t)
			seen[t] = true
		}
	}
	return uniq
}

// KeywordSearch ranks chunks by BM25 over terms: Qdrant's sparse search
// with the IDF modifier finds the candidates; in exact mode (the default)
// they are rescored with the current collection statistics.
func (s *Store) KeywordSearch(ctx context.Context, terms []string, k int, f store.Filter) ([]store.Scored, error) {
	uniq := queryTerms(terms)
	if k <= 0 || len(uniq) == 0 {
		return nil, nil
	}
	qf, none, err := s.pointFilter(ctx, f)
	if err != nil || none {
		return nil, err
	}
	// The query vector: one dimension per term (terms sharing a dimension
	// add up).
	byDim := map[uint32]float32{}
	for _, t := range uniq {
		byDim[termDim(t)]++
	}
	idx := make([]uint32, 0, len(byDim))
	val := make([]float32, 0, len(byDim))
	for d, v := range byDim {
		idx = append(idx, d)
		val = append(val, v)
	}
	exact := s.set.Keyword == KeywordExact
	limit := uint64(k)
	req := &qdrant.QueryPoints{
		CollectionName: s.coll(roleChunks), Query: qdrant.NewQuerySparse(idx, val), Using: qdrant.PtrOf(sparseName),
		Filter: qf, Limit: &limit, WithPayload: qdrant.NewWithPayload(false),
	}
	if exact {
		limit = uint64(k*s.set.Oversample + 10)
		req.WithPayload = qdrant.NewWithPayloadInclude("len", "avg")
		req.WithVectors = qdrant.NewWithVectorsInclude(sparseName)
	}
	var (
		pts          []*qdrant.ScoredPoint
		qerr         error
		df           map[string]int
		st           corpusStats
		dfErr, stErr error
		wg           sync.WaitGroup
	)
	if exact {
		wg.Add(2)
		go func() { defer wg.Done(); df, dfErr = s.docFreq(ctx, uniq) }()
		go func() { defer wg.Done(); st, stErr = s.readStats(ctx) }()
	}
	pts, qerr = s.c.Query(ctx, req)
	wg.Wait()
	if qerr != nil {
		return nil, s.wrap("keyword search", qerr)
	}
	if !exact {
		out := make([]store.Scored, len(pts))
		for i, p := range pts {
			out[i] = store.Scored{ChunkID: idOf(p.GetId()), Score: float64(p.GetScore())}
		}
		store.SortScored(out)
		return out, nil
	}
	if dfErr != nil {
		return nil, dfErr
	}
	if stErr != nil {
		return nil, stErr
	}
	return rescore(pts, uniq, df, st, k), nil
}

// rescore scores candidates by exact BM25 (bm25.Score's formula and float32
// accumulation) from their stored weights, which give back each term's
// frequency, and the current statistics.
func rescore(pts []*qdrant.ScoredPoint, uniq []string, df map[string]int, st corpusStats, k int) []store.Scored {
	avg := st.avgdl()
	top := store.NewTopK(k)
	for _, p := range pts {
		pl := p.GetPayload()
		dl, wavg := float64(pint(pl, "len")), pflt(pl, "avg")
		if wavg == 0 {
			wavg = 1
		}
		sidx, sval := sparseOf(p.GetVectors(), sparseName)
		w := make(map[uint32]float32, len(sidx))
		for i, d := range sidx {
			w[d] = sval[i]
		}
		norm := bm25.K1 * (1 - bm25.B + bm25.B*dl/avg)
		var acc float32
		for _, t := range uniq {
			v, ok := w[termDim(t)]
			if !ok || df[t] == 0 {
				continue
			}
			tf := math.Round(tfOf(float64(v), dl, wavg))
			if tf <= 0 {
				continue
			}
			idf := bm25.IDF(st.Docs, df[t])
			acc += float32(idf * tf * (bm25.K1 + 1) / (tf + norm))
		}
		if acc > 0 {
			top.Offer(store.Scored{ChunkID: idOf(p.GetId()), Score: float64(acc)})
		}
	}
	return top.Best()
}

// docFreq counts the chunks holding each term (exact counts over the terms
// payload index).
func (s *Store) docFreq(ctx context.Context, terms []string) (map[string]int, error) {
	out := make(map[string]int, len(terms))
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		ferr error
	)
	sem := make(chan struct{}, 4)
	for _, t := range terms {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			n, err := s.count(ctx, s.coll(roleChunks), &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("terms", t)}})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				ferr = err
			}
			out[t] = n
		}()
	}
	wg.Wait()
	return out, ferr
}

// DocFreq returns how many chunks contain each of terms, and the number of
// chunks in the index.
func (s *Store) DocFreq(ctx context.Context, terms []string) (map[string]int, int, error) {
	uniq := queryTerms(terms)
	df, err := s.docFreq(ctx, uniq)
	if err != nil {
		return nil, 0, err
	}
	st, err := s.readStats(ctx)
	if err != nil {
		return nil, 0, err
	}
	return df, st.Docs, nil
}
