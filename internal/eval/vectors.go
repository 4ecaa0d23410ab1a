package eval

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/vecindex"

	_ "modernc.org/sqlite"     // the "sqlite" database/sql driver
	_ "modernc.org/sqlite/vec" // vec0 tables, to read an index's vectors
)

// VectorBenchOptions configure VectorBench.
type VectorBenchOptions struct {
	Vectors int // collection size
	Dim     int // dimensions of synthetic vectors (ignored with Real)
	Queries int // queries to time on each path
	K       int // results per query
	Seed    uint64
	// Real, when set, are embeddings to draw from instead of synthetic
	// clusters: some are held out as queries, the rest and mixes of pairs
	// of them (as Synthesize mixes texts) make the collection.
	Real [][]float32
	// RealQueries, when set with Real, are the held-out queries (a vector
	// file's, embedded from the dataset's questions): then all of Real is
	// the collection, extended by mixes of pairs past its size.
	RealQueries [][]float32
	// ApproxEf is the HNSW search list length (0: vecindex's default for
	// the graph's size).
	ApproxEf int
	// SweepEf, when set, are further search list lengths the built graph
	// is timed with, each with its recall (EfSweep), after Approx.
	SweepEf []int
	// Changes, when positive, is how many rows are added to the graph and
	// then deleted from it in place (ChangeResult).
	Changes int
	// BuildLimit, when positive, bounds the graph's build: past it the
	// build stops and the result has the scans only (GraphStopped), so a
	// long run still reports what it measured.
	BuildLimit time.Duration
}

// EfTimed is the graph searched with one search list length.
type EfTimed struct {
	Ef int `json:"ef"`
	PathResult
}

// PathResult is one search path's latency, its recall@k against the
// exact scan, and the memory it adds.
type PathResult struct {
	Latency Latency `json:"latencyMs"`
	Recall  float64 `json:"recallAtK"`
	MB      float64 `json:"mb"`
}

// VectorBenchResult is what the vector benchmark prints.
type VectorBenchResult struct {
	Vectors  int    `json:"vectors"`
	Dim      int    `json:"dim"`
	Source   string `json:"source"` // "synthetic clusters" or "mixed real vectors"
	Queries  int    `json:"queries"`
	K        int    `json:"k"`
	Cores    int    `json:"cores"`
	SIMD     bool   `json:"simd"`     // the exact scan runs vek's AVX2 code
	Int8SIMD bool   `json:"int8Simd"` // the int8 scan runs the AVX2 assembly
	// Exact is the exact scan (recall 1 by definition); MB is the matrix.
	Exact PathResult `json:"exact"`
	// Portable is the exact scan in plain Go, as on a CPU without AVX2.
	Portable PathResult `json:"portable"`
	// Int8 scans an int8 copy and re-ranks vecindex.DefaultRerank
	// candidates exactly; MB is the copy.
	Int8 PathResult `json:"int8"`
	// Approx is the HNSW graph; MB is the graph, BuildSeconds its build.
	Approx       PathResult `json:"approx"`
	BuildSeconds float64    `json:"buildSeconds"`
	// Ef is the search list length Approx searched with; EfSweep the
	// graph again at each of the options' SweepEf.
	Ef      int       `json:"ef,omitempty"`
	EfSweep []EfTimed `json:"efSweep,omitempty"`
	// GraphStopped is set when the build passed BuildLimit: Approx and
	// Changes are then empty, BuildSeconds is when it stopped.
	GraphStopped bool `json:"graphStopped,omitempty"`
	// Changes is the graph changed in place (vecindex.Live): rows added
	// and deleted, then searched again.
	Changes   *ChangeResult `json:"changes,omitempty"`
	PeakRSSMB float64       `json:"peakRssMb"`
}

// ChangeResult measures a graph that changes without a rebuild.
type ChangeResult struct {
	Added   int `json:"added"`
	Deleted int `json:"deleted"`
	// LinkMs is the time to link one added row into the graph (one core);
	// RepairSeconds the time to relink the neighbours of the deleted rows
	// and free them.
	LinkMs        float64 `json:"linkMsPerVector"`
	RepairSeconds float64 `json:"repairSeconds"`
	// After is the graph's search after the changes, recall against the
	// exact scan of the rows then held.
	After PathResult `json:"after"`
}

// BenchVectors returns the collection and the queries VectorBench searches
// with opt, and says where they come from. The same options give the same
// vectors, so `sagasu bench --export-vectors` hands another engine exactly
// what the bench measures.
func BenchVectors(opt VectorBenchOptions) (rows, queries [][]float32, source string, err error) {
	switch {
	case len(opt.Real) > 0 && len(opt.RealQueries) > 0:
		rows = ExtendVectors(opt.Real, opt.Vectors, opt.Seed)
		queries = opt.RealQueries[:min(len(opt.RealQueries), max(opt.Queries, 1))]
		source = fmt.Sprintf("real vectors (%d, mixed in pairs past that), %d held-out queries", min(len(opt.Real), opt.Vectors), len(queries))
	case len(opt.Real) > 0:
		rows, queries = mixReal(opt.Real, opt.Vectors, opt.Queries, opt.Seed)
		source = fmt.Sprintf("mixed real vectors (%d drawn from, %d held out as queries)", len(opt.Real)-len(queries), len(queries))
	default:
		rows = vecindex.Clustered(opt.Vectors, opt.Dim, opt.Seed)
		queries = vecindex.ClusteredQueries(opt.Queries, opt.Vectors, opt.Dim, opt.Seed)
		source = "synthetic clusters (topics of 100, subtopics of 10, Gaussian noise)"
	}
	if len(rows) == 0 || len(queries) == 0 {
		return nil, nil, source, fmt.Errorf("vector bench: no vectors to search (--vectors %d, --queries %d)", opt.Vectors, opt.Queries)
	}
	return rows, queries, source, nil
}

// VectorBench builds a collection of opt.Vectors vectors in memory and
// times top-k queries on each vecindex path, with recall against the exact
// scan. No model or index is needed.
func VectorBench(ctx context.Context, opt VectorBenchOptions) (VectorBenchResult, error) {
	k := max(opt.K, 1)
	res := VectorBenchResult{Vectors: opt.Vectors, Queries: opt.Queries, K: k, Cores: runtime.GOMAXPROCS(0)}
	rows, queries, source, err := BenchVectors(opt)
	res.Source = source
	if err != nil {
		return res, err
	}
	res.Dim = len(rows[0])
	res.Queries = len(queries)
	flat := vecindex.NewFlat(res.Dim, vecindex.FlatOptions{Capacity: len(rows)})
	portable := vecindex.NewFlat(res.Dim, vecindex.FlatOptions{Capacity: len(rows), Portable: true})
	for i, r := range rows {
		flat.Add(int64(i+1), r)
		portable.Add(int64(i+1), r)
	}
	rows = nil
	res.SIMD, res.Int8SIMD = flat.SIMD(), vecindex.Int8SIMD()
	res.Vectors = flat.Len()

	exact := make([][]store.Scored, len(queries))
	if res.Exact, err = timeSearches(ctx, flat, queries, k, exact); err != nil {
		return res, err
	}
	res.Exact.Recall, res.Exact.MB = 1, float64(flat.Bytes())/1e6
	if res.Portable, err = timeSearches(ctx, portable, queries, k, exact); err != nil {
		return res, err
	}
	portable = nil
	runtime.GC()

	x := vecindex.NewCompact(flat)
	if res.Int8, err = timeSearches(ctx, x, queries, k, exact); err != nil {
		return res, err
	}
	res.Int8.MB = float64(x.Bytes()) / 1e6

	start := time.Now()
	bctx, cancel := ctx, context.CancelFunc(func() {})
	if opt.BuildLimit > 0 {
		bctx, cancel = context.WithTimeout(ctx, opt.BuildLimit)
	}
	g, err := vecindex.BuildHNSW(bctx, x, vecindex.HNSWOptions{Seed: opt.Seed, EfSearch: opt.ApproxEf})
	cancel()
	res.BuildSeconds = time.Since(start).Seconds()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			res.GraphStopped = true
			res.PeakRSSMB = peakRSSMB()
			return res, nil
		}
		return res, err
	}
	if res.Approx, err = timeSearches(ctx, g, queries, k, exact); err != nil {
		return res, err
	}
	res.Approx.MB = float64(g.Bytes()) / 1e6
	res.Ef = g.EfSearch()
	for _, ef := range opt.SweepEf {
		g.SetEfSearch(ef)
		r, err := timeSearches(ctx, g, queries, k, exact)
		if err != nil {
			return res, err
		}
		res.EfSweep = append(res.EfSweep, EfTimed{Ef: ef, PathResult: r})
	}
	g.SetEfSearch(opt.ApproxEf)
	if opt.Changes > 0 {
		c, err := benchChanges(ctx, flat, x, g, queries, k, opt)
		if err != nil {
			return res, err
		}
		res.Changes = &c
	}
	res.PeakRSSMB = peakRSSMB()
	return res, nil
}

// benchChanges adds opt.Changes new rows to the graph one at a time,
// deletes as many, repairs, and times searches again with recall against
// the exact scan of what is left.
func benchChanges(ctx context.Context, flat *vecindex.Flat, x *vecindex.Compact, g *vecindex.HNSW, queries [][]float32, k int, opt VectorBenchOptions) (ChangeResult, error) {
	n := flat.Len()
	c := ChangeResult{Added: opt.Changes, Deleted: min(opt.Changes, n)}
	// A low repair threshold: the deletions here are to be repaired.
	l := vecindex.LiveFrom(flat, x, g, vecindex.LiveOptions{RepairAt: 0.001})
	defer l.Close()
	var add [][]float32
	if len(opt.Real) > 0 {
		add, _ = mixReal(opt.Real, c.Added, opt.Queries, opt.Seed+1) // queries held out again
	} else {
		add = vecindex.Clustered(c.Added, flat.Dim(), opt.Seed+1)
	}
	start := time.Now()
	for i, v := range add {
		l.Add(int64(n+i+1), v)
	}
	if err := l.Flush(ctx); err != nil {
		return c, err
	}
	c.LinkMs = float64(time.Since(start).Microseconds()) / 1e3 / float64(max(1, c.Added))
	rng := rand.New(rand.NewPCG(opt.Seed, 99))
	for _, i := range rng.Perm(n)[:c.Deleted] {
		l.Delete(int64(i + 1))
	}
	start = time.Now()
	if err := l.Flush(ctx); err != nil {
		return c, err
	}
	c.RepairSeconds = time.Since(start).Seconds()
	exact := make([][]store.Scored, len(queries))
	for i, q := range queries {
		exact[i] = l.SearchExact(q, k, nil)
	}
	var err error
	c.After, err = timeSearches(ctx, l, queries, k, exact)
	return c, err
}

// timeSearches times one search per query after a few untimed ones. With
// want[i] nil it stores the hits there; otherwise it measures recall
// against them.
func timeSearches(ctx context.Context, s vecindex.Searcher, queries [][]float32, k int, want [][]store.Scored) (PathResult, error) {
	for _, q := range queries[:min(len(queries), 10)] {
		s.Search(q, k, nil)
	}
	lat := make([]time.Duration, len(queries))
	hit, all := 0, 0
	for i, q := range queries {
		if err := ctx.Err(); err != nil {
			return PathResult{}, err
		}
		start := time.Now()
		got := s.Search(q, k, nil)
		lat[i] = time.Since(start)
		if want[i] == nil {
			want[i] = got
			continue
		}
		in := map[int64]bool{}
		for _, h := range want[i] {
			in[h.ChunkID] = true
		}
		for _, h := range got {
			if in[h.ChunkID] {
				hit++
			}
		}
		all += len(want[i])
	}
	r := PathResult{Latency: Percentiles(lat)}
	if all > 0 {
		r.Recall = float64(hit) / float64(all)
	}
	return r, nil
}

// mixReal holds out up to q of real (a tenth at most) as queries and makes
// n vectors of the rest with ExtendVectors.
func mixReal(real [][]float32, n, q int, seed uint64) (rows, queries [][]float32) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	perm := rng.Perm(len(real))
	q = min(q, len(real)/10)
	for _, i := range perm[:q] {
		queries = append(queries, real[i])
	}
	base := make([][]float32, 0, len(real)-q)
	for _, i := range perm[q:] {
		base = append(base, real[i])
	}
	return extendVectors(rng, base, n), queries
}

// ExtendVectors makes n vectors of base: each once as it is, then sums of
// a pair (the direction between two texts, as a text mixing them would
// embed near), with random weights so that no two coincide. The same seed
// gives the same vectors.
func ExtendVectors(base [][]float32, n int, seed uint64) [][]float32 {
	return extendVectors(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), base, n)
}

func extendVectors(rng *rand.Rand, base [][]float32, n int) [][]float32 {
	if len(base) == 0 {
		return nil
	}
	rows := make([][]float32, n)
	for i := range rows {
		a := base[i%len(base)]
		if i < len(base) {
			rows[i] = a
			continue
		}
		b := base[rng.IntN(len(base))]
		w := float32(0.3 + 0.4*rng.Float64())
		v := make([]float32, len(a))
		for j := range v {
			v[j] = w*a[j] + (1-w)*b[j]
		}
		rows[i] = v
	}
	return rows
}

// ReadIndexVectors returns the vectors of a sagasu SQLite index (its
// chunk_vectors table), opened read-only.
func ReadIndexVectors(ctx context.Context, path string) ([][]float32, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("read vectors of %q: %w: pass --vectors-from with a SQLite index that has embeddings", path, err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT embedding FROM chunk_vectors ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("read vectors of %q (does it hold embeddings?): %w", path, err)
	}
	defer rows.Close()
	var out [][]float32
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("read vectors of %q: %w", path, err)
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read vectors of %q: %w", path, err)
	}
	return out, nil
}
