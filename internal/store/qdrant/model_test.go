package qdrant

// model is an in-process model of the part of Qdrant's gRPC API the driver
// uses, following the server's documented behaviour (a conditional upsert
// applies only when the stored point matches its filter; the sparse IDF
// modifier uses the Lucene formula over the points of the collection). It
// exercises the driver's logic (journal, IDs, filters, exact rescoring,
// runs) through the whole conformance suite on machines without a Qdrant
// server, and is what `go test` uses when SAGASU_TEST_QDRANT is unset. It
// proves nothing about the real server: TestConformance against
// SAGASU_TEST_QDRANT does.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

type mpoint struct {
	id      *qdrant.PointId
	payload map[string]*qdrant.Value
	dense   map[string][]float32
	sparse  map[string]map[uint32]float32
}

type mcoll struct {
	create *qdrant.CreateCollection
	points map[string]*mpoint
}

type model struct {
	qdrant.UnimplementedQdrantServer
	mu    sync.Mutex
	colls map[string]*mcoll
}

// startModel serves a model on a local port and returns its address.
func startModel(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The client pings every 10 s; allow it, as Qdrant does.
	srv := grpc.NewServer(grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}))
	m := &model{colls: map[string]*mcoll{}}
	qdrant.RegisterQdrantServer(srv, m)
	qdrant.RegisterCollectionsServer(srv, &mcolls{model: m})
	qdrant.RegisterPointsServer(srv, &mpoints{model: m})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return l.Addr().String()
}

// mcolls and mpoints serve the collections and points services of a model.
type mcolls struct {
	qdrant.UnimplementedCollectionsServer
	*model
}

type mpoints struct {
	qdrant.UnimplementedPointsServer
	*model
}

func key(id *qdrant.PointId) string {
	if u := id.GetUuid(); u != "" {
		return "u" + u
	}
	return fmt.Sprintf("n%020d", id.GetNum())
}

func (m *model) coll(name string) (*mcoll, error) {
	c := m.colls[name]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "Collection `%s` doesn't exist!", name)
	}
	return c, nil
}

func (m *model) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: "model", Version: "model"}, nil
}

func (m *mcolls) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := &qdrant.ListCollectionsResponse{}
	for n := range m.colls {
		out.Collections = append(out.Collections, &qdrant.CollectionDescription{Name: n})
	}
	return out, nil
}

func (m *mcolls) Create(_ context.Context, r *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.colls[r.CollectionName] != nil {
		return nil, status.Errorf(codes.AlreadyExists, "Collection `%s` already exists!", r.CollectionName)
	}
	m.colls[r.CollectionName] = &mcoll{create: r, points: map[string]*mpoint{}}
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

func (m *mcolls) Delete(_ context.Context, r *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.colls[r.CollectionName]
	delete(m.colls, r.CollectionName)
	return &qdrant.CollectionOperationResponse{Result: ok}, nil
}

func (m *mcolls) Get(_ context.Context, r *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.coll(r.CollectionName)
	if err != nil {
		return nil, err
	}
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{Config: &qdrant.CollectionConfig{
		Params:   &qdrant.CollectionParams{VectorsConfig: c.create.VectorsConfig, SparseVectorsConfig: c.create.SparseVectorsConfig},
		Metadata: c.create.Metadata,
	}}}, nil
}

func (m *mpoints) CreateFieldIndex(_ context.Context, r *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.coll(r.CollectionName); err != nil {
		return nil, err
	}
	return done(), nil
}

func done() *qdrant.PointsOperationResponse {
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed}}
}

// values returns a payload field's values (a list matches by any element).
func values(p map[string]*qdrant.Value, k string) []*qdrant.Value {
	v := p[k]
	if v == nil {
		return nil
	}
	if l := v.GetListValue(); l != nil {
		return l.GetValues()
	}
	return []*qdrant.Value{v}
}

func matchCond(p *mpoint, c *qdrant.Condition) bool {
	switch {
	case c.GetFilter() != nil:
		return matches(p, c.GetFilter())
	case c.GetHasId() != nil:
		return slices.ContainsFunc(c.GetHasId().GetHasId(), func(id *qdrant.PointId) bool { return key(id) == key(p.id) })
	}
	f := c.GetField()
	for _, v := range values(p.payload, f.GetKey()) {
		if r := f.GetRange(); r != nil {
			x := float64(v.GetIntegerValue())
			if _, ok := v.GetKind().(*qdrant.Value_DoubleValue); ok {
				x = v.GetDoubleValue()
			}
			if (r.Lt == nil || x < *r.Lt) && (r.Gt == nil || x > *r.Gt) && (r.Lte == nil || x <= *r.Lte) && (r.Gte == nil || x >= *r.Gte) {
				return true
			}
			continue
		}
		switch mv := f.GetMatch().GetMatchValue().(type) {
		case *qdrant.Match_Keyword:
			if v.GetStringValue() == mv.Keyword {
				return true
			}
		case *qdrant.Match_Keywords:
			if slices.Contains(mv.Keywords.GetStrings(), v.GetStringValue()) {
				return true
			}
		case *qdrant.Match_Integer:
			if _, ok := v.GetKind().(*qdrant.Value_IntegerValue); ok && v.GetIntegerValue() == mv.Integer {
				return true
			}
		}
	}
	return false
}

func matches(p *mpoint, f *qdrant.Filter) bool {
	if f == nil {
		return true
	}
	for _, c := range f.GetMust() {
		if !matchCond(p, c) {
			return false
		}
	}
	for _, c := range f.GetMustNot() {
		if matchCond(p, c) {
			return false
		}
	}
	if len(f.GetShould()) > 0 && !slices.ContainsFunc(f.GetShould(), func(c *qdrant.Condition) bool { return matchCond(p, c) }) {
		return false
	}
	return true
}

func (m *model) selected(c *mcoll, sel *qdrant.PointsSelector) []*mpoint {
	var out []*mpoint
	if ids := sel.GetPoints(); ids != nil {
		for _, id := range ids.GetIds() {
			if p := c.points[key(id)]; p != nil {
				out = append(out, p)
			}
		}
		return out
	}
	for _, p := range c.points {
		if matches(p, sel.GetFilter()) {
			out = append(out, p)
		}
	}
	return out
}

func (m *mpoints) Upsert(_ context.Context, r *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.coll(r.CollectionName)
	if err != nil {
		return nil, err
	}
	for _, ps := range r.Points {
		old := c.points[key(ps.Id)]
		if old != nil && (r.GetUpdateMode() == qdrant.UpdateMode_InsertOnly || (r.UpdateFilter != nil && !matches(old, r.UpdateFilter))) {
			continue
		}
		p := &mpoint{id: ps.Id, payload: ps.Payload, dense: map[string][]float32{}, sparse: map[string]map[uint32]float32{}}
		for name, v := range ps.GetVectors().GetVectors().GetVectors() {
			if sp := v.GetSparse(); sp != nil {
				if len(sp.Indices) != len(sp.Values) {
					return nil, status.Errorf(codes.InvalidArgument, "sparse vector: values and indices differ in length")
				}
				mp := map[uint32]float32{}
				for i, d := range sp.Indices {
					if _, dup := mp[d]; dup {
						return nil, status.Errorf(codes.InvalidArgument, "sparse vector: indices must be unique")
					}
					mp[d] = sp.Values[i]
				}
				p.sparse[name] = mp
				continue
			}
			want := c.create.GetVectorsConfig().GetParamsMap().GetMap()[name].GetSize()
			if uint64(len(v.GetDense().GetData())) != want {
				return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", want, len(v.GetDense().GetData()))
			}
			p.dense[name] = v.GetDense().GetData()
		}
		c.points[key(ps.Id)] = p
	}
	return done(), nil
}

func (m *mpoints) Delete(_ context.Context, r *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.coll(r.CollectionName)
	if err != nil {
		return nil, err
	}
	for _, p := range m.selected(c, r.Points) {
		delete(c.points, key(p.id))
	}
	return done(), nil
}

func (m *mpoints) SetPayload(_ context.Context, r *qdrant.SetPayloadPoints) (*qdrant.PointsOperationResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.coll(r.CollectionName)
	if err != nil {
		return nil, err
	}
	for _, p := range m.selected(c, r.PointsSelector) {
		for k, v := range r.Payload {
			p.payload[k] = v
		}
	}
	return done(), nil
}

func retrieved(p *mpoint, wp *qdrant.WithPayloadSelector, wv *qdrant.WithVectorsSelector) (map[string]*qdrant.Value, *qdrant.VectorsOutput) {
	payload := map[string]*qdrant.Value{}
	switch {
	case wp.GetInclude() != nil:
		for _, f := range wp.GetInclude().GetFields() {
			if v, ok := p.payload[f]; ok {
				payload[f] = v
			}
		}
	case wp.GetExclude() != nil:
		for k, v := range p.payload {
			if !slices.Contains(wp.GetExclude().GetFields(), k) {
				payload[k] = v
			}
		}
	case wp.GetEnable():
		payload = p.payload
	}
	if wv == nil || (wv.GetInclude() == nil && !wv.GetEnable()) {
		return payload, nil
	}
	out := map[string]*qdrant.VectorOutput{}
	want := func(n string) bool { return wv.GetEnable() || slices.Contains(wv.GetInclude().GetNames(), n) }
	for n, d := range p.dense {
		if want(n) {
			out[n] = &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: d}}}
		}
	}
	for n, sp := range p.sparse {
		if want(n) {
			var idx []uint32
			var val []float32
			for d, v := range sp {
				idx = append(idx, d)
				val = append(val, v)
			}
			out[n] = &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Sparse{Sparse: &qdrant.SparseVector{Indices: idx, Values: val}}}
		}
	}
	return payload, &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{Vectors: out}}}
}

func (m *mpoints) Get(_ context.Context, r *qdrant.GetPoints) (*qdrant.GetResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.coll(r.CollectionName)
	if err != nil {
		return nil, err
	}
	out := &qdrant.GetResponse{}
	for _, id := range r.Ids {
		if p := c.points[key(id)]; p != nil {
			pl, vs := retrieved(p, r.WithPayload, r.WithVectors)
			out.Result = append(out.Result, &qdrant.RetrievedPoint{Id: p.id, Payload: pl, Vectors: vs})
		}
	}
	return out, nil
}

func sortedPoints(c *mcoll, f *qdrant.Filter) []*mpoint {
	var ps []*mpoint
	for _, p := range c.points {
		if matches(p, f) {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *mpoint) int { return strings.Compare(key(a.id), key(b.id)) })
	return ps
}

func (m *mpoints) Scroll(_ context.Context, r *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.coll(r.CollectionName)
	if err != nil {
		return nil, err
	}
	ps := sortedPoints(c, r.Filter)
	limit := int(r.GetLimit())
	if limit == 0 {
		limit = 10
	}
	out := &qdrant.ScrollResponse{}
	if ob := r.OrderBy; ob != nil {
		slices.SortStableFunc(ps, func(a, b *mpoint) int {
			x := cmp.Compare(a.payload[ob.Key].GetIntegerValue(), b.payload[ob.Key].GetIntegerValue())
			if ob.GetDirection() == qdrant.Direction_Desc {
				return -x
			}
			return x
		})
	} else if r.Offset != nil {
		i, _ := slices.BinarySearchFunc(ps, key(r.Offset), func(p *mpoint, k string) int { return strings.Compare(key(p.id), k) })
		ps = ps[i:]
	}
	if len(ps) > limit {
		if r.OrderBy == nil {
			out.NextPageOffset = ps[limit].id
		}
		ps = ps[:limit]
	}
	for _, p := range ps {
		pl, vs := retrieved(p, r.WithPayload, r.WithVectors)
		out.Result = append(out.Result, &qdrant.RetrievedPoint{Id: p.id, Payload: pl, Vectors: vs})
	}
	return out, nil
}

func (m *mpoints) Count(_ context.Context, r *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.coll(r.CollectionName)
	if err != nil {
		return nil, err
	}
	return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: uint64(len(sortedPoints(c, r.Filter)))}}, nil
}

func (m *mpoints) Facet(_ context.Context, r *qdrant.FacetCounts) (*qdrant.FacetResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.coll(r.CollectionName)
	if err != nil {
		return nil, err
	}
	counts := map[string]uint64{}
	for _, p := range sortedPoints(c, r.Filter) {
		seen := map[string]bool{}
		for _, v := range values(p.payload, r.Key) {
			if !seen[v.GetStringValue()] {
				counts[v.GetStringValue()]++
				seen[v.GetStringValue()] = true
			}
		}
	}
	out := &qdrant.FacetResponse{}
	for v, n := range counts {
		out.Hits = append(out.Hits, &qdrant.FacetHit{Value: qdrant.NewFacetValue(v), Count: n})
	}
	return out, nil
}

// Query answers a nearest-neighbour query: cosine for dense vectors; dot
// product, with Qdrant's IDF when the sparse vector has the IDF modifier.
func (m *mpoints) Query(_ context.Context, r *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.coll(r.CollectionName)
	if err != nil {
		return nil, err
	}
	using := r.GetUsing()
	nearest := r.GetQuery().GetNearest()
	ps := sortedPoints(c, r.Filter)
	type scored struct {
		p *mpoint
		s float32
	}
	var res []scored
	if sp := nearest.GetSparse(); sp != nil {
		idf := c.create.GetSparseVectorsConfig().GetMap()[using].GetModifier() == qdrant.Modifier_Idf
		n := 0
		df := map[uint32]int{}
		for _, p := range c.points {
			if v, ok := p.sparse[using]; ok {
				n++
				for d := range v {
					df[d]++
				}
			}
		}
		for _, p := range ps {
			v, ok := p.sparse[using]
			if !ok {
				continue
			}
			var s float32
			hit := false
			for i, d := range sp.Indices {
				w, ok := v[d]
				if !ok {
					continue
				}
				hit = true
				q := sp.Values[i]
				if idf {
					q *= float32(math.Log((float64(n)-float64(df[d])+0.5)/(float64(df[d])+0.5) + 1))
				}
				s += q * w
			}
			if hit {
				res = append(res, scored{p, s})
			}
		}
	} else {
		q := nearest.GetDense().GetData()
		want := c.create.GetVectorsConfig().GetParamsMap().GetMap()[using].GetSize()
		if uint64(len(q)) != want {
			return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", want, len(q))
		}
		for _, p := range ps {
			v, ok := p.dense[using]
			if !ok {
				continue
			}
			var dot, na, nb float64
			for i := range q {
				dot += float64(q[i]) * float64(v[i])
				na += float64(q[i]) * float64(q[i])
				nb += float64(v[i]) * float64(v[i])
			}
			res = append(res, scored{p, float32(dot / math.Sqrt(na*nb))})
		}
	}
	slices.SortStableFunc(res, func(a, b scored) int { return cmp.Compare(b.s, a.s) })
	if lim := int(r.GetLimit()); len(res) > lim {
		res = res[:lim]
	}
	out := &qdrant.QueryResponse{}
	for _, s := range res {
		pl, vs := retrieved(s.p, r.WithPayload, r.WithVectors)
		out.Result = append(out.Result, &qdrant.ScoredPoint{Id: s.p.id, Payload: pl, Vectors: vs, Score: s.s})
	}
	return out, nil
}

// TestConformanceOnModel runs the conformance suite on the model: the
// driver's own logic, without a server.
func TestConformanceOnModel(t *testing.T) {
	addr := startModel(t)
	n := 0
	storetest.Run(t, func(t *testing.T) store.Store {
		n++
		s, err := openDriver(context.Background(), fmt.Sprintf("qdrant://%s/model%d", addr, n), Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		return store.New(s)
	})
}
