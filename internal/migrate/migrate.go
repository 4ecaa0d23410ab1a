// Package migrate copies an index from one store to another (SQLite to
// PostgreSQL and back): sources with their original content, chunks, their
// embeddings and the pinned embedder, so that the copy answers every query
// as the original does. A copy can be interrupted and run again; it resumes.
package migrate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// MetaEmbedder is the setting under which an index pins its embedder (a
// JSON object with at least the vector dimension as "dim"); it is copied
// with the vectors.
const MetaEmbedder = "embedder"

// Options configure Copy.
type Options struct {
	// BatchBytes is how much original content goes into one write
	// transaction of the destination (default 8 MiB).
	BatchBytes int
	// Prune deletes sources that the destination holds and the origin does
	// not, so the copy is exact; without it they are kept and reported.
	Prune bool
	// Verify is how many sample queries (drawn from the origin's chunks)
	// are run against both stores after the copy; their results must be
	// identical. 0 runs none.
	Verify int
	// Progress, when set, is called after every batch.
	Progress func(Progress)
}

// Progress reports how far a copy is.
type Progress struct {
	Sources int // sources in the origin
	Done    int // sources copied or found already present
}

// Report summarises a copy.
type Report struct {
	Sources  int `json:"sources"`  // sources in the origin
	Copied   int `json:"copied"`   // sources written to the destination
	Skipped  int `json:"skipped"`  // already present with the same content hash
	Pruned   int `json:"pruned"`   // removed from the destination (Prune)
	Extra    int `json:"extra"`    // in the destination only, kept
	Chunks   int `json:"chunks"`   // chunks written
	Vectors  int `json:"vectors"`  // embeddings written
	Verified int `json:"verified"` // sample queries that matched
	Runs     int `json:"runs"`     // agent runs and chat threads created in the destination
	Events   int `json:"events"`   // run events appended to the destination
}

// Copy copies every source of from into to and checks the result: the
// destination must end with as many sources, chunks and vectors as the
// origin (plus Report.Extra kept sources), and the sample queries must give
// the same results. Sources the destination already holds with the same
// content hash are skipped, so a copy that stopped half way resumes.
func Copy(ctx context.Context, from, to store.Store, opt Options) (Report, error) {
	if opt.BatchBytes <= 0 {
		opt.BatchBytes = 8 << 20
	}
	var rep Report
	dim, err := pinEmbedder(ctx, from, to)
	if err != nil {
		return rep, err
	}
	order, err := sourceOrder(ctx, from)
	if err != nil {
		return rep, fmt.Errorf("read the origin: %w", err)
	}
	have, err := to.Hashes(ctx)
	if err != nil {
		return rep, fmt.Errorf("read the destination: %w", err)
	}
	rep.Sources = len(order)

	var batch []store.SourceData
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		for _, sd := range batch {
			if sd.Vectors != nil && dim == 0 {
				// The origin has vectors but no pin that names their size.
				dim = len(firstVector(sd.Vectors))
				if err := to.InitVectors(ctx, dim); err != nil {
					return fmt.Errorf("prepare the destination's vectors: %w", err)
				}
			}
		}
		if err := to.Replace(ctx, batch); err != nil {
			return fmt.Errorf("write to the destination: %w", err)
		}
		for _, sd := range batch {
			rep.Copied++
			rep.Chunks += len(sd.Chunks)
			for _, v := range sd.Vectors {
				if v != nil && !isZero(v) {
					rep.Vectors++
				}
			}
		}
		batch, size = batch[:0], 0
		if opt.Progress != nil {
			opt.Progress(Progress{Sources: rep.Sources, Done: rep.Copied + rep.Skipped})
		}
		return nil
	}
	for _, src := range order {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if h, ok := have[src.URI]; ok && h == src.ContentHash {
			rep.Skipped++
			continue
		}
		sd, err := load(ctx, from, src)
		if err != nil {
			return rep, fmt.Errorf("read %q from the origin: %w", src.URI, err)
		}
		batch = append(batch, sd)
		size += len(sd.Content)
		if size >= opt.BatchBytes || len(batch) >= 1000 {
			if err := flush(); err != nil {
				return rep, err
			}
		}
	}
	if err := flush(); err != nil {
		return rep, err
	}
	if opt.Progress != nil {
		opt.Progress(Progress{Sources: rep.Sources, Done: rep.Copied + rep.Skipped})
	}

	// Sources only the destination has.
	inOrigin := make(map[string]bool, len(order))
	for _, src := range order {
		inOrigin[src.URI] = true
	}
	var extra []string
	for uri := range have {
		if !inOrigin[uri] {
			extra = append(extra, doc.SourceID(uri))
		}
	}
	if opt.Prune && len(extra) > 0 {
		n, err := to.Delete(ctx, extra)
		if err != nil {
			return rep, fmt.Errorf("prune the destination: %w", err)
		}
		rep.Pruned = n
	} else {
		rep.Extra = len(extra)
	}
	if err := checkCounts(ctx, from, to, rep.Extra); err != nil {
		return rep, err
	}
	if rep.Runs, rep.Events, err = copyRuns(ctx, from, to); err != nil {
		return rep, err
	}
	if opt.Verify > 0 && rep.Extra == 0 {
		n, err := Verify(ctx, from, to, SampleQueries(ctx, from, order, opt.Verify), 10)
		rep.Verified = n
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// copyRuns copies the run log: a run the destination lacks is created with
// its header, and every run gets the events after the destination's last
// one, with their own times, so sequence numbers and Updated come out the
// same. A run whose header changed since an earlier copy is updated.
func copyRuns(ctx context.Context, from, to store.Store) (runs, events int, err error) {
	list, err := from.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		return 0, 0, fmt.Errorf("read the origin's runs: %w", err)
	}
	for _, r := range list {
		var after int64
		have, err := to.Run(ctx, r.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if err := to.CreateRun(ctx, r); err != nil {
				return runs, events, fmt.Errorf("copy run %q: %w", r.ID, err)
			}
			runs++
		case err != nil:
			return runs, events, fmt.Errorf("read the destination's run %q: %w", r.ID, err)
		default:
			if have.Status != r.Status || have.Title != r.Title || string(have.Meta) != string(r.Meta) {
				if err := to.UpdateRun(ctx, r.ID, store.RunUpdate{Status: r.Status, Title: r.Title, Meta: r.Meta}); err != nil {
					return runs, events, fmt.Errorf("copy run %q: %w", r.ID, err)
				}
			}
			got, err := to.Events(ctx, r.ID, 0)
			if err != nil {
				return runs, events, fmt.Errorf("read the destination's run %q: %w", r.ID, err)
			}
			if len(got) > 0 {
				after = got[len(got)-1].Seq
			}
		}
		evs, err := from.Events(ctx, r.ID, after)
		if err != nil {
			return runs, events, fmt.Errorf("read the origin's run %q: %w", r.ID, err)
		}
		for len(evs) > 0 {
			n := min(len(evs), 1000)
			if _, err := to.AppendEvents(ctx, r.ID, evs[:n]); err != nil {
				return runs, events, fmt.Errorf("copy the events of run %q: %w", r.ID, err)
			}
			events += n
			evs = evs[n:]
		}
	}
	return runs, events, nil
}

// pinEmbedder copies the origin's pinned embedder to the destination and
// prepares its vector table, refusing a destination pinned to another one.
// It returns the vector dimension (0 when the pin does not say).
func pinEmbedder(ctx context.Context, from, to store.Store) (int, error) {
	pin, err := from.Meta(ctx, MetaEmbedder)
	if err != nil {
		return 0, fmt.Errorf("read the origin: %w", err)
	}
	theirs, err := to.Meta(ctx, MetaEmbedder)
	if err != nil {
		return 0, fmt.Errorf("read the destination: %w", err)
	}
	if theirs != "" && theirs != pin {
		what := "no embedder"
		if pin != "" {
			what = "embedder " + pin
		}
		return 0, fmt.Errorf("the destination is pinned to embedder %s and the origin has %s: migrate into an empty index, or unpin the destination first", theirs, what)
	}
	if pin == "" {
		return 0, nil
	}
	var p struct {
		Dim int `json:"dim"`
	}
	if err := json.Unmarshal([]byte(pin), &p); err != nil {
		return 0, fmt.Errorf("the origin's pinned embedder is unreadable (%v): re-embed it with `sagasu reindex` first", err)
	}
	if p.Dim > 0 {
		if err := to.InitVectors(ctx, p.Dim); err != nil {
			return 0, fmt.Errorf("prepare the destination's vectors: %w", err)
		}
	}
	if theirs == "" {
		if err := to.SetMeta(ctx, MetaEmbedder, pin); err != nil {
			return 0, fmt.Errorf("pin the destination's embedder: %w", err)
		}
	}
	return p.Dim, nil
}

// sourceOrder lists the origin's sources in the order of their first chunk,
// which is the order they were written in. Copying them in that order gives
// the destination's chunks the same relative ID order, so hits with equal
// scores (ranked by chunk ID) come in the same order in both. Sources
// without chunks follow, by URI.
func sourceOrder(ctx context.Context, from store.Store) ([]doc.Source, error) {
	srcs, err := from.Sources(ctx, store.ListOptions{})
	if err != nil {
		return nil, err
	}
	first := map[string]int64{}
	err = from.EachChunk(ctx, func(c doc.Chunk, _ string) error {
		if _, ok := first[c.SourceID]; !ok {
			first[c.SourceID] = c.ID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	key := func(s doc.Source) int64 {
		if id, ok := first[s.ID]; ok {
			return id
		}
		return math.MaxInt64
	}
	slices.SortStableFunc(srcs, func(a, b doc.Source) int {
		return cmp.Or(cmp.Compare(key(a), key(b)), strings.Compare(a.URI, b.URI))
	})
	return srcs, nil
}

// load reads one source whole: content, chunks and their vectors.
func load(ctx context.Context, from store.Store, src doc.Source) (store.SourceData, error) {
	content, err := from.Content(ctx, src.ID)
	if err != nil {
		return store.SourceData{}, err
	}
	chunks, err := from.Chunks(ctx, src.ID)
	if err != nil {
		return store.SourceData{}, err
	}
	sd := store.SourceData{
		Source:  doc.Source{ID: src.ID, URI: src.URI, Type: src.Type, Format: src.Format, Title: src.Title, ContentHash: src.ContentHash},
		Content: content, Chunks: chunks,
	}
	if len(chunks) == 0 {
		return sd, nil
	}
	ids := make([]int64, len(chunks))
	for i, c := range chunks {
		ids[i] = c.ID
	}
	vecs, err := from.VectorsByID(ctx, ids)
	if err != nil || len(vecs) == 0 {
		return sd, err
	}
	// A chunk without a vector (its text had no known word) gets a zero
	// vector, which no store keeps: the copy has the same gaps.
	dim := 0
	for _, v := range vecs {
		dim = len(v)
		break
	}
	sd.Vectors = make([][]float32, len(chunks))
	for i, c := range chunks {
		if v, ok := vecs[c.ID]; ok {
			sd.Vectors[i] = v
		} else {
			sd.Vectors[i] = make([]float32, dim)
		}
	}
	return sd, nil
}

func firstVector(vs [][]float32) []float32 {
	for _, v := range vs {
		if len(v) > 0 {
			return v
		}
	}
	return nil
}

func isZero(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}

// checkCounts compares what both stores hold.
func checkCounts(ctx context.Context, from, to store.Store, extra int) error {
	a, err := from.Stats(ctx)
	if err != nil {
		return fmt.Errorf("count the origin: %w", err)
	}
	b, err := to.Stats(ctx)
	if err != nil {
		return fmt.Errorf("count the destination: %w", err)
	}
	if extra > 0 {
		// Sources only the destination has make exact counts meaningless;
		// at least everything of the origin must be there.
		if b.Sources < a.Sources+extra || b.Chunks < a.Chunks {
			return fmt.Errorf("count check failed: the origin has %d sources and %d chunks, the destination %d sources (%d of them its own) and %d chunks",
				a.Sources, a.Chunks, b.Sources, extra, b.Chunks)
		}
		return nil
	}
	if a.Sources != b.Sources || a.Chunks != b.Chunks || a.Vectors != b.Vectors || a.Bytes != b.Bytes || a.Terms != b.Terms {
		return fmt.Errorf("count check failed: the origin has %d sources, %d chunks, %d vectors, %d terms, %d bytes; the destination %d, %d, %d, %d, %d",
			a.Sources, a.Chunks, a.Vectors, a.Terms, a.Bytes, b.Sources, b.Chunks, b.Vectors, b.Terms, b.Bytes)
	}
	return nil
}

// Result is a search hit named the way every store names it: chunk IDs are
// each store's own, but a source's URI and a chunk's position in it are not.
// Two stores give identical results when their hits match in this form,
// score included.
type Result struct {
	URI   string  `json:"uri"`
	Chunk int     `json:"chunk"` // the chunk's index within its source
	Score float64 `json:"score"`
}

// Results runs a keyword query (analysed by the default analyzer, which
// every index is pinned to) and names its hits.
func Results(ctx context.Context, s store.Store, query string, k int) ([]Result, error) {
	res, err := s.KeywordSearch(ctx, analyze.New(analyze.Options{}).QueryTerms(query), k, store.Filter{})
	if err != nil {
		return nil, err
	}
	return Named(ctx, s, res)
}

// Named turns scored chunk IDs of s into Results.
func Named(ctx context.Context, s store.Store, res []store.Scored) ([]Result, error) {
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.ChunkID
	}
	hits, err := s.Hits(ctx, ids)
	if err != nil {
		return nil, err
	}
	if len(hits) != len(res) {
		return nil, fmt.Errorf("%d of %d hits could not be loaded", len(res)-len(hits), len(res))
	}
	out := make([]Result, len(res))
	for i, h := range hits {
		out[i] = Result{URI: h.Source.URI, Chunk: h.Chunk.Index, Score: res[i].Score}
	}
	return out, nil
}

// ErrDiffer means two stores answered a query differently.
var ErrDiffer = errors.New("results differ")

// Verify runs every query (keyword search, top k) on both stores and
// returns how many gave identical results; the first difference is an error
// wrapping ErrDiffer that shows both lists.
func Verify(ctx context.Context, a, b store.Store, queries []string, k int) (int, error) {
	same := 0
	for _, q := range queries {
		ra, err := Results(ctx, a, q, k)
		if err != nil {
			return same, fmt.Errorf("query %q on the origin: %w", q, err)
		}
		rb, err := Results(ctx, b, q, k)
		if err != nil {
			return same, fmt.Errorf("query %q on the destination: %w", q, err)
		}
		if !slices.Equal(ra, rb) {
			return same, fmt.Errorf("%w for %q:\norigin:      %v\ndestination: %v", ErrDiffer, q, ra, rb)
		}
		same++
	}
	return same, nil
}

// SampleQueries draws n queries from the store: the first words of the
// first chunk of sources spread evenly over order.
func SampleQueries(ctx context.Context, s store.Store, order []doc.Source, n int) []string {
	var qs []string
	if n <= 0 || len(order) == 0 {
		return nil
	}
	step := max(1, len(order)/n)
	for i := 0; i < len(order) && len(qs) < n; i += step {
		chunks, err := s.Chunks(ctx, order[i].ID)
		if err != nil || len(chunks) == 0 {
			continue
		}
		words := strings.Fields(chunks[0].Text)
		qs = append(qs, strings.Join(words[:min(len(words), 6)], " "))
	}
	return qs
}
