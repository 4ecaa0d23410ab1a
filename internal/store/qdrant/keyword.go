package qdrant

import (
	"context"
	"slices"
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

// exactFields are the payload fields exact keyword ranking reads: "fc"
// in a schema 3 collection (compact), else the per-term values.
func exactFields(compact bool) []string {
	if compact {
		return []string{"fc"}
	}
	return []string{"terms", "tfs", "lens"}
}

// KeywordSearch implements store.Driver: it ranks chunks by BM25F over
// terms (distinct, in query order): Qdrant's sparse search with the IDF
// modifier finds the candidates; in exact mode (the default) they are
// rescored with the current collection statistics.
func (s *Store) KeywordSearch(ctx context.Context, terms []string, k int, f store.Filter) ([]store.Scored, error) {
	qf, none, err := s.pointFilter(ctx, f)
	if err != nil || none {
		return nil, err
	}
	// The query vector: one dimension per term (terms sharing a dimension
	// add up).
	byDim := map[uint32]float32{}
	for _, t := range terms {
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
		req.WithPayload = qdrant.NewWithPayloadInclude(exactFields(s.compact)...)
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
		go func() { defer wg.Done(); df, dfErr = s.docFreq(ctx, terms) }()
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
	return rescore(pts, terms, df, st, s.params, k), nil
}

// rescore scores candidates by exact BM25F with parameters p: bm25.Score's
// formula, term order and float32 accumulation, from the per-field term
// frequencies and lengths in their payloads and the current statistics.
func rescore(pts []*qdrant.ScoredPoint, uniq []string, df map[string]int, st corpusStats, p bm25.Params, k int) []store.Scored {
	if st.Docs == 0 {
		return nil
	}
	avg := st.avgdl()
	idf := make([]float64, len(uniq))
	for i, t := range uniq {
		if df[t] > 0 {
			idf[i] = bm25.IDF(st.Docs, df[t])
		}
	}
	// The query's terms sorted, for the sorted terms of "fc" payloads;
	// at[i] is where uniq[i] is among them.
	sorted := slices.Clone(uniq)
	slices.Sort(sorted)
	at := make([]int, len(uniq))
	for i, t := range uniq {
		at[i], _ = slices.BinarySearch(sorted, t)
	}
	counts := make([][bm25.NumFields]uint32, len(sorted))
	var buf []byte
	top := store.NewTopK(k)
	for _, pt := range pts {
		pl := pt.GetPayload()
		var dl [bm25.NumFields]uint32
		var terms []string
		var tfs []int64
		fc, compact := pl["fc"]
		if compact {
			var err error
			if dl, buf, err = fieldCounts(fc.GetStringValue(), sorted, counts, buf); err != nil {
				continue // damaged: never matched
			}
		} else {
			// A schema 2 collection: per-term values.
			terms, tfs = pstrs(pl, "terms"), pints(pl, "tfs")
			if len(tfs) != int(bm25.NumFields)*len(terms) {
				continue // not written by this schema: never matched
			}
			for f, n := range fieldInts(pl, "lens") {
				dl[f] = uint32(n)
			}
		}
		var acc float32
		for i, t := range uniq {
			if idf[i] == 0 {
				continue
			}
			var tf [bm25.NumFields]uint32
			if compact {
				tf = counts[at[i]]
				if tf == ([bm25.NumFields]uint32{}) {
					continue
				}
			} else {
				j, ok := slices.BinarySearch(terms, t)
				if !ok {
					continue
				}
				for f := range bm25.NumFields {
					tf[f] = uint32(tfs[int(bm25.NumFields)*j+int(f)])
				}
			}
			x := pseudoTF(p, tf, dl, avg)
			if x <= 0 {
				continue
			}
			acc += float32(idf[i] * x * (p.K1 + 1) / (p.K1 + x))
		}
		if acc > 0 {
			top.Offer(store.Scored{ChunkID: idOf(pt.GetId()), Score: float64(acc)})
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
	df, err := s.docFreq(ctx, terms)
	if err != nil {
		return nil, 0, err
	}
	st, err := s.readStats(ctx)
	if err != nil {
		return nil, 0, err
	}
	return df, st.Docs, nil
}
