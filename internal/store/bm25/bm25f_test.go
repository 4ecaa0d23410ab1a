package bm25

import (
	"math"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store"
)

func TestBM25FMatchesHandComputedScores(t *testing.T) {
	// Two chunks, term x in both (df 2 of 2): idf = ln(1 + 0.5/2.5) = ln 1.2.
	// Average lengths: title 4/2 = 2, body 20/2 = 10.
	// Chunk 1: body tf 2, dl 10 → tf' = 1·2/(0.25 + 0.75·10/10) = 2,
	//   score = idf · 2 · 2.2 / (1.2 + 2) = 0.2506921405916876.
	// Chunk 2: title tf 1, dl 2 → 2·1/(0.5 + 0.5·2/2) = 2; body tf 1, dl 10
	//   → 1; tf' = 3, score = idf · 3 · 2.2 / 4.2 = 0.28650530353335724.
	p := Params{K1: 1.2, Weight: [NumFields]float64{Title: 2, Heading: 2, Body: 1}, B: [NumFields]float64{Title: 0.5, Heading: 0.5, Body: 0.75}}
	c := Corpus{Docs: 2, Tokens: [NumFields]int64{Title: 4, Body: 20}}
	p2 := Posting{ID: 2}
	p2.TF[Title], p2.DL[Title] = 1, 2
	p2.TF[Body], p2.DL[Body] = 1, 10
	l := List{Term: "x", Data: [][]byte{Encode(nil, []Posting{body(1, 2, 10), p2})}}
	got, err := Score(p, c, []List{l}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Scored{{ChunkID: 2, Score: 0.28650530353335724}, {ChunkID: 1, Score: 0.2506921405916876}}
	if len(got) != len(want) {
		t.Fatalf("Score = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].ChunkID != want[i].ChunkID || math.Abs(got[i].Score-want[i].Score) > 1e-6 {
			t.Errorf("hit %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestBM25FWithOneFieldIsOkapiBM25(t *testing.T) {
	// All text in the body with weight 1: BM25F reduces to BM25,
	// idf · tf · (k1+1) / (tf + k1 · (1 − b + b · dl/avgdl)).
	c := Corpus{Docs: 4, Tokens: [NumFields]int64{Body: 40}}
	l := List{Term: "x", Data: [][]byte{Encode(nil, []Posting{body(1, 3, 20)})}}
	got, err := Score(DefaultParams(), c, []List{l}, 1, nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("Score = %v, %v", got, err)
	}
	want := IDF(4, 1) * 3 * 2.2 / (3 + 1.2*(0.25+0.75*20.0/10))
	if math.Abs(got[0].Score-want) > 1e-5 {
		t.Errorf("score %v, Okapi BM25 gives %v", got[0].Score, want)
	}
}

func TestTitleMatchBeatsBodyMention(t *testing.T) {
	// Chunk 1 mentions the term once in its body; chunk 2 has it once in
	// its title. Same lengths everywhere: only the field differs.
	c := Corpus{Docs: 10, Tokens: [NumFields]int64{Title: 30, Heading: 30, Body: 1000}}
	inTitle := Posting{ID: 2}
	inTitle.TF[Title], inTitle.DL[Title] = 1, 3
	l := List{Term: "theme", Data: [][]byte{Encode(nil, []Posting{body(1, 1, 100), inTitle})}}
	got, err := Score(DefaultParams(), c, []List{l}, 2, nil)
	if err != nil || len(got) != 2 {
		t.Fatalf("Score = %v, %v", got, err)
	}
	if got[0].ChunkID != 2 {
		t.Errorf("ranking %v: the title match should come first", got)
	}
	// With equal weights and no length normalisation the two tie: the
	// order came from the weights.
	flat := Params{K1: 1.2, Weight: [NumFields]float64{1, 1, 1}}
	even, _ := Score(flat, c, []List{l}, 2, nil)
	if even[0].Score != even[1].Score {
		t.Errorf("equal weights scored %v, want a tie", even)
	}
}

func TestProximityPrefersAdjacentTerms(t *testing.T) {
	q := []string{"custom", "theme"}
	adjacent := strings.Fields("use a custom theme here")
	distant := strings.Fields("custom a b c d e f g theme")
	absent := strings.Fields("custom only")
	pa, pd, px := Proximity(q, adjacent), Proximity(q, distant), Proximity(q, absent)
	if pa != 1 {
		t.Errorf("adjacent terms: proximity %v, want 1", pa)
	}
	if want := 1.0 / 64; math.Abs(pd-want) > 1e-12 {
		t.Errorf("terms 8 apart: proximity %v, want %v", pd, want)
	}
	if px != 0 {
		t.Errorf("one term missing: proximity %v, want 0", px)
	}
	if p := Proximity([]string{"theme"}, adjacent); p != 0 {
		t.Errorf("one-term query: proximity %v, want 0", p)
	}
	// Three terms: pairs (a,b) adjacent, (a,c) 2 apart, (b,c) adjacent.
	if p, want := Proximity([]string{"a", "b", "c"}, []string{"a", "b", "c"}), (1+0.25+1)/3.0; math.Abs(p-want) > 1e-12 {
		t.Errorf("three adjacent terms: %v, want %v", p, want)
	}
}

func TestRerankLiftsTheChunkWithTermsTogether(t *testing.T) {
	q := []string{"custom", "theme"}
	texts := [][]string{
		strings.Fields("custom colors for the default theme"), // 4 apart
		strings.Fields("using a custom theme"),                // adjacent
		strings.Fields("custom"),
	}
	ranked := []store.Scored{{ChunkID: 10, Score: 5}, {ChunkID: 11, Score: 4.5}, {ChunkID: 12, Score: 4}}
	p := DefaultParams()
	p.Prox, p.HeadProx = 0.3, 0
	got := Rerank(p, q, ranked, func(i int) ([]string, []string) { return nil, texts[i] })
	if got[0].ChunkID != 11 {
		t.Errorf("Rerank = %v: the chunk with the terms adjacent should come first", got)
	}
	if math.Abs(got[0].Score-4.5*1.3) > 1e-12 {
		t.Errorf("adjacent chunk scored %v, want %v", got[0].Score, 4.5*1.3)
	}
	off := DefaultParams()
	off.Prox, off.HeadProx = 0, 0
	again := []store.Scored{{ChunkID: 10, Score: 5}, {ChunkID: 11, Score: 4.5}}
	if r := Rerank(off, q, again, func(i int) ([]string, []string) { return texts[i], texts[i] }); r[0].ChunkID != 10 || r[0].Score != 5 {
		t.Errorf("prox=0 changed the ranking: %v", r)
	}
}

func TestRerankHeadProximityFavoursTheTitleThatNamesTheQuery(t *testing.T) {
	// Chunk 20 mentions both terms far apart in a body that scores higher;
	// chunk 21's title is "Using a Custom Theme".
	q := []string{"custom", "theme"}
	heads := [][]string{strings.Fields("default theme only pageclass"), strings.Fields("use custom theme")}
	alls := [][]string{strings.Fields("custom a b c d e f g h i j theme"), strings.Fields("use custom theme build layout")}
	p := Params{Prox: 0.1, HeadProx: 1, ProxTop: 20}
	got := Rerank(p, q, []store.Scored{{ChunkID: 20, Score: 6}, {ChunkID: 21, Score: 5}}, func(i int) ([]string, []string) { return heads[i], alls[i] })
	if got[0].ChunkID != 21 {
		t.Fatalf("Rerank = %v: the chunk titled with the query's terms should come first", got)
	}
	// 5 · (1 + 0.1·1 + 1·1) for 21; 6 · (1 + 0.1/121) for 20.
	if math.Abs(got[0].Score-10.5) > 1e-9 || math.Abs(got[1].Score-6*(1+0.1/121)) > 1e-9 {
		t.Errorf("scores %v, want 10.5 and %v", got, 6*(1+0.1/121))
	}
}

func TestParamsRoundTripAndErrors(t *testing.T) {
	p := DefaultParams()
	got, err := ParseParams(p.String())
	if err != nil || got != p {
		t.Fatalf("ParseParams(%q) = %+v, %v; want %+v", p.String(), got, err, p)
	}
	for _, bad := range []string{
		"",
		"bm25/1 k1=1.2",
		"bm25f/1 k1=x",
		"bm25f/1 w=1,2",
		"bm25f/1 b=0.5,0.5,1.5",
		"bm25f/1 top=-1",
		"bm25f/1 color=red",
		"bm25f/1 k1",
	} {
		if _, err := ParseParams(bad); err == nil {
			t.Errorf("ParseParams(%q) accepted it", bad)
		}
	}
}

func TestDecodeRejectsBadFieldMask(t *testing.T) {
	if _, err := DecodeAll([]byte{1, 0}); err == nil {
		t.Error("a posting with no field decoded")
	}
	if _, err := DecodeAll([]byte{1, 0x10, 1, 1}); err == nil {
		t.Error("a posting with an unknown field decoded")
	}
}
