package bm25

import (
	"container/list"
	"context"
	"errors"
	"math"
	"slices"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Loader reads what a Cache needs from a store's keyword index.
type Loader interface {
	// Version names the current state of the keyword index. It must change
	// whenever postings or collection statistics change, whichever process
	// wrote them, and be cheap: it is read once per query.
	Version(ctx context.Context) (string, error)
	// Load reads, from one snapshot of the index, its version, its
	// collection statistics and the postings rows of terms.
	Load(ctx context.Context, terms []string) (version string, c Corpus, ls ListSet, err error)
}

// Scanner is a Loader that can also read the whole keyword index, which a
// Cache then loads in the background after each change (see Cache).
type Scanner interface {
	Loader
	// Scan reads one snapshot of the index: start gets its version and
	// collection statistics, then each gets every postings row in term
	// order (the rows of a term together; data is the callee's to keep).
	// An error from either stops the scan and is returned.
	Scan(ctx context.Context, start func(version string, c Corpus) error, each func(term string, data []byte) error) error
}

// DefaultCacheBytes bounds a Cache by default: enough for every list of an
// index of about two hundred thousand chunks.
const DefaultCacheBytes = 256 << 20

// Cache keeps the postings of recently queried terms decoded and scored,
// for processes that answer many queries (the MCP server, the web UI,
// agents, benchmarks). A list is decoded once per version of the index:
// each posting's contribution to a chunk's score depends only on the
// posting and the collection statistics, so it is computed when the list is
// loaded and a query only adds. The cache is bounded in bytes and drops the
// least recently used lists first; any write to the index, by any process,
// empties it at the next query. When the Loader is a Scanner, the first
// query of each version also starts loading every other list in the
// background, while they fit the bound, so that later queries find their
// lists decoded; Close stops it.
//
// Queries are answered by MaxScore (Turtle and Flood, 1995): lists are
// walked document-at-a-time, and once k hits are held the lists whose
// combined best contribution cannot lift a chunk above the k-th score only
// check the chunks the others propose, so most postings of common terms are
// skipped. Each surviving chunk's score is summed over the query's terms in
// query order, exactly as Score sums it, so the results are identical:
// the same chunks in the same order with bit-identical scores.
type Cache struct {
	max int64

	// The background load (warm): stop cancels it, wg waits for it.
	stop      context.CancelFunc
	wctx      context.Context
	wg        sync.WaitGroup
	warmed    string        // the version last warmed (or being warmed)
	warmedEnd chan struct{} // closed when that load ends

	mu      sync.Mutex
	version string
	valid   bool // version, corpus and params describe the lists held
	params  Params
	corpus  Corpus
	lists   map[string]*list.Element // of *cachedList
	lru     list.List                // front: most recently used
	bytes   int64
}

// cachedList is one term's postings, decoded and scored.
type cachedList struct {
	term   string
	ids    []uint32  // chunk IDs, ascending
	scores []float32 // each posting's contribution, all positive
	max    float32
	bytes  int64
}

// NewCache returns an empty cache that holds at most maxBytes of lists
// (DefaultCacheBytes when maxBytes <= 0). A list larger than the bound is
// used for its query and not kept.
func NewCache(maxBytes int64) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Cache{max: maxBytes, lists: map[string]*list.Element{}, wctx: ctx, stop: stop}
}

// Close stops a background load and waits for it. Searches after Close
// still work; they only load no more in the background.
func (c *Cache) Close() {
	c.stop()
	c.wg.Wait()
}

// Bytes reports the memory the cached lists take.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// maxLoads bounds how often one query reloads because a write changed the
// index between reading its version and loading its lists.
const maxLoads = 3

// errBusy reports an index that kept changing while a query loaded it.
var errBusy = errors.New("bm25: the keyword index changed during every load; try again")

// Search ranks chunks for terms like Score, loading the lists it does not
// hold through ld. p must be the index's pinned parameters.
func (c *Cache) Search(ctx context.Context, ld Loader, p Params, terms []string, k int, allow func(int64) bool) ([]store.Scored, error) {
	if k <= 0 || len(terms) == 0 {
		return nil, nil
	}
	terms = dedup(terms)
	version, err := ld.Version(ctx)
	if err != nil {
		return nil, err
	}
	for range maxLoads {
		lists, corpus, missing := c.lookup(version, p, terms)
		if len(missing) == 0 && lists != nil {
			return maxScore(inQueryOrder(lists, terms), k, allow), nil
		}
		if lists == nil {
			missing = terms // the corpus statistics are needed as well
		}
		v, corp, ls, err := ld.Load(ctx, missing)
		if err != nil {
			return nil, err
		}
		if v != version {
			version = v // written meanwhile: start over at the new version
			continue
		}
		if lists == nil {
			corpus = corp
		}
		built, err := build(p, corpus, missing, ls.Lists(missing))
		if errors.Is(err, errWideIDs) {
			// Not cacheable: score this query from its stored postings.
			_, corp, ls, err := ld.Load(ctx, terms)
			if err != nil {
				return nil, err
			}
			return Score(p, corp, ls.Lists(terms), k, allow)
		}
		if err != nil {
			return nil, err
		}
		all := c.store(version, p, corpus, lists, built)
		if sc, ok := ld.(Scanner); ok && lists == nil {
			c.warm(sc, version, p)
		}
		return maxScore(inQueryOrder(all, terms), k, allow), nil
	}
	return nil, errBusy
}

// lookup returns the cached lists of terms and the collection statistics
// when the cache holds version (lists is then non-nil, possibly empty),
// and the terms it lacks.
func (c *Cache) lookup(version string, p Params, terms []string) (lists map[string]*cachedList, corpus Corpus, missing []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid || c.version != version || c.params != p {
		return nil, Corpus{}, terms
	}
	lists = make(map[string]*cachedList, len(terms))
	for _, t := range terms {
		e, ok := c.lists[t]
		if !ok {
			missing = append(missing, t)
			continue
		}
		c.lru.MoveToFront(e)
		lists[t] = e.Value.(*cachedList)
	}
	return lists, c.corpus, missing
}

// store adds built to the cache, first emptying it when it holds another
// version, and returns every list of the query (have and built).
func (c *Cache) store(version string, p Params, corpus Corpus, have map[string]*cachedList, built []*cachedList) map[string]*cachedList {
	all := make(map[string]*cachedList, len(have)+len(built))
	for t, l := range have {
		all[t] = l
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid || c.version != version || c.params != p {
		c.lists = map[string]*list.Element{}
		c.lru.Init()
		c.bytes = 0
		c.version, c.params, c.corpus, c.valid = version, p, corpus, true
	}
	for _, l := range built {
		all[l.term] = l
		if _, ok := c.lists[l.term]; ok || l.bytes > c.max {
			continue
		}
		c.lists[l.term] = c.lru.PushFront(l)
		c.bytes += l.bytes
	}
	for c.bytes > c.max {
		e := c.lru.Back()
		l := e.Value.(*cachedList)
		c.lru.Remove(e)
		delete(c.lists, l.term)
		c.bytes -= l.bytes
	}
	return all
}

// Preload loads the lists of the index's current version now, while they
// fit the bound, and returns when they are loaded: a benchmark or a server
// at start-up calls it so that the first queries find every list decoded.
func (c *Cache) Preload(ctx context.Context, sc Scanner, p Params) error {
	version, err := sc.Version(ctx)
	if err != nil {
		return err
	}
	for range maxLoads {
		if lists, _, _ := c.lookup(version, p, nil); lists == nil {
			v, corpus, _, err := sc.Load(ctx, nil)
			if err != nil {
				return err
			}
			if v != version {
				version = v
				continue
			}
			c.store(version, p, corpus, nil, nil)
		}
		c.warm(sc, version, p)
		c.mu.Lock()
		end := c.warmedEnd
		c.mu.Unlock()
		if end == nil {
			return nil // closed before any load
		}
		select {
		case <-end:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errBusy
}

// errStop ends a background load early.
var errStop = errors.New("bm25: stop loading")

// warm starts loading every list of version in the background, unless that
// version is being or was loaded already.
func (c *Cache) warm(sc Scanner, version string, p Params) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warmed == version || c.wctx.Err() != nil {
		return
	}
	c.warmed = version
	end := make(chan struct{})
	c.warmedEnd = end
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(end)
		var corpus Corpus
		var term string
		var rows [][]byte
		flush := func() error {
			if len(rows) == 0 {
				return nil
			}
			built, err := build(p, corpus, []string{term}, []List{{Term: term, Data: rows}})
			rows = nil
			if err != nil {
				return err
			}
			return c.add(version, p, built)
		}
		// A failed or stopped background load only leaves lists to load
		// on demand: nothing to report.
		_ = sc.Scan(c.wctx, func(v string, cp Corpus) error {
			if v != version {
				return errStop // already stale: a query will start the next load
			}
			corpus = cp
			return nil
		}, func(t string, data []byte) error {
			if t != term {
				if err := flush(); err != nil {
					return err
				}
				term = t
			}
			rows = append(rows, data)
			return nil
		})
		if c.wctx.Err() == nil {
			_ = flush()
		}
	}()
}

// add caches lists a background load built for version, skipping those
// that no longer fit; a cache that moved to another version or is full
// stops the load.
func (c *Cache) add(version string, p Params, built []*cachedList) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid || c.version != version || c.params != p {
		return errStop
	}
	for _, l := range built {
		if _, ok := c.lists[l.term]; ok {
			continue
		}
		if c.bytes+l.bytes > c.max {
			if c.max-c.bytes < 1<<10 {
				return errStop // full
			}
			continue // too large for what is left; smaller lists may fit
		}
		// At the back: lists nobody asked for yet are the first to go.
		c.lists[l.term] = c.lru.PushBack(l)
		c.bytes += l.bytes
	}
	return nil
}

// build decodes and scores the lists of terms. A term without postings gets
// an empty list, so that the cache remembers it has none.
func build(p Params, c Corpus, terms []string, lists []List) ([]*cachedList, error) {
	out := make([]*cachedList, 0, len(terms))
	have := make(map[string]bool, len(lists))
	for _, l := range lists {
		have[l.Term] = true
	}
	for _, t := range terms {
		if !have[t] || c.Docs == 0 {
			out = append(out, &cachedList{term: t, bytes: int64(len(t)) + 160})
		}
	}
	if c.Docs == 0 {
		return out, nil
	}
	nm := newNorms(p, c)
	for _, l := range lists {
		type row struct {
			data  []byte
			first uint64
		}
		rows := make([]row, 0, len(l.Data))
		df := 0
		for _, d := range l.Data {
			n, first, _, err := scan(d)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				df += n
				rows = append(rows, row{d, first})
			}
		}
		if df == 0 {
			out = append(out, &cachedList{term: l.Term, bytes: int64(len(l.Term)) + 160})
			continue
		}
		// Segments hold disjoint ID ranges: in order of their first ID the
		// rows concatenate into one ascending list.
		slices.SortFunc(rows, func(a, b row) int {
			switch {
			case a.first < b.first:
				return -1
			case a.first > b.first:
				return 1
			}
			return 0
		})
		cl := &cachedList{term: l.Term, ids: make([]uint32, 0, df), scores: make([]float32, 0, df)}
		idf := IDF(c.Docs, df)
		var wide bool
		for _, r := range rows {
			nm.contributions(r.data, idf, func(id uint64, v float32) {
				if id > math.MaxUint32 {
					wide = true
					return
				}
				cl.ids = append(cl.ids, uint32(id))
				cl.scores = append(cl.scores, v)
				cl.max = max(cl.max, v)
			})
		}
		if wide {
			return nil, errWideIDs
		}
		if !slices.IsSorted(cl.ids) {
			// Overlapping rows, which a well-formed index never has.
			sortPairs(cl.ids, cl.scores)
		}
		cl.bytes = int64(len(cl.ids))*8 + int64(len(cl.term)) + 160
		out = append(out, cl)
	}
	return out, nil
}

// errWideIDs reports chunk IDs above 2^32, which the cache does not hold:
// such a query is scored from the stored postings.
var errWideIDs = errors.New("bm25: chunk IDs too large to cache")

// sortPairs sorts ids ascending, keeping each score with its ID.
func sortPairs(ids []uint32, scores []float32) {
	idx := make([]int, len(ids))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ids[a] < ids[b]:
			return -1
		case ids[a] > ids[b]:
			return 1
		}
		return 0
	})
	is := slices.Clone(ids)
	ss := slices.Clone(scores)
	for i, j := range idx {
		ids[i], scores[i] = is[j], ss[j]
	}
}

// dedup returns terms without repeats, in their first order.
func dedup(terms []string) []string {
	seen := make(map[string]bool, len(terms))
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// inQueryOrder returns the lists of terms that have postings, in the order
// of terms.
func inQueryOrder(m map[string]*cachedList, terms []string) []*cachedList {
	out := make([]*cachedList, 0, len(terms))
	for _, t := range terms {
		if l := m[t]; l != nil && len(l.ids) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// slack widens MaxScore's upper bounds: a chunk's score is a float32 sum
// that may round a few units in the last place above the exact sum its
// bound is compared with, and pruning must never drop a chunk that would
// have been kept.
const slack = 1e-5

// cursor walks one query term's list.
type cursor struct {
	ids    []uint32
	scores []float32
	pos    int
	qi     int // the term's place in the query
}

// maxScore returns the k best chunks of lists (in query order) that allow
// accepts, best first, as Score would.
func maxScore(lists []*cachedList, k int, allow func(int64) bool) []store.Scored {
	n := len(lists)
	if n == 0 {
		return nil
	}
	// cs holds the lists by their best contribution, ascending; bound[i] is
	// the most the lists cs[:i+1] can add to a chunk together.
	cs := make([]cursor, n)
	for i, l := range lists {
		cs[i] = cursor{ids: l.ids, scores: l.scores, qi: i}
	}
	slices.SortStableFunc(cs, func(a, b cursor) int {
		switch ma, mb := lists[a.qi].max, lists[b.qi].max; {
		case ma < mb:
			return -1
		case ma > mb:
			return 1
		}
		return 0
	})
	bound := make([]float64, n)
	sum := 0.0
	for i, c := range cs {
		sum += float64(lists[c.qi].max)
		bound[i] = sum * (1 + slack)
	}
	contrib := make([]float32, n) // the candidate's contribution per term, in query order
	touched := make([]int, 0, n)
	top := store.NewTopK(k)
	// Lists cs[ess:] are essential: a chunk in none of them cannot reach
	// the top k, so only their postings propose candidates.
	ess := 0
	// threshold is a score the k-th result is known to reach; full says
	// it is known. It starts from the chunks of the lists with the best
	// contributions, scored ahead (prime), and rises as the top k fills.
	threshold, full := prime(lists, cs, k, allow)
	for full && ess < n && bound[ess] < threshold {
		ess++
	}
	// The first candidate: the lowest first ID of all lists.
	const none = math.MaxUint32 + 1 // no candidate
	next := int64(none)
	for _, c := range cs {
		if len(c.ids) > 0 {
			next = min(next, int64(c.ids[0]))
		}
	}
	for next != none {
		cand, wasEss := next, ess
		// Score the candidate in the essential lists, and find the next
		// candidate in the same pass.
		next = none
		partial := 0.0
		c32 := uint32(cand)
		for j := ess; j < n; j++ {
			c := &cs[j]
			if c.pos >= len(c.ids) {
				continue
			}
			if c.ids[c.pos] == c32 {
				s := c.scores[c.pos]
				contrib[c.qi] = s
				touched = append(touched, c.qi)
				partial += float64(s)
				c.pos++
				if c.pos >= len(c.ids) {
					continue
				}
			}
			next = min(next, int64(c.ids[c.pos]))
		}
		// The non-essential lists, largest first, while the chunk can still
		// make it.
		keep := true
		for i := ess - 1; i >= 0; i-- {
			if full && partial*(1+slack)+bound[i] < threshold {
				keep = false
				break
			}
			c := &cs[i]
			c.pos = seek(c.ids, c.pos, c32)
			if c.pos < len(c.ids) && c.ids[c.pos] == c32 {
				s := c.scores[c.pos]
				contrib[c.qi] = s
				touched = append(touched, c.qi)
				partial += float64(s)
			}
		}
		if keep && (!full || partial*(1+slack) >= threshold) {
			// The score exactly as Score sums it: in query order, in
			// float32 (absent terms add zero, which changes nothing).
			var acc float32
			for _, v := range contrib {
				acc += v
			}
			sc := store.Scored{ChunkID: cand, Score: float64(acc)}
			if top.Admits(sc) && (allow == nil || allow(cand)) {
				top.Offer(sc)
				if t, ok := top.Threshold(); ok && t.Score > threshold {
					full, threshold = true, t.Score
					// Lists whose combined best cannot beat the k-th
					// score stop proposing candidates.
					for ess < n && bound[ess] < threshold {
						ess++
					}
				}
			}
		}
		for _, qi := range touched {
			contrib[qi] = 0
		}
		touched = touched[:0]
		if ess == n {
			break
		}
		if ess != wasEss {
			// Lists that just turned non-essential may have proposed the
			// next candidate: it must come from an essential one.
			next = none
			for j := ess; j < n; j++ {
				if c := &cs[j]; c.pos < len(c.ids) {
					next = min(next, int64(c.ids[c.pos]))
				}
			}
		}
	}
	return top.Best()
}

// primeCandidates bounds how many chunks prime scores ahead.
const primeCandidates = 256

// prime scores ahead the chunks of the lists with the best contributions
// (cs is sorted by them, ascending), which are likely to rank high, and
// returns the k-th best of their scores: the final k-th score is at least
// that, since the walk meets the same chunks again with the same scores.
// ok is false when fewer than k such chunks pass allow.
func prime(lists []*cachedList, cs []cursor, k int, allow func(int64) bool) (threshold float64, ok bool) {
	var cands []uint32
	for i := len(cs) - 1; i >= 0 && len(cands) < 2*k; i-- {
		ids := cs[i].ids
		cands = append(cands, ids[:min(len(ids), primeCandidates-len(cands))]...)
	}
	if len(cands) < k {
		return 0, false
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	top := store.NewTopK(k)
	for _, id := range cands {
		var acc float32
		for _, l := range lists { // query order, as Score sums
			if j, found := slices.BinarySearch(l.ids, id); found {
				acc += l.scores[j]
			}
		}
		sc := store.Scored{ChunkID: int64(id), Score: float64(acc)}
		if top.Admits(sc) && (allow == nil || allow(sc.ChunkID)) {
			top.Offer(sc)
		}
	}
	t, ok := top.Threshold()
	return t.Score, ok
}

// seek returns the first index at or after from whose ID is at least id,
// galloping ahead and then searching the last step.
func seek(ids []uint32, from int, id uint32) int {
	if from >= len(ids) || ids[from] >= id {
		return from
	}
	step := 1
	lo, hi := from, from+1
	for hi < len(ids) && ids[hi] < id {
		lo = hi
		step *= 2
		hi = from + step
	}
	hi = min(hi, len(ids))
	// ids[lo] < id; the answer lies in (lo, hi].
	i, _ := slices.BinarySearch(ids[lo+1:hi], id)
	return lo + 1 + i
}
