package bm25

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// slack widens MaxScore's upper bounds: a chunk's score is a float32 sum
// that may round a few units in the last place above the exact sum its
// bound is compared with, and pruning must never drop a chunk that would
// have been kept.
const slack = 1e-5

// maxScore returns the k best chunks of lists (in query order) that allow
// accepts, best first, as Score would.
//
// MaxScore (Turtle and Flood, 1995): the lists are walked chunk by chunk;
// once the k-th score is known, the lists that together cannot lift a
// chunk past it stop proposing candidates (non-essential) and are only
// probed, by galloping search, for the chunks the others propose. A query
// over many postings is split into ranges of chunk IDs walked on several
// cores, which share the k-th score as it rises.
func maxScore(lists []*cachedList, k int, allow func(int64) bool, split int) []store.Scored {
	n := len(lists)
	if n == 0 {
		return nil
	}
	// order holds the lists by their best contribution, ascending; bound[i]
	// is the most the lists order[:i+1] can add to a chunk together.
	order := make([]*cachedList, n)
	qi := make([]int, n)
	for i := range order {
		qi[i] = i
	}
	slices.SortStableFunc(qi, func(a, b int) int {
		switch ma, mb := lists[a].max, lists[b].max; {
		case ma < mb:
			return -1
		case ma > mb:
			return 1
		}
		return 0
	})
	total := 0
	for i, q := range qi {
		order[i] = lists[q]
		total += int(lists[q].n)
	}
	bound := make([]float64, n)
	sum := 0.0
	for i, l := range order {
		sum += float64(l.max)
		bound[i] = sum * (1 + slack)
	}
	// The k-th score is at least that of the chunks of the lists with the
	// best contributions, scored ahead (prime).
	var th threshold
	if t, ok := prime(lists, order, k, allow); ok {
		th.raise(t)
	}
	parts := splitAt(order, total, split)
	if len(parts) == 1 {
		return walk(order, qi, bound, 0, none, k, allow, &th).Best()
	}
	tops := make([]*store.TopK, len(parts))
	var wg sync.WaitGroup
	for p, hi := range parts {
		lo := int64(0)
		if p > 0 {
			lo = parts[p-1]
		}
		wg.Go(func() { tops[p] = walk(order, qi, bound, lo, hi, k, allow, &th) })
	}
	wg.Wait()
	top := store.NewTopK(k)
	for _, t := range tops {
		for _, s := range t.Best() {
			top.Offer(s)
		}
	}
	return top.Best()
}

// parallelPostings is how many postings a query's lists must hold together
// before the walk is split over cores.
const parallelPostings = 1 << 18

// splitAt returns the ends (exclusive) of the ID ranges a query is walked
// in: one range for a query over fewer than split postings, else one per
// core (at most four), cut
// at quantiles of the longest list so that each range holds a like share
// of its postings.
func splitAt(order []*cachedList, total, split int) []int64 {
	parts := min(runtime.GOMAXPROCS(0), 4)
	if total < split || parts < 2 {
		return []int64{none}
	}
	longest := order[0]
	for _, l := range order {
		if l.n > longest.n {
			longest = l
		}
	}
	var ends []int64
	for p := 1; p < parts; p++ {
		id := int64(longest.id(int(longest.n) * p / parts))
		if len(ends) == 0 || id > ends[len(ends)-1] {
			ends = append(ends, id)
		}
	}
	return append(ends, none)
}

// threshold is the score the k-th result is known to reach, shared by
// the walks of one query (zero while unknown: every contribution is
// positive).
type threshold struct{ bits atomic.Uint64 }

func (t *threshold) get() float64 { return math.Float64frombits(t.bits.Load()) }

// raise sets the threshold to s when that is higher.
func (t *threshold) raise(s float64) {
	for {
		old := t.bits.Load()
		if math.Float64frombits(old) >= s || t.bits.CompareAndSwap(old, math.Float64bits(s)) {
			return
		}
	}
}

// walk runs MaxScore over the chunks with IDs in [lo, hi) of the lists
// in order (by best contribution, ascending; qi[i] is order[i]'s place in
// the query, bound[i] the best order[:i+1] add together) and returns its
// top k. th is the k-th score known so far, which walk raises.
func walk(order []*cachedList, qi []int, bound []float64, lo, hi int64, k int, allow func(int64) bool, th *threshold) *store.TopK {
	n := len(order)
	cs := make([]cursor, n)
	for i, l := range order {
		cs[i].init(l, qi[i])
		if lo > 0 {
			cs[i].seek(uint32(lo))
		}
	}
	contrib := make([]float32, n) // the candidate's contribution per term, in query order
	touched := make([]int, 0, n)
	top := store.NewTopK(k)
	// Lists cs[ess:] are essential: a chunk in none of them cannot reach
	// the top k, so only their postings propose candidates.
	ess := 0
	threshold := th.get()
	full := threshold > 0
	for full && ess < n && bound[ess] < threshold {
		ess++
	}
	// The first candidate: the lowest ID of the essential lists.
	next := int64(none)
	for i := ess; i < n; i++ {
		next = min(next, cs[i].cur)
	}
	for next < hi {
		cand, wasEss := next, ess
		// Score the candidate in the essential lists, and find the next
		// candidate in the same pass.
		next = none
		partial := 0.0
		c32 := uint32(cand)
		for j := ess; j < n; j++ {
			c := &cs[j]
			if c.cur == cand {
				s := c.score()
				contrib[c.qi] = s
				touched = append(touched, c.qi)
				partial += float64(s)
				c.next()
			}
			next = min(next, c.cur)
		}
		// The non-essential lists, largest first, while the chunk can
		// still make it.
		keep := true
		for i := ess - 1; i >= 0; i-- {
			if full && partial*(1+slack)+bound[i] < threshold {
				keep = false
				break
			}
			c := &cs[i]
			c.seek(c32)
			if c.cur == cand {
				s := c.score()
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
				if t, ok := top.Threshold(); ok {
					th.raise(t.Score)
				}
			}
		}
		for _, q := range touched {
			contrib[q] = 0
		}
		touched = touched[:0]
		// Another range's walk may have raised the k-th score too.
		if t := th.get(); t > threshold {
			full, threshold = true, t
			// Lists whose combined best cannot beat the k-th score stop
			// proposing candidates.
			for ess < n && bound[ess] < threshold {
				ess++
			}
		}
		if ess == n {
			break
		}
		if ess != wasEss {
			// Lists that just turned non-essential may have proposed the
			// next candidate: it must come from an essential one.
			next = none
			for j := ess; j < n; j++ {
				next = min(next, cs[j].cur)
			}
		}
	}
	return top
}

// primeCandidates bounds how many chunks prime scores ahead.
const primeCandidates = 256

// prime scores ahead the chunks of the lists with the best contributions
// (order is sorted by them, ascending), which are likely to rank high, and
// returns the k-th best of their scores: the final k-th score is at least
// that, since the walk meets the same chunks again with the same scores.
// ok is false when fewer than k such chunks pass allow.
func prime(lists, order []*cachedList, k int, allow func(int64) bool) (threshold float64, ok bool) {
	var cands []uint32
	var c cursor
	for i := len(order) - 1; i >= 0 && len(cands) < 2*k; i-- {
		for c.init(order[i], 0); c.cur != none && len(cands) < primeCandidates; c.next() {
			cands = append(cands, uint32(c.cur))
		}
	}
	if len(cands) < k {
		return 0, false
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	probes := make([]cursor, len(lists)) // query order, as Score sums
	for i, l := range lists {
		probes[i].init(l, i)
	}
	top := store.NewTopK(k)
	for _, id := range cands {
		var acc float32
		for i := range probes {
			p := &probes[i]
			p.seek(id)
			if p.cur == int64(id) {
				acc += p.score()
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
