package qdrant

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// VectorDim implements store.Driver: the dimension of the vectors
// collection, 0 when there is none.
func (s *Store) VectorDim(ctx context.Context) (int, error) { return s.vectorDim(ctx) }

// vectorDim returns the dimension of the vectors collection, 0 when there
// is none. A known dimension is cached; an unknown one is asked again, since
// another process may have made the collection.
func (s *Store) vectorDim(ctx context.Context) (int, error) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	if s.vecDim > 0 {
		return s.vecDim, nil
	}
	name := s.coll(roleVectors)
	info, err := s.c.GetCollectionInfo(ctx, name)
	if status.Code(errors.Unwrap(err)) == codes.NotFound {
		return 0, nil
	}
	if err != nil {
		return 0, s.wrap("read collection "+name, err)
	}
	if err := s.checkMarker(ctx, name); err != nil {
		return 0, err
	}
	params := info.GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()[denseName]
	if params == nil || params.GetDistance() != qdrant.Distance_Cosine {
		return 0, fmt.Errorf("%s: collection %q has no cosine vector named %q; it was not made by this sagasu: %w", s.where(), name, denseName, store.ErrForeign)
	}
	s.vecDim = int(params.GetSize())
	return s.vecDim, nil
}

// InitVectors makes the vectors collection for dim-dimensional embeddings,
// or checks that the existing one has that dimension.
func (s *Store) InitVectors(ctx context.Context, dim int) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	have, err := s.vectorDim(ctx)
	if err != nil {
		return err
	}
	switch have {
	case dim:
		return nil
	case 0:
		if err := s.createCollection(ctx, roleVectors, dim); err != nil {
			return err
		}
		s.vmu.Lock()
		s.vecDim = 0 // read back what the server made
		s.vmu.Unlock()
		if have, err = s.vectorDim(ctx); err != nil {
			return err
		}
		if have != dim {
			return fmt.Errorf("%s: collection %q holds %d-dimensional vectors, the embedder makes %d", s.where(), s.coll(roleVectors), have, dim)
		}
		return nil
	}
	return fmt.Errorf("%s: the index holds %d-dimensional vectors (collection %q) and the embedder makes %d: re-embed with `sagasu reindex` or use the embedder the index was built with",
		s.where(), have, s.coll(roleVectors), dim)
}

// ClearVectors drops the vectors collection.
func (s *Store) ClearVectors(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.vmu.Lock()
	s.vecDim = 0
	s.vmu.Unlock()
	err := s.c.DeleteCollection(ctx, s.coll(roleVectors))
	if err != nil && status.Code(errors.Unwrap(err)) != codes.NotFound {
		return s.wrap("drop vectors", err)
	}
	return nil
}

// VectorSearch ranks chunks by cosine similarity to q.
func (s *Store) VectorSearch(ctx context.Context, q []float32, k int, f store.Filter) ([]store.Scored, error) {
	qf, none, err := s.pointFilter(ctx, f)
	if err != nil || none {
		return nil, err
	}
	limit := uint64(k)
	pts, err := s.c.Query(ctx, &qdrant.QueryPoints{
		CollectionName: s.coll(roleVectors), Query: qdrant.NewQueryDense(q), Using: qdrant.PtrOf(denseName),
		Filter: qf, Limit: &limit, WithPayload: qdrant.NewWithPayload(false),
		Params: &qdrant.SearchParams{HnswEf: qdrant.PtrOf(uint64(max(128, k)))},
	})
	if err != nil {
		return nil, s.wrap("vector search", err)
	}
	out := make([]store.Scored, len(pts))
	for i, p := range pts {
		out[i] = store.Scored{ChunkID: idOf(p.GetId()), Score: float64(p.GetScore())}
	}
	store.SortScored(out)
	return out, nil
}

// VectorsByHash returns stored embeddings keyed by the hash of their
// chunk's context text.
func (s *Store) VectorsByHash(ctx context.Context, hashes []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	for start := 0; start < len(hashes); start += 1000 {
		part := hashes[start:min(start+1000, len(hashes))]
		f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("hash", part...)}}
		err := s.scroll(ctx, s.coll(roleVectors), f, qdrant.NewWithPayloadInclude("hash"), qdrant.NewWithVectorsInclude(denseName), func(p *qdrant.RetrievedPoint) error {
			out[pstr(p.GetPayload(), "hash")] = denseOf(p.GetVectors(), denseName)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// VectorsByID returns the stored embeddings of chunks.
func (s *Store) VectorsByID(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	for start := 0; start < len(ids); start += 1000 {
		part := ids[start:min(start+1000, len(ids))]
		pids := make([]*qdrant.PointId, len(part))
		for i, id := range part {
			pids[i] = numID(id)
		}
		pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleVectors), Ids: pids, WithPayload: qdrant.NewWithPayload(false), WithVectors: qdrant.NewWithVectorsInclude(denseName)})
		if err != nil {
			return nil, s.wrap("read vectors", err)
		}
		for _, p := range pts {
			out[idOf(p.GetId())] = denseOf(p.GetVectors(), denseName)
		}
	}
	return out, nil
}

// SetVectors stores embeddings for existing chunks; IDs of chunks that are
// not stored are ignored.
func (s *Store) SetVectors(ctx context.Context, vecs map[int64][]float32) error {
	ids := slices.Collect(maps.Keys(vecs))
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.recover(ctx); err != nil {
		return err
	}
	var pts []*qdrant.PointStruct
	for start := 0; start < len(ids); start += 1000 {
		part := ids[start:min(start+1000, len(ids))]
		pids := make([]*qdrant.PointId, len(part))
		for i, id := range part {
			pids[i] = numID(id)
		}
		got, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleChunks), Ids: pids, WithPayload: qdrant.NewWithPayloadInclude("sid", "type", "uri", "gen", "hash")})
		if err != nil {
			return s.wrap("read chunks", err)
		}
		for _, p := range got {
			id := idOf(p.GetId())
			pl := p.GetPayload()
			pts = append(pts, &qdrant.PointStruct{
				Id:      numID(id),
				Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{denseName: qdrant.NewVectorDense(vecs[id])}),
				Payload: map[string]*qdrant.Value{"sid": pl["sid"], "type": pl["type"], "uri": pl["uri"], "gen": pl["gen"], "hash": pl["hash"]},
			})
		}
	}
	return s.upsert(ctx, s.coll(roleVectors), pts)
}
