package qdrant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
)

// Qdrant has no transactions across points, so a Replace is made
// recoverable instead of atomic:
//
//  1. every check that can fail on the input is done before anything is
//     written (by the Store, store.New; a cancelled context writes nothing);
//  2. a journal point in <prefix>_meta names the batch's sources and its
//     generation (a random token);
//  3. the new chunks and vectors are written under new IDs with that
//     generation, next to the old ones;
//  4. the source records are written: this is the commit of each source;
//  5. chunks and vectors of those sources with another generation are
//     deleted, the collection statistics written, the journal removed.
//
// A crash or a server failure between 2 and 5 leaves the journal behind;
// the next write in any process (Replace, Delete, SetVectors) finishes it
// first: for each source named, chunks whose generation is not that of the
// source record are deleted, and the statistics recounted from the source
// records. Until then a search may also see the half-written chunks of a
// source next to its committed ones (and `get` shows the committed record).

// journal and stats are reserved points of the meta collection.
var (
	journalID = uuidOf("sys", "journal")
	statsID   = uuidOf("sys", "stats")
)

// corpusStats are the collection statistics of the committed sources.
type corpusStats struct {
	Sources, Docs int
	Tokens        [bm25.NumFields]int64 // sum of the chunks' field lengths
	Bytes         int64
}

// avgdl is each field's average length, as bm25.Score computes it (1 for
// a field no chunk has terms in).
func (c corpusStats) avgdl() [bm25.NumFields]float64 {
	var avg [bm25.NumFields]float64
	for f := range bm25.NumFields {
		avg[f] = 1
		if c.Docs > 0 && c.Tokens[f] > 0 {
			avg[f] = float64(c.Tokens[f]) / float64(c.Docs)
		}
	}
	return avg
}

// add adds (sign 1) or takes away (sign −1) a source record's share.
func (c *corpusStats) add(p map[string]*qdrant.Value, sign int) {
	c.Sources += sign
	c.Docs += sign * int(pint(p, "chunks"))
	for f, n := range fieldInts(p, "tokens") {
		c.Tokens[f] += int64(sign) * n
	}
	c.Bytes += int64(sign) * pint(p, "size")
}

func (s *Store) readStats(ctx context.Context) (corpusStats, error) {
	pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleMeta), Ids: []*qdrant.PointId{statsID}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return corpusStats{}, s.wrap("read collection statistics", err)
	}
	if len(pts) == 0 {
		return corpusStats{}, nil
	}
	p := pts[0].GetPayload()
	return corpusStats{Sources: int(pint(p, "sources")), Docs: int(pint(p, "docs")), Tokens: fieldInts(p, "tokens"), Bytes: pint(p, "bytes")}, nil
}

func (s *Store) writeStats(ctx context.Context, c corpusStats) error {
	return s.upsert(ctx, s.coll(roleMeta), []*qdrant.PointStruct{{
		Id: statsID, Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}),
		Payload: map[string]*qdrant.Value{
			"kind": vstr("stats"), "sources": vint(int64(c.Sources)), "docs": vint(int64(c.Docs)),
			"tokens": vints(c.Tokens[:]), "bytes": vint(c.Bytes),
		},
	}})
}

// recount rebuilds the statistics from the committed source records.
func (s *Store) recount(ctx context.Context) (corpusStats, error) {
	var c corpusStats
	err := s.scroll(ctx, s.coll(roleSources), nil, qdrant.NewWithPayloadInclude("chunks", "tokens", "size"), nil, func(p *qdrant.RetrievedPoint) error {
		c.add(p.GetPayload(), 1)
		return nil
	})
	return c, err
}

func newGen() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func sourceFilter(ids []string) *qdrant.Filter {
	return &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("sid", ids...)}}
}

// writeJournal records a write in progress: op is "replace" or "delete".
func (s *Store) writeJournal(ctx context.Context, op, gen string, ids []string) error {
	return s.upsert(ctx, s.coll(roleMeta), []*qdrant.PointStruct{{
		Id: journalID, Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}),
		Payload: map[string]*qdrant.Value{"kind": vstr("journal"), "op": vstr(op), "gen": vstr(gen), "ids": vstrs(ids),
			"at": vint(time.Now().Unix())},
	}})
}

func (s *Store) clearJournal(ctx context.Context) error {
	wait := true
	_, err := s.c.Delete(ctx, &qdrant.DeletePoints{CollectionName: s.coll(roleMeta), Wait: &wait, Points: qdrant.NewPointsSelector(journalID)})
	return s.wrap("finish write journal", err)
}

// recover finishes a write a crash left in the journal. The caller holds wmu.
func (s *Store) recover(ctx context.Context) error {
	pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleMeta), Ids: []*qdrant.PointId{journalID}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return s.wrap("read write journal", err)
	}
	if len(pts) == 0 {
		return nil
	}
	p := pts[0].GetPayload()
	ids := pstrs(p, "ids")
	switch pstr(p, "op") {
	case "rename":
		if err := s.recoverRename(ctx, ids); err != nil {
			return err
		}
	case "delete":
		if err := s.removeSources(ctx, ids); err != nil {
			return err
		}
	default:
		srcs, err := s.sourcePayloads(ctx, ids, "gen")
		if err != nil {
			return err
		}
		byGen := map[string][]string{}
		for _, id := range ids {
			byGen[pstr(srcs[id], "gen")] = append(byGen[pstr(srcs[id], "gen")], id)
		}
		for gen, group := range byGen {
			f := sourceFilter(group)
			if gen != "" {
				f.MustNot = []*qdrant.Condition{qdrant.NewMatch("gen", gen)}
			}
			if err := s.deleteDerived(ctx, f); err != nil {
				return err
			}
		}
	}
	st, err := s.recount(ctx)
	if err != nil {
		return err
	}
	if err := s.writeStats(ctx, st); err != nil {
		return err
	}
	return s.clearJournal(ctx)
}

// deleteDerived deletes the chunks and vectors f matches.
func (s *Store) deleteDerived(ctx context.Context, f *qdrant.Filter) error {
	if err := s.deleteWhere(ctx, s.coll(roleChunks), f); err != nil {
		return err
	}
	if d, err := s.vectorDim(ctx); err != nil || d == 0 {
		return err
	}
	return s.deleteWhere(ctx, s.coll(roleVectors), f)
}

// removeSources deletes sources and everything derived from them.
func (s *Store) removeSources(ctx context.Context, ids []string) error {
	if err := s.deleteDerived(ctx, sourceFilter(ids)); err != nil {
		return err
	}
	pids := make([]*qdrant.PointId, len(ids))
	for i, id := range ids {
		pids[i] = sourcePID(id)
	}
	wait := true
	_, err := s.c.Delete(ctx, &qdrant.DeletePoints{CollectionName: s.coll(roleSources), Wait: &wait, Points: qdrant.NewPointsSelectorIDs(pids)})
	return s.wrap("delete sources", err)
}

func sourcePID(id string) *qdrant.PointId { return uuidOf("source", id) }

// sourcePayloads returns the stored records of the sources that exist among
// ids, with the payload fields named (all but the content when none).
func (s *Store) sourcePayloads(ctx context.Context, ids []string, fields ...string) (map[string]map[string]*qdrant.Value, error) {
	out := map[string]map[string]*qdrant.Value{}
	sel := qdrant.NewWithPayloadExclude("content")
	if len(fields) > 0 {
		sel = qdrant.NewWithPayloadInclude(append(fields, "id")...)
	}
	for start := 0; start < len(ids); start += 1000 {
		part := ids[start:min(start+1000, len(ids))]
		pids := make([]*qdrant.PointId, len(part))
		for i, id := range part {
			pids[i] = sourcePID(id)
		}
		pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleSources), Ids: pids, WithPayload: sel})
		if err != nil {
			return nil, s.wrap("read sources", err)
		}
		for _, p := range pts {
			out[pstr(p.GetPayload(), "id")] = p.GetPayload()
		}
	}
	return out, nil
}

// Replace implements store.Driver: it writes sources with their chunks
// and vectors (see the comment at the top of this file for what happens on
// a crash).
func (s *Store) Replace(ctx context.Context, batch []store.SourceData) error {
	analysed := segment.Analyse(s.an, batch)
	if err := ctx.Err(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.recover(ctx); err != nil {
		return err
	}
	ids := make([]string, len(batch))
	for i, sd := range batch {
		ids[i] = sd.Source.ID
	}
	st, tokens, err := s.statsAfter(ctx, batch, ids, analysed)
	if err != nil {
		return err
	}
	gen := newGen()
	chunkIDs, err := s.assignIDs(ctx, batch, gen)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.writeJournal(ctx, "replace", gen, ids); err != nil {
		return err
	}
	if err := s.writeChunks(ctx, batch, analysed, chunkIDs, gen, st.avgdl()); err != nil {
		return err
	}
	if s.crashAt == "chunks" {
		return errCrash
	}
	if err := s.upsert(ctx, s.coll(roleSources), sourcePoints(batch, tokens, gen)); err != nil {
		return err
	}
	if s.crashAt == "sources" {
		return errCrash
	}
	// From here on the batch is committed: finish it even if ctx ends.
	ctx = context.WithoutCancel(ctx)
	f := sourceFilter(ids)
	f.MustNot = []*qdrant.Condition{qdrant.NewMatch("gen", gen)}
	if err := s.deleteDerived(ctx, f); err != nil {
		return err
	}
	if err := s.writeStats(ctx, st); err != nil {
		return err
	}
	return s.clearJournal(ctx)
}

// statsAfter returns the collection statistics as they will be once batch
// (the sources ids, analysed) replaces what is stored, and each source's
// field lengths.
func (s *Store) statsAfter(ctx context.Context, batch []store.SourceData, ids []string, analysed [][]segment.Analysed) (corpusStats, [][bm25.NumFields]int64, error) {
	st, err := s.readStats(ctx)
	if err != nil {
		return st, nil, err
	}
	old, err := s.sourcePayloads(ctx, ids, "chunks", "tokens", "size")
	if err != nil {
		return st, nil, err
	}
	for _, p := range old {
		st.add(p, -1)
	}
	tokens := make([][bm25.NumFields]int64, len(batch))
	for i, sd := range batch {
		for _, a := range analysed[i] {
			for f, n := range a.Counts.Len {
				tokens[i][f] += int64(n)
			}
		}
		st.Sources++
		st.Docs += len(sd.Chunks)
		for f, n := range tokens[i] {
			st.Tokens[f] += n
		}
		st.Bytes += int64(len(sd.Content))
	}
	return st, tokens, nil
}

// writeChunks writes the chunk and vector points of batch under the
// generation gen, weighting terms by the average field lengths avg. Points
// are built and written pageSize chunks at a time, and each chunk's term
// counts dropped once its point is built, so a large batch never holds all
// its points, nor its counts beside them.
func (s *Store) writeChunks(ctx context.Context, batch []store.SourceData, analysed [][]segment.Analysed, chunkIDs [][]int64, gen string, avg [bm25.NumFields]float64) error {
	var chunks, vecs []*qdrant.PointStruct
	flush := func() error {
		if err := s.upsert(ctx, s.coll(roleChunks), chunks); err != nil {
			return err
		}
		if len(vecs) > 0 {
			if err := s.upsert(ctx, s.coll(roleVectors), vecs); err != nil {
				return err
			}
		}
		chunks, vecs = chunks[:0], vecs[:0]
		return nil
	}
	for i, sd := range batch {
		for j, c := range sd.Chunks {
			a := analysed[i][j]
			analysed[i][j].Counts = bm25.Counts{}
			chunks = append(chunks, chunkPoint(sd, c, a, chunkIDs[i][j], gen, s.params, avg, s.compact))
			if sd.Vectors != nil && !store.IsZeroVector(sd.Vectors[j]) {
				vecs = append(vecs, &qdrant.PointStruct{
					Id:      numID(chunkIDs[i][j]),
					Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{denseName: qdrant.NewVectorDense(sd.Vectors[j])}),
					Payload: map[string]*qdrant.Value{"sid": vstr(sd.Source.ID), "type": vstr(string(sd.Source.Type)), "uri": vstr(sd.Source.URI), "gen": vstr(gen), "hash": vstr(a.Hash)},
				})
			}
			if len(chunks) == pageSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// sourcePoints are the source records of batch: writing them commits it.
func sourcePoints(batch []store.SourceData, tokens [][bm25.NumFields]int64, gen string) []*qdrant.PointStruct {
	now := time.Now().Unix()
	srcs := make([]*qdrant.PointStruct, len(batch))
	for i, sd := range batch {
		src := sd.Source
		srcs[i] = &qdrant.PointStruct{
			Id: sourcePID(src.ID), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}),
			Payload: map[string]*qdrant.Value{
				"id": vstr(src.ID), "uri": vstr(src.URI), "type": vstr(string(src.Type)), "format": vstr(string(src.Format)),
				"title": vstr(src.Title), "hash": vstr(src.ContentHash), "size": vint(int64(len(sd.Content))),
				"chunks": vint(int64(len(sd.Chunks))), "indexed": vint(now), "gen": vstr(gen), "tokens": vints(tokens[i][:]),
				"content": vstr(sd.Content),
			},
		}
	}
	return srcs
}

// chunkPoint is a chunk as stored: its record as payload, its terms as a
// sparse vector of BM25F term weights (a.Counts with parameters p, each
// field normalised by avg), and in the payload its distinct terms
// ("terms", sorted, indexed for document frequencies) and what exact
// scoring needs: in schema 3 collections one string, "fc" (fieldCounts),
// which a search decodes in a few microseconds; in schema 2 collections
// (compact false) the frequency of each term in each field ("tfs", three
// numbers per term: title, heading, body) and the fields' lengths
// ("lens"), some four hundred payload values a chunk to decode.
func chunkPoint(sd store.SourceData, c doc.Chunk, a segment.Analysed, id int64, gen string, p bm25.Params, avg [bm25.NumFields]float64, compact bool) *qdrant.PointStruct {
	idx, val := sparseWeights(a.Counts, p, avg)
	terms := make([]string, len(a.Counts.Terms))
	for i, t := range a.Counts.Terms {
		terms[i] = t.Term
	}
	pl := map[string]*qdrant.Value{
		"sid": vstr(sd.Source.ID), "uri": vstr(sd.Source.URI), "type": vstr(string(sd.Source.Type)), "gen": vstr(gen),
		"idx": vint(int64(c.Index)), "text": vstr(c.Text), "heading": vstrs(c.Heading),
		"sl": vint(int64(c.StartLine)), "el": vint(int64(c.EndLine)), "sb": vint(int64(c.StartByte)), "eb": vint(int64(c.EndByte)),
		"tok": vint(int64(c.Tokens)), "hash": vstr(a.Hash),
		"terms": vstrs(terms),
	}
	if compact {
		pl["fc"] = vstr(encodeFieldCounts(a.Counts))
	} else {
		tfs := make([]int64, 0, int(bm25.NumFields)*len(a.Counts.Terms))
		for _, t := range a.Counts.Terms {
			for _, n := range t.N {
				tfs = append(tfs, int64(n))
			}
		}
		var lens [bm25.NumFields]int64
		for f, n := range a.Counts.Len {
			lens[f] = int64(n)
		}
		pl["tfs"], pl["lens"] = vints(tfs), vints(lens[:])
	}
	return &qdrant.PointStruct{
		Id:      numID(id),
		Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{sparseName: qdrant.NewVectorSparse(idx, val)}),
		Payload: pl,
	}
}

// pseudoTF is BM25F's pseudo-frequency of a term occurring tf[f] times in
// field f of lengths dl, against the average field lengths avg, computed
// in the order and precision of bm25.Score:
// Σ_f W_f · tf_f / (1 − B_f + B_f · dl_f / avg_f).
func pseudoTF(p bm25.Params, tf, dl [bm25.NumFields]uint32, avg [bm25.NumFields]float64) float64 {
	var sum float64
	for f := range bm25.NumFields {
		if tf[f] == 0 {
			continue
		}
		sum += p.Weight[f] * float64(tf[f]) / ((1 - p.B[f]) + p.B[f]/avg[f]*float64(dl[f]))
	}
	return sum
}

// weight is a term's BM25F weight without IDF, what Qdrant multiplies by
// its IDF: the pseudo-frequency saturated with K1.
func weight(p bm25.Params, tf, dl [bm25.NumFields]uint32, avg [bm25.NumFields]float64) float64 {
	x := pseudoTF(p, tf, dl, avg)
	return x * (p.K1 + 1) / (p.K1 + x)
}

// sparseWeights turns term counts into a sparse vector: sorted dimensions,
// with the weights of terms that share a dimension added up.
func sparseWeights(c bm25.Counts, p bm25.Params, avg [bm25.NumFields]float64) ([]uint32, []float32) {
	byDim := make(map[uint32]float64, len(c.Terms))
	for _, t := range c.Terms {
		if w := weight(p, t.N, c.Len, avg); w > 0 {
			byDim[termDim(t.Term)] += w
		}
	}
	idx := make([]uint32, 0, len(byDim))
	for d := range byDim {
		idx = append(idx, d)
	}
	slices.Sort(idx)
	val := make([]float32, len(idx))
	for i, d := range idx {
		val[i] = float32(byDim[d])
	}
	return idx, val
}

// counterID is the point holding the next free chunk ID.
var counterID = uuidOf("sys", "next-chunk-id")

// assignIDs gives every chunk of batch a new ID from the index's counter,
// in batch order, so chunk IDs grow in the order chunks were written (as
// in the SQL stores; ties in ranking go to the lower ID).
func (s *Store) assignIDs(ctx context.Context, batch []store.SourceData, _ string) ([][]int64, error) {
	n := 0
	for _, sd := range batch {
		n += len(sd.Chunks)
	}
	next, err := s.allocIDs(ctx, n)
	if err != nil {
		return nil, err
	}
	out := make([][]int64, len(batch))
	for i, sd := range batch {
		out[i] = make([]int64, len(sd.Chunks))
		for j := range sd.Chunks {
			out[i][j] = next
			next++
		}
	}
	return out, nil
}

// allocIDs reserves n chunk IDs and returns the first. The counter is
// advanced by compare-and-set: an upsert that only applies while the
// counter still holds the value read (update_filter), then read back to see
// whose token is there, so two processes never get the same IDs.
func (s *Store) allocIDs(ctx context.Context, n int) (int64, error) {
	for attempt := 0; attempt < 50; attempt++ {
		pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleMeta), Ids: []*qdrant.PointId{counterID}, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			return 0, s.wrap("read the chunk ID counter", err)
		}
		cur := int64(1)
		cond := (*qdrant.Filter)(nil)
		if len(pts) > 0 {
			cur = pint(pts[0].GetPayload(), "next")
			cond = &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("next", cur)}}
		}
		token := newGen()
		wait := true
		req := &qdrant.UpsertPoints{
			CollectionName: s.coll(roleMeta), Wait: &wait, UpdateFilter: cond,
			Points: []*qdrant.PointStruct{{
				Id: counterID, Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}),
				Payload: map[string]*qdrant.Value{"kind": vstr("counter"), "next": vint(cur + int64(n)), "token": vstr(token)},
			}},
		}
		if cond == nil {
			req.UpdateMode = qdrant.UpdateMode_InsertOnly.Enum()
		}
		if _, err := s.c.Upsert(ctx, req); err != nil {
			return 0, s.wrap("advance the chunk ID counter", err)
		}
		pts, err = s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleMeta), Ids: []*qdrant.PointId{counterID}, WithPayload: qdrant.NewWithPayload(true)})
		if err != nil {
			return 0, s.wrap("read the chunk ID counter", err)
		}
		if len(pts) > 0 && pstr(pts[0].GetPayload(), "token") == token {
			return cur, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("write to %s: could not reserve chunk IDs (the counter kept changing under other writers)", s.where())
}

// Delete implements store.Driver: it removes sources and everything
// derived from them.
func (s *Store) Delete(ctx context.Context, ids []string) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.recover(ctx); err != nil {
		return 0, err
	}
	old, err := s.sourcePayloads(ctx, ids, "chunks", "tokens", "size")
	if err != nil {
		return 0, err
	}
	if len(old) == 0 {
		return 0, nil
	}
	st, err := s.readStats(ctx)
	if err != nil {
		return 0, err
	}
	found := make([]string, 0, len(old))
	for id, p := range old {
		found = append(found, id)
		st.add(p, -1)
	}
	slices.Sort(found)
	if err := s.writeJournal(ctx, "delete", "", found); err != nil {
		return 0, err
	}
	ctx = context.WithoutCancel(ctx)
	if err := s.removeSources(ctx, found); err != nil {
		return 0, err
	}
	if err := s.writeStats(ctx, st); err != nil {
		return 0, err
	}
	return len(found), s.clearJournal(ctx)
}
