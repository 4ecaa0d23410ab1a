package vecindex

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Live is a vector index that changes while it is searched, for processes
// that serve queries while another writes the index: rows are added and
// deleted one at a time and searches see the change at once, with no
// rebuild.
//
// Until it holds LiveOptions.Approx rows it is searched by the int8 scan
// with exact re-ranking (Compact). From then on one background goroutine
// builds an HNSW graph of the rows (on at most Graph.Workers cores, so
// that queries keep the rest) and, once it is ready, keeps it current:
// each added row is linked in like any other node, meanwhile scored
// exactly with the graph's hits; a deleted row becomes a tombstone at
// once, and when tombstones pass LiveOptions.RepairAt of the graph their
// neighbours are relinked and their slots reused.
//
// All methods are safe for concurrent use.
type Live struct {
	opt LiveOptions

	mu    sync.RWMutex
	f     *Flat
	cx    *Compact
	slots map[int64]int32 // chunk ID -> row
	gone  []bool          // per row: no live vector (deleted, or free)
	free  []int32         // rows to reuse
	live  int
	g     *HNSW   // nil until built
	queue []int32 // rows to link into g, oldest first
	// building is set while the first graph is built from a view of the
	// rows: no row is reused meanwhile, so the view stays as it was.
	building bool
	// changes counts changes to the rows and the graph (Save records it).
	changes uint64

	// working is held by whoever changes the graph (one goroutine at a
	// time), b is its builder.
	working sync.Mutex
	b       *builder
	// rep is the repair under way, if any (see repairStep); only the
	// holder of working touches it.
	rep *repairRun

	kick   chan struct{}
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// LiveOptions configure NewLive. Zero values take the defaults.
type LiveOptions struct {
	// Approx is the number of rows from which a graph answers instead of a
	// scan; 0 never builds one.
	Approx int
	// Graph configures the graph. Its Workers default to half the cores
	// (at least one), so that a build leaves queries a core.
	Graph HNSWOptions
	// Exact scans the float rows instead of the int8 copy while there is
	// no graph.
	Exact bool
	// RepairAt is the share of a graph's nodes that may be tombstones
	// before they are repaired (default 0.05).
	RepairAt float64
	// Changed is called from the background goroutine each time it has
	// finished the work changes gave it (a graph built, rows linked, a
	// repair), for example to Save the graph. It may call Save and Stats.
	Changed func()
	// Portable computes in plain Go (tests of the portable path).
	Portable bool
}

// NewLive returns an empty index of dim-dimensional rows, with room
// reserved for capacity of them. Close stops its background work.
func NewLive(dim, capacity int, opt LiveOptions) *Live {
	l := newLive(dim, capacity, opt)
	l.start()
	return l
}

// newLive is NewLive without the background goroutine.
func newLive(dim, capacity int, opt LiveOptions) *Live {
	if opt.Graph.Workers <= 0 {
		opt.Graph.Workers = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if opt.RepairAt <= 0 {
		opt.RepairAt = 0.05
	}
	f := NewFlat(dim, FlatOptions{Capacity: capacity, Portable: opt.Portable})
	return &Live{opt: opt, f: f, cx: NewCompact(f), slots: make(map[int64]int32, capacity), kick: make(chan struct{}, 1)}
}

// LiveFrom makes a Live index of a Flat, its Compact copy and a graph
// built over all its rows (BuildHNSW), which it takes over: none of them
// may be used otherwise afterwards.
func LiveFrom(f *Flat, cx *Compact, g *HNSW, opt LiveOptions) *Live {
	l := newLive(f.dim, 0, opt)
	l.f, l.cx, l.g = f, cx, g
	g.f, g.cx = f, cx
	l.gone = make([]bool, f.Len())
	for r, id := range f.ids {
		l.slots[id] = int32(r)
	}
	l.live = f.Len()
	l.start()
	return l
}

func (l *Live) start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	l.done.Go(func() { l.maintain(ctx) })
}

// Close stops the background work and waits for it. Searches still work.
func (l *Live) Close() {
	l.cancel()
	l.done.Wait()
}

// Load adds many rows at once: fill calls add for each (as Add would take
// them). Nothing is built or linked until it returns, so that a graph is
// built once over all of them rather than over the first few.
func (l *Live) Load(fill func(add func(id int64, v []float32)) error) error {
	l.working.Lock()
	defer l.working.Unlock()
	return fill(func(id int64, v []float32) { l.Add(id, v) })
}

// Dim returns the row length.
func (l *Live) Dim() int { return l.f.dim }

// Add stores v under id, replacing the row id had. It reports false, and
// stores nothing, when v is zero or of the wrong length.
func (l *Live) Add(id int64, v []float32) bool {
	if len(v) != l.f.dim || store.IsZeroVector(v) {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deleteLocked(id)
	var r int32
	if n := len(l.free); n > 0 && !l.building {
		r = l.free[n-1]
		l.free = l.free[:n-1]
		l.f.set(int(r), id, v)
	} else {
		l.f.Add(id, v)
		r = int32(l.f.Len() - 1)
		l.gone = append(l.gone, false)
		l.cx.grow(l.f.Len())
		if l.g != nil {
			l.g.grow(l.f.Len())
		}
	}
	l.cx.set(int(r))
	l.gone[r] = false
	l.slots[id] = r
	l.live++
	if l.g != nil {
		l.queue = append(l.queue, r)
	}
	l.changed()
	return true
}

// Delete removes the row of id, if there is one.
func (l *Live) Delete(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deleteLocked(id)
}

func (l *Live) deleteLocked(id int64) {
	r, ok := l.slots[id]
	if !ok {
		return
	}
	delete(l.slots, id)
	l.gone[r] = true
	l.live--
	switch {
	case l.g != nil && l.g.state[r] != unlinked:
		l.g.markDead(r) // linked: a tombstone until repaired
	case l.g != nil:
		// Queued and not linked yet: the queue frees it.
	case !l.building:
		l.free = append(l.free, r)
	}
	// While the first graph is built the row stays as it is: when the
	// graph is installed a row of its view becomes a tombstone, a later
	// row is freed.
	l.changed()
}

// changed counts a change and wakes the background goroutine; l.mu is held.
func (l *Live) changed() {
	l.changes++
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Len returns the number of rows searches can find.
func (l *Live) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.live
}

// Search implements Searcher.
func (l *Live) Search(q []float32, k int, allow func(int64) bool) []store.Scored {
	u, ok := l.f.unit(q)
	if !ok || k <= 0 {
		return nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.g != nil && l.g.live > 0 {
		top, complete := l.g.search(u, k, allow)
		if complete {
			if len(l.queue) == 0 {
				return top
			}
			// Rows not linked yet are scored exactly, beside the graph.
			sel := newSelector(k)
			for _, h := range top {
				sel.offer(h)
			}
			for _, r := range l.queue {
				if id := l.f.ids[r]; !l.gone[r] && (allow == nil || allow(id)) {
					sel.offer(store.Scored{ChunkID: id, Score: l.f.score(int(r), u)})
				}
			}
			return sel.best()
		}
	}
	if l.opt.Exact {
		return l.f.search(u, k, allow, l.gone)
	}
	return l.cx.search(u, k, allow, l.gone)
}

// SearchExact scans every live row exactly in float (the reference a
// recall is measured against).
func (l *Live) SearchExact(q []float32, k int, allow func(int64) bool) []store.Scored {
	u, ok := l.f.unit(q)
	if !ok {
		return nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.f.search(u, k, allow, l.gone)
}

// LiveStats describe a Live index.
type LiveStats struct {
	Rows    int   // rows in memory, live or not
	Live    int   // rows searches find
	Queued  int   // rows waiting to be linked into the graph
	Dead    int   // tombstones in the graph
	Free    int   // rows waiting to be reused
	Graph   bool  // a graph answers
	Bytes   int64 // memory of the rows, their int8 copy and the graph
	Changes uint64
}

// Stats describes the index now.
func (l *Live) Stats() LiveStats {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s := LiveStats{Rows: l.f.Len(), Live: l.live, Queued: len(l.queue), Free: len(l.free), Graph: l.g != nil,
		Bytes: l.f.Bytes() + l.cx.Bytes() + int64(len(l.gone)), Changes: l.changes}
	if l.g != nil {
		s.Dead = l.g.dead
		s.Bytes += l.g.Bytes()
	}
	return s
}

// maintain is the background goroutine: it does the work changes leave,
// one step at a time, until there is none, then reports and waits.
func (l *Live) maintain(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.kick:
		}
		if l.work(ctx) && ctx.Err() == nil && l.opt.Changed != nil {
			l.opt.Changed()
		}
	}
}

// Flush does the background work that is due now (building the graph,
// linking queued rows, repairing) in the caller's goroutine and returns
// when none is left: for benchmarks and tests that need the graph current.
func (l *Live) Flush(ctx context.Context) error {
	l.work(ctx)
	return ctx.Err()
}

// work steps until nothing is due and reports whether it did anything.
// One goroutine at a time changes the graph: whoever holds l.working.
func (l *Live) work(ctx context.Context) bool {
	l.working.Lock()
	defer l.working.Unlock()
	worked := false
	for ctx.Err() == nil && l.step(ctx) {
		worked = true
	}
	return worked
}

// linkBatch is how many queued rows are linked between two looks at what
// else is due.
const linkBatch = 64

// step does one piece of background work and reports whether there was
// any; l.working is held.
func (l *Live) step(ctx context.Context) bool {
	l.mu.RLock()
	g, queued, live := l.g, len(l.queue), l.live
	repair := g != nil && g.dead >= 16 && float64(g.dead) >= l.opt.RepairAt*float64(g.live+g.dead)
	l.mu.RUnlock()
	switch {
	case g == nil:
		return l.opt.Approx > 0 && live >= l.opt.Approx && l.build(ctx)
	case l.b == nil || l.b.h != g:
		l.b = newBuilder(g)
	}
	switch {
	case l.rep != nil:
		l.repairStep(l.b)
		return true
	case repair:
		l.startRepair()
		return true
	case queued > 0:
		for range min(queued, linkBatch) {
			if !l.linkNext(l.b) {
				break
			}
		}
		return true
	}
	return false
}

// build makes the first graph from a view of the rows as they are now and
// installs it; rows added meanwhile are queued, rows deleted meanwhile
// become tombstones.
func (l *Live) build(ctx context.Context) bool {
	n, view := l.startBuild()
	g, err := BuildHNSW(ctx, view, l.opt.Graph)
	if err != nil {
		l.endBuild(nil, n)
		if ctx.Err() == nil {
			slog.Warn("vector graph not built; the scan goes on", "vectors", n, "err", err)
		}
		return false
	}
	l.endBuild(g, n)
	return true
}

// startBuild returns a view of the first n rows for BuildHNSW and keeps
// them as they are until endBuild.
func (l *Live) startBuild() (n int, view *Compact) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = l.f.Len()
	l.building = true
	return n, l.cx.view(n)
}

// endBuild installs g, built over the first n rows (nil: the build
// failed, the scan goes on).
func (l *Live) endBuild(g *HNSW, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.building = false
	if g == nil {
		return
	}
	g.f, g.cx = l.f, l.cx
	g.grow(l.f.Len())
	for r := range n {
		if l.gone[r] {
			g.markDead(int32(r))
		}
	}
	// The graph linked every row of the view, the free ones too: they are
	// tombstones now, freed again by a repair. Reused as they are, they
	// would be linked a second time while older links still lead to them.
	l.free = slices.DeleteFunc(l.free, func(r int32) bool { return int(r) < n })
	// Rows added during the build wait to be linked; those deleted again
	// meanwhile were never linked and are free.
	for r := n; r < l.f.Len(); r++ {
		if l.gone[r] {
			l.free = append(l.free, int32(r))
		} else {
			l.queue = append(l.queue, int32(r))
		}
	}
	l.g = g
	l.changes++
}

// linkNext links the oldest queued row into the graph: planned while
// searches run, applied while they pause. It reports false when the queue
// is empty.
func (l *Live) linkNext(b *builder) bool {
	l.mu.RLock()
	if len(l.queue) == 0 {
		l.mu.RUnlock()
		return false
	}
	r := l.queue[0]
	var ch change
	planned := !l.gone[r]
	if planned {
		ch = b.planInsert(r)
	}
	l.mu.RUnlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue = l.queue[1:]
	switch {
	case l.gone[r]:
		// Deleted before it was linked (possibly after the plan was
		// made): its row is free at once.
		l.free = append(l.free, r)
	case planned:
		l.g.apply(ch)
	}
	l.changes++
	return true
}

// repairChunk is how many nodes one planned repair covers.
const repairChunk = 4096

// repairRun is a repair under way: the tombstones it frees once every
// node below end has been relinked around them, and the next node to
// relink.
type repairRun struct {
	doomed    []int32
	isDoomed  []bool // by node, below end
	next, end int32
}

// startRepair begins a repair of the tombstones there are now. Rows
// deleted later stay tombstones until the next repair.
func (l *Live) startRepair() {
	l.mu.RLock()
	defer l.mu.RUnlock()
	g := l.g
	rep := &repairRun{end: int32(g.Len()), isDoomed: make([]bool, g.Len())}
	for n, s := range g.state {
		if s == dead {
			rep.doomed = append(rep.doomed, int32(n))
			rep.isDoomed[n] = true
		}
	}
	l.rep = rep
}

// repairStep relinks the next chunk of nodes around the doomed
// tombstones (planned while searches run, applied while they pause), or,
// once every chunk is done, frees the tombstones' rows for reuse.
func (l *Live) repairStep(b *builder) {
	rep, g := l.rep, l.g
	if rep.next < rep.end {
		hi := min(rep.next+repairChunk, rep.end)
		l.mu.RLock()
		ch := b.planRepair(rep.next, hi, rep.isDoomed)
		l.mu.RUnlock()
		l.mu.Lock()
		g.apply(ch)
		l.mu.Unlock()
		rep.next = hi
		return
	}
	l.mu.Lock()
	l.free = append(l.free, g.free(rep.doomed)...)
	l.changes++
	l.mu.Unlock()
	l.rep = nil
}
