package qdrant

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// sourceOf reads a source record from its payload.
func sourceOf(p map[string]*qdrant.Value) doc.Source {
	return doc.Source{
		ID: pstr(p, "id"), URI: pstr(p, "uri"), Type: doc.SourceType(pstr(p, "type")), Format: doc.Format(pstr(p, "format")),
		Title: pstr(p, "title"), ContentHash: pstr(p, "hash"), Size: int(pint(p, "size")), Chunks: int(pint(p, "chunks")),
		IndexedAt: pint(p, "indexed"),
	}
}

// chunkOf reads a chunk from its point.
func chunkOf(id int64, p map[string]*qdrant.Value) doc.Chunk {
	return doc.Chunk{
		ID: id, SourceID: pstr(p, "sid"), Index: int(pint(p, "idx")), Text: pstr(p, "text"), Heading: pstrs(p, "heading"),
		StartLine: int(pint(p, "sl")), EndLine: int(pint(p, "el")), StartByte: int(pint(p, "sb")), EndByte: int(pint(p, "eb")),
		Tokens: int(pint(p, "tok")),
	}
}

var chunkFields = []string{"sid", "idx", "text", "heading", "sl", "el", "sb", "eb", "tok", "gen"}

// Source returns one source record by ID.
func (s *Store) Source(ctx context.Context, id string) (doc.Source, error) {
	m, err := s.sourcePayloads(ctx, []string{id})
	if err != nil {
		return doc.Source{}, err
	}
	p, ok := m[id]
	if !ok {
		return doc.Source{}, fmt.Errorf("source %q: %w", id, store.ErrNotFound)
	}
	return sourceOf(p), nil
}

// allSources returns every source record matching f (nil for all).
func (s *Store) allSources(ctx context.Context, f *qdrant.Filter) ([]doc.Source, map[string]string, error) {
	var out []doc.Source
	gens := map[string]string{}
	err := s.scroll(ctx, s.coll(roleSources), f, qdrant.NewWithPayloadExclude("content"), nil, func(p *qdrant.RetrievedPoint) error {
		src := sourceOf(p.GetPayload())
		gens[src.ID] = pstr(p.GetPayload(), "gen")
		out = append(out, src)
		return nil
	})
	return out, gens, err
}

// Sources lists source records ordered by URI.
func (s *Store) Sources(ctx context.Context, opt store.ListOptions) ([]doc.Source, error) {
	var f *qdrant.Filter
	if opt.Type != "" {
		f = &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("type", string(opt.Type))}}
	}
	all, _, err := s.allSources(ctx, f)
	if err != nil {
		return nil, err
	}
	if opt.PathGlob != "" {
		all = slices.DeleteFunc(all, func(src doc.Source) bool { return !glob.Match(opt.PathGlob, src.URI) })
	}
	slices.SortFunc(all, func(a, b doc.Source) int { return cmp.Compare(a.URI, b.URI) })
	if opt.Offset > 0 {
		all = all[min(opt.Offset, len(all)):]
	}
	if opt.Limit > 0 && len(all) > opt.Limit {
		all = all[:opt.Limit]
	}
	return all, nil
}

// Content returns a source's original content.
func (s *Store) Content(ctx context.Context, id string) (string, error) {
	pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleSources), Ids: []*qdrant.PointId{sourcePID(id)}, WithPayload: qdrant.NewWithPayloadInclude("content")})
	if err != nil {
		return "", s.wrap("read content of "+id, err)
	}
	if len(pts) == 0 {
		return "", fmt.Errorf("content of %q: %w", id, store.ErrNotFound)
	}
	return pstr(pts[0].GetPayload(), "content"), nil
}

// Chunks returns a source's committed chunks in order.
func (s *Store) Chunks(ctx context.Context, sourceID string) ([]doc.Chunk, error) {
	m, err := s.sourcePayloads(ctx, []string{sourceID}, "gen")
	if err != nil || m[sourceID] == nil {
		return nil, err
	}
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("sid", sourceID), qdrant.NewMatch("gen", pstr(m[sourceID], "gen"))}}
	var out []doc.Chunk
	err = s.scroll(ctx, s.coll(roleChunks), f, qdrant.NewWithPayloadInclude(chunkFields...), nil, func(p *qdrant.RetrievedPoint) error {
		out = append(out, chunkOf(idOf(p.GetId()), p.GetPayload()))
		return nil
	})
	slices.SortFunc(out, func(a, b doc.Chunk) int { return cmp.Compare(a.Index, b.Index) })
	return out, err
}

// Hits loads chunks with their sources, in the order of ids; unknown IDs
// and chunks of an uncommitted write are skipped.
func (s *Store) Hits(ctx context.Context, ids []int64) ([]doc.Hit, error) {
	byID := map[int64]map[string]*qdrant.Value{}
	for start := 0; start < len(ids); start += 1000 {
		part := ids[start:min(start+1000, len(ids))]
		pids := make([]*qdrant.PointId, len(part))
		for i, id := range part {
			pids[i] = numID(id)
		}
		pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleChunks), Ids: pids, WithPayload: qdrant.NewWithPayloadInclude(chunkFields...)})
		if err != nil {
			return nil, s.wrap("read chunks", err)
		}
		for _, p := range pts {
			byID[idOf(p.GetId())] = p.GetPayload()
		}
	}
	var sids []string
	for _, p := range byID {
		sids = append(sids, pstr(p, "sid"))
	}
	slices.Sort(sids)
	srcs, err := s.sourcePayloads(ctx, slices.Compact(sids))
	if err != nil {
		return nil, err
	}
	out := make([]doc.Hit, 0, len(ids))
	for _, id := range ids {
		p := byID[id]
		if p == nil {
			continue
		}
		sp := srcs[pstr(p, "sid")]
		if sp == nil || pstr(sp, "gen") != pstr(p, "gen") {
			continue
		}
		out = append(out, doc.Hit{Chunk: chunkOf(id, p), Source: sourceOf(sp)})
	}
	return out, nil
}

// EachChunk calls fn for every committed chunk, in ID order, with its
// source's title. It reads the chunk records first (IDs and sources only),
// then the chunks in ID order a page at a time.
func (s *Store) EachChunk(ctx context.Context, fn func(c doc.Chunk, title string) error) error {
	srcs, gens, err := s.allSources(ctx, nil)
	if err != nil {
		return err
	}
	titles := make(map[string]string, len(srcs))
	for _, src := range srcs {
		titles[src.ID] = src.Title
	}
	var ids []int64
	err = s.scroll(ctx, s.coll(roleChunks), nil, qdrant.NewWithPayloadInclude("sid", "gen"), nil, func(p *qdrant.RetrievedPoint) error {
		pl := p.GetPayload()
		if g, ok := gens[pstr(pl, "sid")]; ok && g == pstr(pl, "gen") {
			ids = append(ids, idOf(p.GetId()))
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(ids)
	for start := 0; start < len(ids); start += pageSize {
		hits, err := s.Hits(ctx, ids[start:min(start+pageSize, len(ids))])
		if err != nil {
			return err
		}
		for _, h := range hits {
			if err := fn(h.Chunk, titles[h.Chunk.SourceID]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Stats describes the index. Terms counts the distinct values of the
// chunks' terms payload (a facet over its keyword index).
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	st, err := s.readStats(ctx)
	if err != nil {
		return store.Stats{}, err
	}
	out := store.Stats{Sources: st.Sources, Chunks: st.Docs, Bytes: st.Bytes}
	limit := uint64(1 << 24)
	hits, err := s.c.Facet(ctx, &qdrant.FacetCounts{CollectionName: s.coll(roleChunks), Key: "terms", Limit: &limit})
	if err != nil {
		return out, s.wrap("count terms", err)
	}
	out.Terms = len(hits)
	if d, err := s.vectorDim(ctx); err != nil {
		return out, err
	} else if d > 0 {
		if out.Vectors, err = s.count(ctx, s.coll(roleVectors), nil); err != nil {
			return out, err
		}
	}
	return out, nil
}
