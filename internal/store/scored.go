package store

import (
	"cmp"
	"container/heap"
	"slices"
)

// CompareScored orders hits best first: higher score, then lower chunk ID,
// so that every store and every ranking breaks ties the same way.
func CompareScored(a, b Scored) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return cmp.Compare(a.ChunkID, b.ChunkID)
}

// SortScored sorts hits best first (CompareScored).
func SortScored(s []Scored) { slices.SortFunc(s, CompareScored) }

// TopK keeps the k best hits offered to it (CompareScored order). Every
// store's ranking selects through it, so all break ties the same way.
type TopK struct {
	k int
	h scoredHeap
}

// NewTopK returns an empty TopK that keeps k hits.
func NewTopK(k int) *TopK { return &TopK{k: k} }

// Admits reports whether a hit would be kept now; a caller checks it before
// a costlier test such as a filter.
func (t *TopK) Admits(s Scored) bool {
	return t.k > 0 && (len(t.h) < t.k || CompareScored(s, t.h[0]) < 0)
}

// Threshold returns the worst hit kept once k are kept: a hit must rank
// above it to be admitted. ok is false while fewer than k are kept.
func (t *TopK) Threshold() (s Scored, ok bool) {
	if t.k <= 0 || len(t.h) < t.k {
		return Scored{}, false
	}
	return t.h[0], true
}

// Offer keeps s if it ranks among the k best so far.
func (t *TopK) Offer(s Scored) {
	switch {
	case !t.Admits(s):
	case len(t.h) < t.k:
		heap.Push(&t.h, s)
	default:
		t.h[0] = s
		heap.Fix(&t.h, 0)
	}
}

// Best returns the kept hits, best first, and empties t.
func (t *TopK) Best() []Scored {
	out := make([]Scored, len(t.h))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&t.h).(Scored)
	}
	return out
}

// scoredHeap is a min-heap on rank: the root is the worst kept hit.
type scoredHeap []Scored

func (h scoredHeap) Len() int           { return len(h) }
func (h scoredHeap) Less(i, j int) bool { return CompareScored(h[j], h[i]) < 0 }
func (h scoredHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scoredHeap) Push(x any)        { *h = append(*h, x.(Scored)) }
func (h *scoredHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
