package bm25

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// body is a posting of a term found only in the body.
func body(id uint64, tf, dl uint32) Posting {
	var p Posting
	p.ID, p.TF[Body], p.DL[Body] = id, tf, dl
	return p
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 200; n++ {
		var ps []Posting
		id := uint64(0)
		for i := 0; i < rng.IntN(50); i++ {
			id += 1 + uint64(rng.IntN(1<<20))
			var p Posting
			p.ID = id
			for f := range NumFields {
				if f == Body || rng.IntN(3) == 0 {
					p.TF[f], p.DL[f] = uint32(1+rng.IntN(100)), uint32(rng.IntN(5000))
				}
			}
			ps = append(ps, p)
		}
		got, err := DecodeAll(Encode(nil, ps))
		if err != nil || !slices.Equal(got, ps) {
			t.Fatalf("round trip of %v gave %v, %v", ps, got, err)
		}
	}
}

func TestDecodeRejectsTruncatedData(t *testing.T) {
	data := Encode(nil, []Posting{body(300, 2, 1000)})
	if _, err := DecodeAll(data[:len(data)-1]); err == nil {
		t.Error("truncated postings decoded without error")
	}
}

func TestMergeAndRemove(t *testing.T) {
	a := Encode(nil, []Posting{body(1, 1, 5), body(4, 2, 6)})
	b := Encode(nil, []Posting{body(7, 1, 3)})
	c := Encode(nil, []Posting{body(2, 3, 9), body(9, 1, 1)}) // overlaps a's range
	for _, order := range [][][]byte{{a, b}, {b, a}, {a, b, c}, {c, b, a}} {
		merged, n, err := Merge(order...)
		if err != nil {
			t.Fatal(err)
		}
		ps, _ := DecodeAll(merged)
		if n != len(ps) || !slices.IsSortedFunc(ps, cmpID) {
			t.Errorf("Merge gave %d postings %v, want them sorted", n, ps)
		}
	}
	merged, _, _ := Merge(a, b)
	kept, n, err := Remove(merged, map[uint64]bool{4: true, 7: true})
	ps, _ := DecodeAll(kept)
	if err != nil || n != 1 || len(ps) != 1 || ps[0].ID != 1 {
		t.Errorf("Remove = %v (%d), %v; want only ID 1", ps, n, err)
	}
}

func TestScoreRanksAndBreaksTiesByID(t *testing.T) {
	// Two terms; chunk 3 has both, chunks 1 and 2 one each with equal stats.
	l1 := List{Term: "x", Data: [][]byte{Encode(nil, []Posting{body(1, 1, 10), body(3, 1, 10)})}}
	l2 := List{Term: "y", Data: [][]byte{Encode(nil, []Posting{body(2, 1, 10), body(3, 1, 10)})}}
	c := Corpus{Docs: 10, Tokens: [NumFields]int64{Body: 100}}
	got, err := Score(DefaultParams(), c, []List{l1, l2}, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ChunkID != 3 || got[1].ChunkID != 1 || got[2].ChunkID != 2 {
		t.Errorf("Score = %v, want 3 first, then the tie 1 before 2", got)
	}
	if got[1].Score != got[2].Score {
		t.Errorf("equal postings scored differently: %v", got)
	}
	only, _ := Score(DefaultParams(), c, []List{l1, l2}, 5, func(id int64) bool { return id != 3 })
	if len(only) != 2 || only[0].ChunkID != 1 {
		t.Errorf("allow filter not applied: %v", only)
	}
}

func TestIDFIsNeverNegative(t *testing.T) {
	for _, df := range []int{0, 1, 50, 99, 100} {
		if v := IDF(100, df); v <= 0 {
			t.Errorf("IDF(100, %d) = %v, want > 0", df, v)
		}
	}
}
