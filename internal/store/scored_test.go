package store

import (
	"slices"
	"testing"
)

func TestTopKKeepsBestInScoredOrder(t *testing.T) {
	hits := []Scored{{5, 0.5}, {3, 0.9}, {9, 0.5}, {1, 0.5}, {2, 0.1}, {7, 0.9}}
	tests := []struct {
		k    int
		want []Scored
	}{
		{0, []Scored{}},
		{1, []Scored{{3, 0.9}}},
		{3, []Scored{{3, 0.9}, {7, 0.9}, {1, 0.5}}},
		{10, []Scored{{3, 0.9}, {7, 0.9}, {1, 0.5}, {5, 0.5}, {9, 0.5}, {2, 0.1}}},
	}
	for _, tc := range tests {
		top := NewTopK(tc.k)
		for _, h := range hits {
			top.Offer(h)
		}
		if got := top.Best(); !slices.Equal(got, tc.want) {
			t.Errorf("top %d = %v, want %v", tc.k, got, tc.want)
		}
		sorted := slices.Clone(hits)
		SortScored(sorted)
		if n := min(tc.k, len(sorted)); !slices.Equal(sorted[:n], tc.want) {
			t.Errorf("SortScored's first %d = %v, want TopK's %v", n, sorted[:n], tc.want)
		}
	}
}
