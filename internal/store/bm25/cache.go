package bm25

import (
	"context"
	"errors"
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
	// order (the rows of a term together; data is valid only until each
	// returns, so that a store need not copy it). An error from either
	// stops the scan and is returned.
	Scan(ctx context.Context, start func(version string, c Corpus) error, each func(term string, data []byte) error) error
}

// DefaultCacheBytes bounds a Cache by default: enough for every list of an
// index of about a million chunks (a large list takes about four bytes
// per posting, see cachedList).
const DefaultCacheBytes = 1 << 30

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
// Queries are answered by MaxScore (maxScore): most
// postings of common terms are skipped. Each surviving chunk's score is
// summed over the query's terms in query order, exactly as Score sums it,
// so the results are identical: the same chunks in the same order with
// bit-identical scores.
type Cache struct {
	max int64
	// split is how many postings a query's lists must hold together for
	// the walk to be split over cores (parallelPostings; tests lower it).
	split int

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
	lists   map[string]*cachedList
	lru     lruList // front: most recently used
	bytes   int64
}

// NewCache returns an empty cache that holds at most maxBytes of lists
// (DefaultCacheBytes when maxBytes <= 0). A list larger than the bound is
// used for its query and not kept.
func NewCache(maxBytes int64) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Cache{max: maxBytes, split: parallelPostings, lists: map[string]*cachedList{}, wctx: ctx, stop: stop}
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
			return maxScore(inQueryOrder(lists, terms), k, allow, c.split), nil
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
		return maxScore(inQueryOrder(all, terms), k, allow, c.split), nil
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
		l, ok := c.lists[t]
		if !ok {
			missing = append(missing, t)
			continue
		}
		c.lru.moveToFront(l)
		lists[t] = l
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
		c.lists = map[string]*cachedList{}
		c.lru = lruList{}
		c.bytes = 0
		c.version, c.params, c.corpus, c.valid = version, p, corpus, true
	}
	for _, l := range built {
		all[l.term] = l
		if _, ok := c.lists[l.term]; ok || l.bytes() > c.max {
			continue
		}
		c.lists[l.term] = l
		c.lru.pushFront(l)
		c.bytes += l.bytes()
	}
	for c.bytes > c.max {
		l := c.lru.back
		c.lru.remove(l)
		delete(c.lists, l.term)
		c.bytes -= l.bytes()
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
		c.load(sc, version, p)
	}()
}

// warmBatch is how many terms' rows the reader hands the builder at once.
const warmBatch = 256

// load reads every list of version and adds it to the cache: one
// goroutine reads the index (Scan) while another decodes and scores what
// it read, so that a load takes about the longer of the two rather than
// their sum. A failed or stopped load only leaves lists to load on
// demand: nothing to report.
func (c *Cache) load(sc Scanner, version string, p Params) {
	ctx, cancel := context.WithCancel(c.wctx)
	defer cancel()
	var corpus Corpus
	// A batch's rows are copied into its arena, which goes back to the
	// reader once the batch is built: a load makes no garbage per row.
	type batch struct {
		lists []List
		arena []byte
	}
	batches := make(chan *batch, 2)
	spare := make(chan *batch, 3)
	for range cap(spare) {
		spare <- &batch{}
	}
	var built sync.WaitGroup
	built.Go(func() {
		var b *listBuilder
		for bt := range batches {
			if ctx.Err() == nil {
				if b == nil {
					b = newListBuilder(p, corpus) // corpus is set before the first batch is sent
				}
				lists := make([]*cachedList, 0, len(bt.lists))
				for _, l := range bt.lists {
					cl, err := b.list(l)
					if err != nil {
						cancel()
						break
					}
					lists = append(lists, cl)
				}
				if c.add(version, p, lists) != nil {
					cancel() // stale or full
				}
			}
			clear(bt.lists)
			bt.lists, bt.arena = bt.lists[:0], bt.arena[:0]
			spare <- bt
		}
	})
	cur := <-spare
	var term string
	flush := func() {
		if len(cur.lists) == 0 {
			return
		}
		select {
		case batches <- cur:
			cur = <-spare
		case <-ctx.Done():
		}
	}
	err := sc.Scan(ctx, func(v string, cp Corpus) error {
		if v != version || cp.Docs == 0 {
			return errStop // already stale (a query starts the next load), or empty
		}
		corpus = cp
		return nil
	}, func(t string, data []byte) error {
		if t != term {
			if len(cur.lists) >= warmBatch {
				flush()
			}
			term = t
			cur.lists = append(cur.lists, List{Term: t})
		}
		// When the arena grows, the rows copied into it before stay
		// where they are, in the array it outgrew.
		l := &cur.lists[len(cur.lists)-1]
		start := len(cur.arena)
		cur.arena = append(cur.arena, data...)
		l.Data = append(l.Data, cur.arena[start:len(cur.arena):len(cur.arena)])
		return ctx.Err()
	})
	if err == nil && ctx.Err() == nil {
		flush()
	}
	close(batches)
	built.Wait()
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
		if c.bytes+l.bytes() > c.max {
			if c.max-c.bytes < 1<<10 {
				return errStop // full
			}
			continue // too large for what is left; smaller lists may fit
		}
		// At the back: lists nobody asked for yet are the first to go.
		c.lists[l.term] = l
		c.lru.pushBack(l)
		c.bytes += l.bytes()
	}
	return nil
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
		if l := m[t]; l != nil && l.n > 0 {
			out = append(out, l)
		}
	}
	return out
}

// lruList chains cached lists through their prev and next links, most
// recently used at the front: a link in each list instead of a separate
// element per list, which at a million terms saves tens of megabytes.
type lruList struct {
	front, back *cachedList
}

func (r *lruList) pushFront(l *cachedList) {
	l.prev, l.next = nil, r.front
	if r.front != nil {
		r.front.prev = l
	} else {
		r.back = l
	}
	r.front = l
}

func (r *lruList) pushBack(l *cachedList) {
	l.prev, l.next = r.back, nil
	if r.back != nil {
		r.back.next = l
	} else {
		r.front = l
	}
	r.back = l
}

func (r *lruList) remove(l *cachedList) {
	if l.prev != nil {
		l.prev.next = l.next
	} else {
		r.front = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	} else {
		r.back = l.prev
	}
	l.prev, l.next = nil, nil
}

func (r *lruList) moveToFront(l *cachedList) {
	if r.front != l {
		r.remove(l)
		r.pushFront(l)
	}
}
