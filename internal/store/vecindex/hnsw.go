package vecindex

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// HNSW is an approximate index over a Flat's rows: a hierarchical
// navigable small world graph (Malkov and Yashunin, 2016). A search walks
// the graph from a fixed entry point instead of scanning every row, so it
// may miss a true neighbour (recall below 1); the scores it returns are the
// exact scan's. Build it with BuildHNSW; it is then read-only and safe for
// concurrent searches.
type HNSW struct {
	f        *Flat
	m, m0    int // links per node on upper layers, on layer 0
	efSearch int
	entry    int32
	top      int // the entry point's layer

	levels []uint8
	links0 []int32 // layer 0: node*m0 .. node*m0+count0[node]
	count0 []uint8
	// upper holds each node's links on layers 1..levels[node], m+1 values
	// per layer: the count, then the links.
	upper [][]int32

	visits sync.Pool // *visitSet

	// Build state: per-node locks, and a lock on the entry point.
	locks   []sync.Mutex
	entryMu sync.RWMutex
}

// HNSWOptions configure BuildHNSW. Zero values take the defaults.
type HNSWOptions struct {
	// M is the number of links per node on the upper layers (default 16);
	// layer 0 keeps twice as many.
	M int
	// EfConstruction is the candidate list length while linking a node
	// (default 100): longer builds a better graph, more slowly.
	EfConstruction int
	// EfSearch is the candidate list length of a search (default 96, at
	// least k): longer finds more true neighbours, more slowly.
	EfSearch int
	// Workers is how many goroutines insert nodes (default GOMAXPROCS).
	Workers int
	// Seed makes the layer assignment, hence the graph, reproducible.
	Seed uint64
}

func (o HNSWOptions) withDefaults() HNSWOptions {
	if o.M <= 0 {
		o.M = 16
	}
	o.M = min(o.M, 127) // layer 0 counts fit a byte
	if o.EfConstruction <= 0 {
		o.EfConstruction = 100
	}
	if o.EfSearch <= 0 {
		o.EfSearch = 96
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// BuildHNSW links every row of f into a graph. f must not change
// afterwards. It stops early with ctx's error when ctx is cancelled.
func BuildHNSW(ctx context.Context, f *Flat, opt HNSWOptions) (*HNSW, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("build HNSW graph: %w", err)
	}
	opt = opt.withDefaults()
	n := f.Len()
	h := &HNSW{
		f: f, m: opt.M, m0: 2 * opt.M, efSearch: opt.EfSearch,
		levels: make([]uint8, n),
		links0: make([]int32, n*2*opt.M),
		count0: make([]uint8, n),
		upper:  make([][]int32, n),
		locks:  make([]sync.Mutex, n),
	}
	h.visits.New = func() any { return &visitSet{marks: make([]uint32, n)} }
	if n == 0 {
		h.locks = nil
		return h, nil
	}
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x5851f42d4c957f2d))
	ml := 1 / math.Log(float64(opt.M))
	for i := range n {
		l := min(int(-math.Log(1-rng.Float64())*ml), 32)
		h.levels[i] = uint8(l)
		if l > 0 {
			h.upper[i] = make([]int32, l*(opt.M+1))
		}
	}
	h.entry, h.top = 0, int(h.levels[0])
	var next atomic.Int64
	next.Store(1)
	var wg sync.WaitGroup
	errc := make(chan error, opt.Workers)
	for range min(opt.Workers, n) {
		wg.Go(func() {
			b := newBuilder(h, opt.EfConstruction)
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if i%256 == 0 {
					if err := ctx.Err(); err != nil {
						errc <- err
						return
					}
				}
				b.insert(int32(i))
			}
		})
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, fmt.Errorf("build HNSW graph: %w", err)
	}
	h.locks = nil
	return h, nil
}

// Bytes returns the memory the graph takes (the rows not counted).
func (h *HNSW) Bytes() int64 {
	b := int64(len(h.links0))*4 + int64(len(h.count0)) + int64(len(h.levels)) + int64(len(h.upper))*24
	for _, u := range h.upper {
		b += int64(cap(u)) * 4
	}
	return b
}

// Len returns the number of rows linked.
func (h *HNSW) Len() int { return len(h.levels) }

// neighbours returns node's links on layer l. During a build the caller
// holds node's lock.
func (h *HNSW) neighbours(node int32, l int) []int32 {
	if l == 0 {
		o := int(node) * h.m0
		return h.links0[o : o+int(h.count0[node])]
	}
	blk := h.upper[node][(l-1)*(h.m+1):]
	return blk[1 : 1+blk[0]]
}

// setNeighbours replaces node's links on layer l (the caller holds its
// lock during a build).
func (h *HNSW) setNeighbours(node int32, l int, ns []int32) {
	if l == 0 {
		o := int(node) * h.m0
		copy(h.links0[o:o+h.m0], ns)
		h.count0[node] = uint8(len(ns))
		return
	}
	blk := h.upper[node][(l-1)*(h.m+1):]
	blk[0] = int32(len(ns))
	copy(blk[1:1+h.m], ns)
}

// cand is a row and its similarity to the query being served.
type cand struct {
	sim  float32
	node int32
}

// visitSet marks the rows one search has seen; a generation counter
// spares clearing it between searches.
type visitSet struct {
	marks []uint32
	gen   uint32
}

func (v *visitSet) next() {
	v.gen++
	if v.gen == 0 {
		clear(v.marks)
		v.gen = 1
	}
}

// visit marks node and reports whether it was new.
func (v *visitSet) visit(node int32) bool {
	if v.marks[node] == v.gen {
		return false
	}
	v.marks[node] = v.gen
	return true
}

// walker runs searches on layers; it holds buffers reused between them.
type walker struct {
	h       *HNSW
	locking bool // during a build: read links under their node's lock
	buf     []int32
	cands   candHeap // to expand, best first
	res     candHeap // kept, worst first
}

// greedy moves from ep to the neighbour most similar to q on layer l
// until none is more similar.
func (w *walker) greedy(q []float32, ep cand, l int) cand {
	h := w.h
	for changed := true; changed; {
		changed = false
		for _, nb := range w.links(ep.node, l) {
			if s := h.f.k.dot(h.f.row(int(nb)), q); s > ep.sim {
				ep, changed = cand{s, nb}, true
			}
		}
	}
	return ep
}

// links returns node's links on layer l, copied under its lock during a
// build (the slice is valid until the next call).
func (w *walker) links(node int32, l int) []int32 {
	if !w.locking {
		return w.h.neighbours(node, l)
	}
	mu := &w.h.locks[node]
	mu.Lock()
	w.buf = append(w.buf[:0], w.h.neighbours(node, l)...)
	mu.Unlock()
	return w.buf
}

// layer searches layer l from ep and returns up to ef candidates, best
// first.
func (w *walker) layer(q []float32, ep cand, ef, l int, vs *visitSet) []cand {
	h := w.h
	vs.next()
	vs.visit(ep.node)
	w.cands = append(w.cands[:0], cand{-ep.sim, ep.node}) // min-heap on -sim: best first
	w.res = append(w.res[:0], ep)                         // min-heap on sim: worst first
	for len(w.cands) > 0 {
		c := w.cands.pop()
		if -c.sim < w.res[0].sim && len(w.res) >= ef {
			break
		}
		for _, nb := range w.links(c.node, l) {
			if !vs.visit(nb) {
				continue
			}
			s := h.f.k.dot(h.f.row(int(nb)), q)
			if len(w.res) < ef || s > w.res[0].sim {
				w.cands.push(cand{-s, nb})
				w.res.push(cand{s, nb})
				if len(w.res) > ef {
					w.res.pop()
				}
			}
		}
	}
	out := make([]cand, len(w.res))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = w.res.pop()
	}
	return out
}

// candHeap is a min-heap on sim.
type candHeap []cand

func (c *candHeap) push(x cand) {
	*c = append(*c, x)
	s := *c
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].sim <= s[i].sim {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (c *candHeap) pop() cand {
	s := *c
	x := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		m := 2*i + 1
		if m >= n {
			break
		}
		if m+1 < n && s[m+1].sim < s[m].sim {
			m++
		}
		if s[i].sim <= s[m].sim {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*c = s
	return x
}

// builder inserts nodes; each build goroutine has its own.
type builder struct {
	walker
	ef     int
	vs     *visitSet
	pool   []cand
	picks  []int32 // the node being inserted's links
	relink []int32 // a neighbour's links re-selected
}

func newBuilder(h *HNSW, ef int) *builder {
	return &builder{walker: walker{h: h, locking: true}, ef: ef, vs: &visitSet{marks: make([]uint32, h.Len())}}
}

func (b *builder) insert(node int32) {
	h := b.h
	q := h.f.row(int(node))
	level := int(h.levels[node])
	h.entryMu.RLock()
	entry, top := h.entry, h.top
	h.entryMu.RUnlock()
	if level > top {
		// Rare (a new top layer): hold the entry point for the whole
		// insert so that no other node links into a half-built layer.
		h.entryMu.Lock()
		defer h.entryMu.Unlock()
		entry, top = h.entry, h.top
	}
	ep := cand{h.f.k.dot(h.f.row(int(entry)), q), entry}
	for l := top; l > level; l-- {
		ep = b.greedy(q, ep, l)
	}
	for l := min(level, top); l >= 0; l-- {
		found := b.layer(q, ep, b.ef, l, b.vs)
		b.picks = b.select1(b.picks[:0], found, h.m)
		picks := b.picks
		h.locks[node].Lock()
		h.setNeighbours(node, l, picks)
		h.locks[node].Unlock()
		limit := h.m
		if l == 0 {
			limit = h.m0
		}
		for _, nb := range picks {
			b.link(nb, node, l, limit)
		}
		ep = found[0]
	}
	if level > top {
		h.entry, h.top = node, level
	}
}

// select1 picks up to m of cands (best first) by the HNSW heuristic: a
// candidate is kept unless it is more similar to an already kept one than
// to the base, which spreads links in every direction instead of into the
// nearest cluster. It appends them to dst.
func (b *builder) select1(dst []int32, cands []cand, m int) []int32 {
	h := b.h
	for _, c := range cands {
		if len(dst) == m {
			break
		}
		row := h.f.row(int(c.node))
		good := true
		for _, p := range dst {
			if h.f.k.dot(row, h.f.row(int(p))) > c.sim {
				good = false
				break
			}
		}
		if good {
			dst = append(dst, c.node)
		}
	}
	return dst
}

// link adds a link from nb to node on layer l, re-selecting nb's links by
// the heuristic when it has limit already.
func (b *builder) link(nb, node int32, l, limit int) {
	h := b.h
	mu := &h.locks[nb]
	mu.Lock()
	defer mu.Unlock()
	// cur aliases the graph's storage: copy it before changing it.
	b.buf = append(append(b.buf[:0], h.neighbours(nb, l)...), node)
	if len(b.buf) <= limit {
		h.setNeighbours(nb, l, b.buf)
		return
	}
	base := h.f.row(int(nb))
	b.pool = b.pool[:0]
	for _, c := range b.buf {
		b.pool = append(b.pool, cand{h.f.k.dot(base, h.f.row(int(c))), c})
	}
	sortCands(b.pool)
	b.relink = b.select1(b.relink[:0], b.pool, limit)
	h.setNeighbours(nb, l, b.relink)
}

// sortCands sorts best first (insertion sort: the lists are short).
func sortCands(c []cand) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j].sim > c[j-1].sim; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// Search implements Searcher. With a filter it keeps the allowed hits
// among the candidates; when fewer than k pass (a selective filter), it
// scans the rows exactly instead, so it still returns k allowed hits when
// they exist.
func (h *HNSW) Search(q []float32, k int, allow func(int64) bool) []store.Scored {
	f := h.f
	u, ok := f.unit(q)
	if !ok || k <= 0 || h.Len() == 0 {
		return nil
	}
	w := walker{h: h}
	ep := cand{f.k.dot(f.row(int(h.entry)), u), h.entry}
	for l := h.top; l > 0; l-- {
		ep = w.greedy(u, ep, l)
	}
	ef := max(h.efSearch, k)
	if allow != nil {
		ef = max(ef, 2*k)
	}
	vs := h.visits.Get().(*visitSet)
	found := w.layer(u, ep, ef, 0, vs)
	h.visits.Put(vs)
	top := newSelector(k)
	for _, c := range found {
		id := f.ids[c.node]
		if allow != nil && !allow(id) {
			continue
		}
		top.offer(store.Scored{ChunkID: id, Score: f.score(int(c.node), u)})
	}
	if allow != nil && len(top.h) < k && len(found) < h.Len() {
		return f.Search(q, k, allow)
	}
	return top.best()
}

// SetEfSearch sets the candidate list length of later searches; call it
// before searching concurrently.
func (h *HNSW) SetEfSearch(ef int) { h.efSearch = max(ef, 1) }
