package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/vecindex"
	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// metaVectorVersion counts writes that change vectors; a cached copy of the
// vectors is current while the count is unchanged, whichever process wrote.
const metaVectorVersion = "vectors.version"

// metaVectorEpoch names the generation of the stored vectors: it changes
// whenever vectors may have been replaced in place (InitVectors,
// ClearVectors, SetVectors), which a cache cannot follow from new rows and
// the deletion log; a cache of another epoch is loaded again.
const metaVectorEpoch = "vectors.epoch"

// metaGoneTrimmed is the last sequence number dropped from the deletion
// log (vector_gone): a cache that has not applied it is loaded again.
const metaGoneTrimmed = "vectors.gone_trimmed"

// goneKept is how many entries of the deletion log are kept by default
// (Store.goneKept): enough for any cache that was current a few thousand
// deletions ago.
const goneKept = 200_000

// maxCacheBytes bounds the in-memory copy of the vectors (float rows,
// their int8 copy and the graph, about 2 KB per 384-dimensional vector);
// larger indexes are searched by sqlite-vec alone.
const maxCacheBytes = 4 << 30

// vecCache is an in-memory copy of every vector for processes that answer
// many queries (the MCP server, benchmarks), searched by package vecindex:
// the int8 scan with exact re-ranking, or from Options.ApproxVectors
// vectors on an HNSW graph. It follows writes instead of rebuilding: at
// the first query after any process changed the vectors it reads only the
// rows added since (chunk IDs only grow) and the IDs deleted since (the
// vector_gone log), and applies them to the index, which links new rows
// into the graph in the background. The graph is saved beside the index
// (graphFile) so that the next process restores it instead of building it.
type vecCache struct {
	mu    sync.Mutex // held while checking the version and catching up
	live  *vecindex.Live
	gen   *generation // live's, for saving its graph
	state cacheState
}

// generation is one loaded copy of the vectors and how its graph is saved.
type generation struct {
	path     string
	epoch    string
	restored bool // the graph was read from path, not built
	live     atomic.Pointer[vecindex.Live]

	// saving serialises saves; saved is the Live's change count at the
	// last save (0: never saved), savedAt its time.
	saving  sync.Mutex
	saved   uint64
	savedAt time.Time
}

// cacheState is where the cache stands in the index's history.
type cacheState struct {
	dim     int
	epoch   string
	version string
	maxRow  int64 // the highest vector rowid read
	goneSeq int64 // the last deletion log entry applied
}

// newEpoch returns a fresh generation name for the stored vectors.
func newEpoch() string {
	return strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatUint(uint64(os.Getpid()), 36)
}

// bumpVectorVersion records, inside tx, that vectors changed.
func bumpVectorVersion(ctx context.Context, tx *sql.Tx) error {
	return bumpCounter(ctx, tx, metaVectorVersion)
}

// renewVectorEpoch records, inside tx, that vectors may have been
// replaced in place: caches load them again.
func renewVectorEpoch(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, metaVectorEpoch, newEpoch()); err != nil {
		return err
	}
	return bumpVectorVersion(ctx, tx)
}

// bumpCounter adds one, inside tx, to the write counter under key in meta.
func bumpCounter(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, '1')
		ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`, key)
	return err
}

// logGone records, inside tx, that the vectors of a source's chunks are
// about to be deleted, and keeps the log to its last keep entries.
func logGone(ctx context.Context, tx *sql.Tx, sourceID string, keep int64) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO vector_gone(id) SELECT id FROM chunks WHERE source_id = ?`, sourceID)
	if err != nil {
		return err
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return nil
	}
	var last int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM vector_gone`).Scan(&last); err != nil {
		return err
	}
	// Trimmed in steps of a tenth, not at every deletion.
	if cut := last - keep; cut > 0 && cut%max(1, keep/10) < n {
		if _, err := tx.ExecContext(ctx, `DELETE FROM vector_gone WHERE seq <= ?`, cut); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, metaGoneTrimmed, strconv.FormatInt(cut, 10))
		return err
	}
	return nil
}

// cachedSearch answers a vector query from the cache, bringing it up to
// date first when vectors changed. ok is false when the cache is off or the
// vectors are too many to hold.
func (s *Store) cachedSearch(ctx context.Context, q []float32, dim, k int, allow func(int64) bool) (out []store.Scored, ok bool, err error) {
	if !s.cacheVectors {
		return nil, false, nil
	}
	c := &s.vcache
	c.mu.Lock()
	version, err := s.Meta(ctx, metaVectorVersion)
	if err != nil {
		c.mu.Unlock()
		return nil, false, err
	}
	if version == "" {
		version = "0"
	}
	if c.live == nil || c.state.dim != dim || c.state.version != version {
		if err := s.syncVectors(ctx, dim); err != nil {
			c.mu.Unlock()
			if errors.Is(err, errCacheTooLarge) {
				return nil, false, nil
			}
			return nil, false, err
		}
	}
	live := c.live
	c.mu.Unlock()
	// The index changes under its own lock: many queries may search it
	// at once, while rows are linked in the background.
	return live.Search(q, k, allow), true, nil
}

// syncVectors brings the cache up to date: by the changes since it was
// read when it can follow them, else by loading every vector. c.mu is held.
func (s *Store) syncVectors(ctx context.Context, dim int) error {
	c := &s.vcache
	if c.live != nil && c.state.dim == dim {
		ok, err := s.catchUp(ctx)
		if err != nil || ok {
			return err
		}
	}
	return s.loadVectors(ctx, dim)
}

// readState reads, inside a read snapshot, where the vector index stands.
func readState(ctx context.Context, q querier, dim int) (st cacheState, trimmed int64, err error) {
	st.dim = dim
	err = q.QueryRowContext(ctx, `SELECT
		COALESCE((SELECT value FROM meta WHERE key = ?), ''),
		COALESCE((SELECT value FROM meta WHERE key = ?), '0'),
		COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0),
		COALESCE((SELECT MAX(seq) FROM vector_gone), 0)`,
		metaVectorEpoch, metaVectorVersion, metaGoneTrimmed).Scan(&st.epoch, &st.version, &trimmed, &st.goneSeq)
	st.goneSeq = max(st.goneSeq, trimmed)
	return st, trimmed, err
}

// catchUp applies the vectors added and deleted since the cache was read.
// ok is false when it cannot (the vectors were replaced in place, or the
// deletion log no longer reaches back to the cache).
func (s *Store) catchUp(ctx context.Context) (ok bool, err error) {
	c := &s.vcache
	type row struct {
		id int64
		v  []float32
	}
	var (
		st    cacheState
		gone  []int64
		added []row
	)
	err = s.readSnapshot(ctx, func(conn *sql.Conn) error {
		var trimmed int64
		st, trimmed, err = readState(ctx, conn, c.state.dim)
		if err != nil {
			return err
		}
		if st.epoch != c.state.epoch || trimmed > c.state.goneSeq {
			return nil
		}
		ok = true
		rows, err := conn.QueryContext(ctx, `SELECT id FROM vector_gone WHERE seq > ?`, c.state.goneSeq)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			gone = append(gone, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		st.maxRow = c.state.maxRow
		return eachVectorAfter(ctx, conn, c.state.maxRow, func(id int64, v []float32) error {
			added = append(added, row{id, v})
			st.maxRow = max(st.maxRow, id)
			return nil
		})
	})
	if err != nil || !ok {
		return false, err
	}
	for _, id := range gone {
		c.live.Delete(id)
	}
	for _, r := range added {
		c.live.Add(r.id, r.v)
	}
	c.state = st
	return true, nil
}

var errCacheTooLarge = errors.New("vectors too large to cache")

// liveOptions are the options of the store's vector index of gen.
func (s *Store) liveOptions(gen *generation) vecindex.LiveOptions {
	return vecindex.LiveOptions{
		Approx:  s.approxVectors,
		Graph:   vecindex.HNSWOptions{Seed: 1},
		Changed: func() { gen.save(false) },
	}
}

// loadVectors reads every vector of dim dimensions into a new index, with
// the graph saved beside the index when it belongs to these vectors.
// c.mu is held.
func (s *Store) loadVectors(ctx context.Context, dim int) error {
	c := &s.vcache
	if c.live != nil {
		c.live.Close()
		c.live, c.gen = nil, nil
	}
	start := time.Now()
	var (
		gen       *generation
		rs        *vecindex.Restorer
		live      *vecindex.Live
		later     []int64
		laterVecs [][]float32
		st        cacheState
	)
	err := s.readSnapshot(ctx, func(conn *sql.Conn) error {
		var err error
		if st, _, err = readState(ctx, conn, dim); err != nil {
			return err
		}
		var n int64
		if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM chunk_vectors`).Scan(&n); err != nil {
			return err
		}
		if n*int64(dim*5+200) > maxCacheBytes {
			return errCacheTooLarge
		}
		gen = &generation{path: s.graphFile(), epoch: st.epoch}
		opt := s.liveOptions(gen)
		rs = restoreGraph(gen.path, dim, st.epoch, opt)
		if rs == nil {
			live = vecindex.NewLive(dim, int(n), opt)
			gen.live.Store(live)
			// While the rows are loaded the index builds nothing.
			return live.Load(func(add func(int64, []float32)) error {
				return eachVectorAfter(ctx, conn, 0, func(id int64, v []float32) error {
					add(id, v)
					st.maxRow = max(st.maxRow, id)
					return nil
				})
			})
		}
		return eachVectorAfter(ctx, conn, 0, func(id int64, v []float32) error {
			st.maxRow = max(st.maxRow, id)
			if !rs.Fill(id, v) {
				later = append(later, id)
				laterVecs = append(laterVecs, v)
			}
			return nil
		})
	})
	if err != nil {
		if live != nil {
			live.Close()
		}
		return err
	}
	restored := rs != nil
	gen.restored = restored
	if restored {
		live = rs.Live()
		gen.live.Store(live)
		for i, id := range later {
			live.Add(id, laterVecs[i])
		}
		if len(later) == 0 {
			gen.saved, gen.savedAt = live.Stats().Changes, time.Now() // as saved
		}
	}
	c.live, c.gen, c.state = live, gen, st
	slog.Debug("vectors loaded", "vectors", live.Len(), "graphRestored", restored, "new", len(later), "took", time.Since(start))
	return nil
}

// graphFile is where the store saves its vector graph: beside the index.
func (s *Store) graphFile() string { return s.path + ".hnsw" }

// graphHeader is what a saved graph records of the index it belongs to.
type graphHeader struct {
	Epoch string `json:"epoch"`
}

// restoreGraph reads the graph saved at path when it belongs to the
// vectors of epoch, else returns nil (no file, another generation of
// vectors, or a damaged file: the graph is built again).
func restoreGraph(path string, dim int, epoch string, opt vecindex.LiveOptions) *vecindex.Restorer {
	f, err := userfile.Open(path, os.O_RDONLY)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			slog.Warn("saved vector graph not used; it is built again", "file", path, "err", err)
		}
		return nil
	}
	defer f.Close()
	rs, extra, err := vecindex.Restore(f, dim, opt)
	if err != nil {
		slog.Warn("saved vector graph not used; it is built again", "file", path, "err", err)
		return nil
	}
	var h graphHeader
	if json.Unmarshal(extra, &h) != nil || h.Epoch != epoch || epoch == "" {
		return nil
	}
	return rs
}

// graphSaveEvery is the least time between two saves of a changing graph;
// a graph that changed is saved at the latest when the store closes.
const graphSaveEvery = 30 * time.Second

// save writes the graph to g.path (a temporary file renamed over it) when
// it changed since the last save: at once the first time and when final
// is set, else at most every graphSaveEvery.
func (g *generation) save(final bool) {
	g.saving.Lock()
	defer g.saving.Unlock()
	live := g.live.Load()
	if live == nil || g.epoch == "" {
		return
	}
	st := live.Stats()
	if !st.Graph || st.Changes == g.saved || (!final && g.saved != 0 && time.Since(g.savedAt) < graphSaveEvery) {
		return
	}
	extra, _ := json.Marshal(graphHeader{Epoch: g.epoch})
	tmp, err := os.CreateTemp(filepath.Dir(g.path), filepath.Base(g.path)+".tmp*")
	if err != nil {
		slog.Debug("save vector graph", "file", g.path, "err", err)
		return
	}
	err = live.Save(tmp, extra)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), g.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		slog.Debug("save vector graph", "file", g.path, "err", err)
		return
	}
	g.saved, g.savedAt = st.Changes, time.Now()
}

// close stops the index's background work and saves its graph if it
// changed since the last save.
func (c *vecCache) close() {
	c.mu.Lock()
	live, gen := c.live, c.gen
	c.mu.Unlock()
	if live == nil {
		return
	}
	live.Close()
	gen.save(true)
}

// eachVectorAfter calls fn for every stored vector with a rowid above
// after. It reads sqlite-vec's storage tables directly when they have the
// layout this build knows (a thousand vectors per row: about fifty times
// faster than the virtual table's row-by-row scan), else the virtual
// table.
func eachVectorAfter(ctx context.Context, q querier, after int64, fn func(id int64, v []float32) error) error {
	err := eachVectorDirect(ctx, q, after, fn)
	if !errors.Is(err, errLayout) {
		return err
	}
	// The virtual table filters rowids by scanning every row.
	return eachVectorVirtual(ctx, q, after, fn)
}

// errLayout reports sqlite-vec storage tables this build cannot read.
var errLayout = errors.New("unknown sqlite-vec storage layout")

// eachVectorVirtual reads the vectors through the vec0 virtual table.
func eachVectorVirtual(ctx context.Context, q querier, after int64, fn func(id int64, v []float32) error) error {
	rows, err := q.QueryContext(ctx, `SELECT rowid, embedding FROM chunk_vectors WHERE rowid > ?`, after)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return err
		}
		if err := fn(id, decodeVector(b)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// eachVectorDirect reads the vectors from vec0's shadow tables: each row
// of chunk_vectors_chunks holds a chunk of up to size vectors, a validity
// bitmap (bit i of byte i/8, low bit first) and their rowids (int64 each);
// the matching row of chunk_vectors_vector_chunks00 holds their values
// (size × dim float32s). Rows after a given rowid are found through
// chunk_vectors_rowids, which maps each rowid to its chunk and offset.
// Any mismatch with that layout returns errLayout before fn is called.
func eachVectorDirect(ctx context.Context, q querier, after int64, fn func(id int64, v []float32) error) error {
	var dim int
	if err := q.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?`, metaVectorDim).Scan(&dim); err != nil || dim <= 0 {
		return errLayout
	}
	// Which chunks hold rowids after the given one.
	chunkRows, err := q.QueryContext(ctx, `SELECT DISTINCT chunk_id FROM chunk_vectors_rowids WHERE rowid > ? ORDER BY chunk_id`, after)
	if err != nil {
		return errLayout
	}
	var chunks []int64
	for chunkRows.Next() {
		var id int64
		if err := chunkRows.Scan(&id); err != nil {
			chunkRows.Close()
			return err
		}
		chunks = append(chunks, id)
	}
	chunkRows.Close()
	if err := chunkRows.Err(); err != nil {
		return err
	}
	meta, err := q.QueryContext(ctx, `SELECT c.chunk_id, c.size, c.validity, c.rowids, v.vectors FROM chunk_vectors_chunks c JOIN chunk_vectors_vector_chunks00 v ON v.rowid = c.chunk_id WHERE c.chunk_id >= ? ORDER BY c.chunk_id`, firstOr(chunks, math.MaxInt64))
	if err != nil {
		return errLayout
	}
	defer meta.Close()
	checked := false
	want := map[int64]bool{}
	for _, c := range chunks {
		want[c] = true
	}
	for meta.Next() {
		var id, size int64
		var validity, rowids, vectors []byte
		if err := meta.Scan(&id, &size, &validity, &rowids, &vectors); err != nil {
			return err
		}
		if !want[id] {
			continue
		}
		if size <= 0 || int64(len(validity)) < (size+7)/8 || int64(len(rowids)) != 8*size || int64(len(vectors)) != 4*size*int64(dim) {
			if checked {
				return fmt.Errorf("read vectors: chunk %d of chunk_vectors does not match the layout of the others", id)
			}
			return errLayout
		}
		checked = true
		for i := range size {
			if validity[i/8]&(1<<(i%8)) == 0 {
				continue
			}
			rid := int64(binary.LittleEndian.Uint64(rowids[8*i:]))
			if rid <= after {
				continue
			}
			v := decodeVector(vectors[4*i*int64(dim) : 4*(i+1)*int64(dim)])
			if err := fn(rid, v); err != nil {
				return err
			}
		}
	}
	return meta.Err()
}

func firstOr(v []int64, or int64) int64 {
	if len(v) == 0 {
		return or
	}
	return v[0]
}
