package bm25

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestListRoundTrip encodes lists of every ID layout (blocks of narrow and
// of wide offsets, alone and mixed) with few and with more distinct scores
// than 16-bit codes name, then walks and seeks them with cursors: every ID
// and score must come back exactly, in the memory the packing promises.
func TestListRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gaps := 0
	for _, tc := range []struct {
		name     string
		n        int
		gap      func() uint32
		distinct int
		// idBits is the most bits an ID's offset may average: the width
		// the spans of the case's blocks need.
		idBits float64
	}{
		{"dense, few scores", 5000, func() uint32 { return 1 + uint32(rng.IntN(3)) }, 7, 9},
		{"gaps near 16-bit offsets", 3000, func() uint32 { return 200 + uint32(rng.IntN(300)) }, 500, 16},
		{"gaps wider than 16-bit offsets", 1000, func() uint32 { return 1<<10 + uint32(rng.IntN(1<<18)) }, 100, 25},
		// 31 blocks of span 127 and one of 2^20+127.
		{"one wide block among narrow ones", 4000, func() uint32 {
			if gaps++; gaps == 2000 {
				return 1 << 20
			}
			return 1
		}, 1000, (31*7 + 21) / 32.0},
		{"more scores than codes", 70000, func() uint32 { return 1 }, 70000, 7},
		{"few postings", 20, func() uint32 { return 9 }, 3, 8},
		{"exactly one block", blockSize, func() uint32 { return 2 }, 3, 8},
		{"one posting", 1, func() uint32 { return 5 }, 1, 0},
	} {
		ids := make([]uint32, tc.n)
		scores := make([]float32, tc.n)
		id := uint32(rng.IntN(100))
		for i := range ids {
			id += tc.gap()
			ids[i] = id
			if tc.distinct >= tc.n {
				scores[i] = float32(i+1) / 7
			} else {
				scores[i] = float32(rng.IntN(tc.distinct)+1) * 0.37
			}
		}
		l := newList("t", ids, scores)
		coded := tc.n >= codeMin && tc.distinct <= math.MaxUint16+1
		if l.coded != coded {
			t.Errorf("%s: dictionary %v for %d postings with %d distinct scores", tc.name, l.coded, tc.n, tc.distinct)
		}
		// The memory the packing promises: offsets of the width a
		// block's span needs, codes of the width the dictionary's size
		// needs (else float32s), and fixed costs per block and list.
		scoreBits, fixed := 32.0, float64(4*blkWords*((tc.n+blockSize-1)/blockSize)+packPad+len("t"))
		if coded {
			scoreBits = float64(bits.Len(uint(tc.distinct - 1)))
			fixed += float64(4 * tc.distinct)
		}
		want := (tc.idBits+scoreBits)/8 + (fixed+2+3)/float64(tc.n) // a byte's rounding each, and the words'
		if per := float64(l.bytes()-listOverhead) / float64(tc.n); per > want {
			t.Errorf("%s: %.3f bytes a posting, want at most %.3f", tc.name, per, want)
		}
		if want := slices.Max(scores); l.max != want {
			t.Errorf("%s: max %v, want %v", tc.name, l.max, want)
		}
		var c cursor
		c.init(l, 0)
		for i := range ids {
			if c.cur != int64(ids[i]) || c.score() != scores[i] {
				t.Fatalf("%s: posting %d = (%d, %v), want (%d, %v)", tc.name, i, c.cur, c.score(), ids[i], scores[i])
			}
			c.next()
		}
		if c.cur != none {
			t.Fatalf("%s: cursor not done after %d postings", tc.name, len(ids))
		}
		// Seeks to random targets in ascending order, some in gaps, some
		// on postings, some past the end.
		targets := make([]uint32, 300)
		for i := range targets {
			targets[i] = uint32(rng.Int64N(int64(ids[len(ids)-1]) + 50))
		}
		slices.Sort(targets)
		c.init(l, 0)
		for _, x := range targets {
			c.seek(x)
			j, _ := slices.BinarySearch(ids, x)
			if j == len(ids) {
				if c.cur != none {
					t.Fatalf("%s: seek(%d) past the end = %d", tc.name, x, c.cur)
				}
				continue
			}
			if c.cur != int64(ids[j]) || c.score() != scores[j] {
				t.Fatalf("%s: seek(%d) = %d, want %d", tc.name, x, c.cur, ids[j])
			}
		}
	}
}

// TestCacheMatchesScoreOnLargeLists compares the cache with Score where
// lists span many blocks, with queries walked on one core and split over
// four ranges walked at once.
func TestCacheMatchesScoreOnLargeLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	m := randomIndex(rng, 40000, 3000, 9000)
	c := NewCache(0)
	split := NewCache(0)
	split.split = 1
	for q := range 120 {
		c := c
		if q%2 == 1 {
			c = split
		}
		var terms []string
		for range 2 + rng.IntN(10) {
			terms = append(terms, "t"+strconv.Itoa(rng.IntN(100)))
		}
		k := []int{1, 10, 100}[q%3]
		var allow func(int64) bool
		if q%4 == 0 {
			allow = func(id int64) bool { return id%3 != 0 }
		}
		want, err := Score(DefaultParams(), m.corpus, m.lists(terms), k, allow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Search(t.Context(), m, DefaultParams(), terms, k, allow)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("query %v k %d: cache gave\n%v\nScore gives\n%v", terms, k, got, want)
		}
	}
}

// TestAccumulatorRejectsDamagedRows feeds cut and garbled rows: an
// error, never a panic or a made-up score.
func TestAccumulatorRejectsDamagedRows(t *testing.T) {
	good := Encode(nil, []Posting{body(3, 2, 10), body(900, 1, 4), {ID: 1000, TF: [NumFields]uint32{Title: 1, Body: 3}, DL: [NumFields]uint32{Title: 2, Body: 30}}})
	for name, data := range map[string][]byte{
		"cut in a posting":  good[:len(good)-1],
		"cut after an ID":   good[:1],
		"a bad field mask":  append([]byte{5, 0x80}, good[2:]...),
		"an endless varint": {0xff, 0xff, 0xff},
	} {
		a := NewAccumulator(DefaultParams(), Corpus{Docs: 1000, Tokens: [NumFields]int64{Body: 9000, Title: 900}})
		if err := a.Add(data, 3); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	a := NewAccumulator(DefaultParams(), Corpus{Docs: 1000, Tokens: [NumFields]int64{Body: 9000, Title: 900}})
	if err := a.Add(good, 3); err != nil || len(a.Top(10, nil)) != 3 {
		t.Errorf("good row: %v, %v", err, a.Top(10, nil))
	}
}
