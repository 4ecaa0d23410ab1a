package qdrant

import (
	"context"
	"hash/fnv"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// Payload helpers: the driver builds and reads payloads field by field
// (no reflection on the hot path). Getters on nil values return zero.

func vstr(s string) *qdrant.Value { return qdrant.NewValueString(s) }
func vint(n int64) *qdrant.Value  { return qdrant.NewValueInt(n) }

func vstrs(ss []string) *qdrant.Value {
	vs := make([]*qdrant.Value, len(ss))
	for i, s := range ss {
		vs[i] = vstr(s)
	}
	return qdrant.NewValueFromList(vs...)
}

func vints(ns []int64) *qdrant.Value {
	vs := make([]*qdrant.Value, len(ns))
	for i, n := range ns {
		vs[i] = vint(n)
	}
	return qdrant.NewValueFromList(vs...)
}

func pstr(p map[string]*qdrant.Value, k string) string { return p[k].GetStringValue() }
func pint(p map[string]*qdrant.Value, k string) int64  { return p[k].GetIntegerValue() }

func pints(p map[string]*qdrant.Value, k string) []int64 {
	vals := p[k].GetListValue().GetValues()
	out := make([]int64, len(vals))
	for i, v := range vals {
		out[i] = v.GetIntegerValue()
	}
	return out
}

// fieldInts reads a per-field list of lengths (missing fields are 0).
func fieldInts(p map[string]*qdrant.Value, k string) [bm25.NumFields]int64 {
	var out [bm25.NumFields]int64
	copy(out[:], pints(p, k))
	return out
}

func pstrs(p map[string]*qdrant.Value, k string) []string {
	vals := p[k].GetListValue().GetValues()
	if len(vals) == 0 {
		return nil
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v.GetStringValue()
	}
	return out
}

// termDim is the sparse dimension of a keyword term: the 32-bit FNV-1a hash
// of its bytes. Two terms may share a dimension (about one pair in a
// vocabulary of 30,000 terms is expected to); they then add up in Qdrant's
// ranking, while exact ranking takes document frequencies from the terms
// payload, which has no collisions.
func termDim(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return h.Sum32()
}

func numID(id int64) *qdrant.PointId { return qdrant.NewIDNum(uint64(id)) }

func idOf(p *qdrant.PointId) int64 { return int64(p.GetNum()) }

// denseOf reads a dense vector from a point's named vectors.
func denseOf(v *qdrant.VectorsOutput, name string) []float32 {
	out := v.GetVectors().GetVectors()[name]
	if d := out.GetDense(); d != nil {
		return d.GetData()
	}
	//lint:ignore SA1019 servers before 1.12 fill only the deprecated field
	return out.GetData()
}

const pageSize = 256

// scroll calls fn for every point of coll that f matches, a page at a time.
func (s *Store) scroll(ctx context.Context, coll string, f *qdrant.Filter, payload *qdrant.WithPayloadSelector, vectors *qdrant.WithVectorsSelector, fn func(*qdrant.RetrievedPoint) error) error {
	var offset *qdrant.PointId
	limit := uint32(pageSize)
	for {
		pts, next, err := s.c.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
			CollectionName: coll, Filter: f, Offset: offset, Limit: &limit,
			WithPayload: payload, WithVectors: vectors,
		})
		if err != nil {
			return s.wrap("read "+coll, err)
		}
		for _, p := range pts {
			if err := fn(p); err != nil {
				return err
			}
		}
		if next == nil || len(pts) == 0 {
			return nil
		}
		offset = next
	}
}

// upsert writes points in pages, each page waiting until it is applied.
func (s *Store) upsert(ctx context.Context, coll string, pts []*qdrant.PointStruct) error {
	wait := true
	for len(pts) > 0 {
		n, size := 0, 0
		for n < len(pts) && n < pageSize && (n == 0 || size < 8<<20) {
			size += payloadSize(pts[n].GetPayload())
			n++
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := s.c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: &wait, Points: pts[:n]}); err != nil {
			return s.wrap("write to "+coll, err)
		}
		pts = pts[n:]
	}
	return nil
}

func payloadSize(p map[string]*qdrant.Value) int {
	n := 0
	for k, v := range p {
		n += len(k) + len(v.GetStringValue()) + 16
	}
	return n
}

// deleteWhere removes the points of coll that f matches.
func (s *Store) deleteWhere(ctx context.Context, coll string, f *qdrant.Filter) error {
	wait := true
	if _, err := s.c.Delete(ctx, &qdrant.DeletePoints{CollectionName: coll, Wait: &wait, Points: qdrant.NewPointsSelectorFilter(f)}); err != nil {
		return s.wrap("delete from "+coll, err)
	}
	return nil
}

func (s *Store) count(ctx context.Context, coll string, f *qdrant.Filter) (int, error) {
	exact := true
	n, err := s.c.Count(ctx, &qdrant.CountPoints{CollectionName: coll, Filter: f, Exact: &exact})
	if err != nil {
		return 0, s.wrap("count "+coll, err)
	}
	return int(n), nil
}
