package bm25

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/analyze/analyzetest"
)

// realFields analyses real texts (SciFact abstracts, the VitePress docs)
// into chunk fields: the first line is the title, the rest the body, and
// every third text has a heading too.
func realFields(t *testing.T) [][NumFields][]string {
	t.Helper()
	an := analyze.New(analyze.Options{})
	texts := append(analyzetest.SciFact(t, 1500), analyzetest.VitePress(t)...)
	out := make([][NumFields][]string, len(texts))
	for i, text := range texts {
		title, body, _ := strings.Cut(text, "\n")
		out[i][Title] = an.Terms(title)
		out[i][Body] = an.Terms(body)
		if i%3 == 0 {
			out[i][Heading] = an.Terms(title + " overview")
		}
	}
	return out
}

// TestCounterMatchesCount checks that a Counter reused over thousands of
// real chunks, its results' memory reused too, tallies each exactly as
// Count does, including after chunks bigger than the table it keeps.
func TestCounterMatchesCount(t *testing.T) {
	chunks := realFields(t)
	// A chunk with more distinct terms than counterMaxKeep, in the middle.
	var big [NumFields][]string
	for i := range 2 * counterMaxKeep {
		big[Body] = append(big[Body], fmt.Sprint("t", i%(counterMaxKeep+100)))
	}
	chunks = slices.Insert(chunks, len(chunks)/2, big)
	var c Counter
	var dst []TermCount
	sawBig := false
	for i, f := range chunks {
		got := c.Count(dst, f)
		want := Count(f)
		if got.Len != want.Len || !slices.Equal(got.Terms, want.Terms) {
			t.Fatalf("chunk %d: Counter gave %d terms, lengths %v; Count %d, %v", i, len(got.Terms), got.Len, len(want.Terms), want.Len)
		}
		sawBig = sawBig || len(got.Terms) > counterMaxKeep
		dst = got.Terms
	}
	if !sawBig {
		t.Error("no chunk had more distinct terms than the Counter keeps room for")
	}
}

// TestMergeEncodedMatchesMerge checks that concatenating encoded lists
// gives Merge's bytes: for lists of random postings split into disjoint ID
// ranges and given in any order, with empty lists among them, and for
// overlapping lists, which go to Merge.
func TestMergeEncodedMatchesMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 300 {
		var ps []Posting
		id := uint64(rng.IntN(3))
		for range rng.IntN(60) {
			id += 1 + uint64(rng.IntN(1<<rng.IntN(24)))
			var p Posting
			p.ID = id
			for f := range NumFields {
				if f == Body || rng.IntN(3) == 0 {
					p.TF[f], p.DL[f] = uint32(1+rng.IntN(300)), uint32(rng.IntN(70000))
				}
			}
			ps = append(ps, p)
		}
		// Cut into parts at random points; shuffle; add empty ones.
		var lists [][]byte
		for len(ps) > 0 {
			k := 1 + rng.IntN(len(ps))
			lists = append(lists, Encode(nil, ps[:k]))
			ps = ps[k:]
		}
		for range rng.IntN(3) {
			lists = append(lists, nil)
		}
		rng.Shuffle(len(lists), func(i, j int) { lists[i], lists[j] = lists[j], lists[i] })
		if n%5 == 0 && len(lists) > 1 {
			// Overlap: a list with an ID inside another's range.
			lists = append(lists, Encode(nil, []Posting{body(id/2+1, 1, 1)}))
		}
		want, wn, werr := Merge(lists...)
		got, gn, gerr := MergeEncoded(lists...)
		if werr != nil || gerr != nil || gn != wn || !bytes.Equal(got, want) {
			t.Fatalf("case %d (%d lists): MergeEncoded gave %d postings, %v; Merge %d, %v; bytes equal: %v", n, len(lists), gn, gerr, wn, werr, bytes.Equal(got, want))
		}
	}
	if _, _, err := MergeEncoded([]byte{0x05}); err == nil {
		t.Error("corrupt postings merged without error")
	}
}

// TestMergeEncodedRealSegments builds the postings of real text as three
// segments of consecutive chunks, as three indexing batches would, and
// checks that merging each term's rows gives Merge's bytes and the postings
// of one builder over all the chunks.
func TestMergeEncodedRealSegments(t *testing.T) {
	chunks := realFields(t)
	whole := NewBuilder()
	segs := []*Builder{NewBuilder(), NewBuilder(), NewBuilder()}
	for i, f := range chunks {
		c := Count(f)
		whole.AddCounts(uint64(i+1), c)
		segs[i*len(segs)/len(chunks)].AddCounts(uint64(i+1), c)
	}
	for _, term := range whole.Terms() {
		var lists [][]byte
		for _, s := range slices.Backward(segs) { // rows in any order
			if data, n := s.Encoded(term, 0); n > 0 {
				lists = append(lists, data)
			}
		}
		got, n, err := MergeEncoded(lists...)
		want, wn, _ := Merge(lists...)
		all, an := whole.Encoded(term, 0)
		if err != nil || n != wn || n != an || !bytes.Equal(got, want) || !bytes.Equal(got, all) {
			t.Fatalf("term %q: MergeEncoded gave %d postings (%v); Merge %d, one builder %d", term, n, err, wn, an)
		}
	}
}
