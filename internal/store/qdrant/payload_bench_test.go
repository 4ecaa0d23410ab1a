package qdrant

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

// candidates returns n chunks of about 180 words each over a Zipf
// vocabulary (about 110 distinct terms a chunk, as abstracts have), as
// the scored points exact keyword search receives with the fields it asks
// for, marshalled as the server sends them.
func candidates(tb testing.TB, n int, compact bool) (wire []byte, st corpusStats, terms []string, df map[string]int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(rng, 1.07, 2, 20000)
	an := analyze.New(analyze.Options{})
	var batch []store.SourceData
	for i := range n {
		var words []string
		for range 180 {
			words = append(words, fmt.Sprintf("w%d", z.Uint64()))
		}
		batch = append(batch, storetest.Source(fmt.Sprintf("c%d.md", i), doc.TypeFile, fmt.Sprintf("Title w%d", i), strings.Join(words, " ")))
	}
	analysed := segment.Analyse(an, batch)
	for i := range batch {
		st.Docs++
		for f, l := range analysed[i][0].Counts.Len {
			st.Tokens[f] += int64(l)
		}
	}
	resp := &qdrant.QueryResponse{}
	for i, sd := range batch {
		pt := chunkPoint(sd, sd.Chunks[0], analysed[i][0], int64(i+1), "g", bm25.DefaultParams(), st.avgdl(), compact)
		pl := map[string]*qdrant.Value{}
		for _, k := range exactFields(compact) {
			if v, ok := pt.Payload[k]; ok {
				pl[k] = v
			}
		}
		resp.Result = append(resp.Result, &qdrant.ScoredPoint{Id: pt.Id, Payload: pl, Score: 1})
	}
	wire, err := proto.Marshal(resp)
	if err != nil {
		tb.Fatal(err)
	}
	terms = []string{"w3", "w40", "w7", "w1200", "w95", "w18"}
	df = map[string]int{}
	for _, t := range terms {
		df[t] = 1 + rng.IntN(n)
	}
	return wire, st, terms, df
}

// BenchmarkExactRescore times what exact keyword search does with the
// server's answer of 300 candidates: decode the response and rescore the
// candidates from their payloads, in a schema 2 collection (per-term
// values) and a schema 3 one ("fc").
func BenchmarkExactRescore(b *testing.B) {
	for _, compact := range []bool{false, true} {
		b.Run(fmt.Sprintf("schema%d", map[bool]int{false: 2, true: 3}[compact]), func(b *testing.B) {
			wire, st, terms, df := candidates(b, 300, compact)
			b.SetBytes(int64(len(wire)))
			b.ReportAllocs()
			for b.Loop() {
				var resp qdrant.QueryResponse
				if err := proto.Unmarshal(wire, &resp); err != nil {
					b.Fatal(err)
				}
				if got := rescore(resp.Result, terms, df, st, bm25.DefaultParams(), 10); len(got) != 10 {
					b.Fatalf("%d hits", len(got))
				}
			}
		})
	}
}

// TestRescoreReadsBothLayouts rescores the same candidates from schema 2
// payloads and from "fc": the same chunks with bit-identical scores.
func TestRescoreReadsBothLayouts(t *testing.T) {
	var got [2][]store.Scored
	for i, compact := range []bool{false, true} {
		wire, st, terms, df := candidates(t, 300, compact)
		var resp qdrant.QueryResponse
		if err := proto.Unmarshal(wire, &resp); err != nil {
			t.Fatal(err)
		}
		got[i] = rescore(resp.Result, terms, df, st, bm25.DefaultParams(), 50)
	}
	if len(got[0]) != 50 || fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
		t.Fatalf("schema 2 payloads rank\n%v\nfc payloads\n%v", got[0], got[1])
	}
}
