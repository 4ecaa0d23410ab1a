package qdrant

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
)

func TestParseDSN(t *testing.T) {
	for _, tc := range []struct {
		dsn     string
		want    Settings
		wantErr string
	}{
		{dsn: "qdrant://127.0.0.1:6334/scifact", want: Settings{Host: "127.0.0.1", Port: 6334, Prefix: "scifact", Keyword: KeywordExact, Oversample: 3}},
		{dsn: "qdrant://qdrant.internal", want: Settings{Host: "qdrant.internal", Port: 6334, Prefix: "sagasu", Keyword: KeywordExact, Oversample: 3}},
		{dsn: "qdrant://[::1]:7000/team-docs?tls=true&keyword=qdrant&oversample=5", want: Settings{Host: "::1", Port: 7000, Prefix: "team-docs", TLS: true, Keyword: KeywordQdrant, Oversample: 5}},
		{dsn: "http://127.0.0.1:6334", wantErr: "want qdrant://host:port/collection-prefix"},
		{dsn: "qdrant:///prefix", wantErr: "want qdrant://host:port/collection-prefix"},
		{dsn: "qdrant://key:secret@h:6334/p", wantErr: "set QDRANT_API_KEY instead"},
		{dsn: "qdrant://h:http/p", wantErr: "want qdrant://host:port"},
		{dsn: "qdrant://h:99999/p", wantErr: "not a port number"},
		{dsn: "qdrant://h:6334/a/b", wantErr: `collection prefix "a/b"`},
		{dsn: "qdrant://h:6334/p?keyword=bm25", wantErr: "keyword=\"bm25\" must be exact or qdrant"},
		{dsn: "qdrant://h:6334/p?oversample=0", wantErr: "oversample=\"0\" must be a number from 1 to 100"},
		{dsn: "qdrant://h:6334/p?tls=yes", wantErr: "tls=\"yes\" must be true or false"},
		{dsn: "qdrant://h:6334/p?schema=x", wantErr: `unknown option "schema"`},
	} {
		t.Run(tc.dsn, func(t *testing.T) {
			got, err := ParseDSN(tc.dsn)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseDSN(%q) error = %v, want one containing %q", tc.dsn, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseDSN(%q) = %+v, %v; want %+v", tc.dsn, got, err, tc.want)
			}
		})
	}
}

func TestUUIDOf(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := uuidOf("source", "abc").GetUuid(), uuidOf("source", "abc").GetUuid()
	if a != b || !re.MatchString(a) {
		t.Errorf("uuidOf = %q and %q, want one stable RFC 4122 version-8 UUID", a, b)
	}
	if uuidOf("run", "abc").GetUuid() == a || uuidOf("source", "abd").GetUuid() == a {
		t.Errorf("different kinds or keys share a point ID")
	}
}

// TestWeightGivesBackTF: exact ranking reads each term's frequency back
// from the float32 weight Qdrant stores, for any length and average.
func TestWeightGivesBackTF(t *testing.T) {
	for _, dl := range []float64{1, 7, 60, 900} {
		for _, avg := range []float64{2.5, 48.7, 700} {
			for tf := 1.0; tf <= min(dl, 300); tf++ {
				w := float32(weight(tf, dl, avg))
				if got := math.Round(tfOf(float64(w), dl, avg)); got != tf {
					t.Fatalf("tf %v, dl %v, avg %v: weight %v gives back tf %v", tf, dl, avg, w, got)
				}
			}
		}
	}
}

func TestSparseWeightsMergeSharedDimensions(t *testing.T) {
	// Find two terms that share a dimension.
	seen := map[uint32]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		term := fmt.Sprintf("t%d", i)
		d := termDim(term)
		if other, ok := seen[d]; ok {
			a, b = other, term
		}
		seen[d] = term
	}
	c := bm25.Count([]string{a, b, b, "cat"})
	idx, val := sparseWeights(c, 4)
	if len(idx) != 2 || idx[0] >= idx[1] {
		t.Fatalf("dimensions %v: want 2, sorted, for 3 terms of which 2 share one", idx)
	}
	for i, d := range idx {
		want := weight(1, 4, 4)
		if d == termDim(a) {
			want = weight(1, 4, 4) + weight(2, 4, 4)
		}
		if math.Abs(float64(val[i])-want) > 1e-6 {
			t.Errorf("dimension %d weight %v, want %v", d, val[i], want)
		}
	}
}

// TestRescoreIsBM25: candidates written under an old average length are
// rescored to exactly what bm25.Score (the SQL stores' scorer) gives.
func TestRescoreIsBM25(t *testing.T) {
	an := analyze.New(analyze.Options{})
	var docs []bm25.Counts
	for _, sd := range storetest.EmbeddedCorpus(t) {
		for _, c := range sd.Chunks {
			docs = append(docs, bm25.Count(an.Terms(doc.ContextText(sd.Source.Title, c))))
		}
	}
	b := bm25.NewBuilder()
	var st corpusStats
	for i, c := range docs {
		b.AddCounts(uint64(i+1), c)
		st.Docs++
		st.Tokens += int64(c.Len)
	}
	staleAvg := st.avgdl() * 0.6 // as if written when chunks were shorter on average
	var pts []*qdrant.ScoredPoint
	for i, c := range docs {
		idx, val := sparseWeights(c, staleAvg)
		pts = append(pts, &qdrant.ScoredPoint{
			Id:      numID(int64(i + 1)),
			Payload: map[string]*qdrant.Value{"len": vint(int64(c.Len)), "avg": vflt(staleAvg)},
			Vectors: &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{
				Vectors: map[string]*qdrant.VectorOutput{sparseName: {Vector: &qdrant.VectorOutput_Sparse{Sparse: &qdrant.SparseVector{Indices: idx, Values: val}}}},
			}}},
		})
	}
	for _, q := range []string{"cat", "a cat and a dog", "revenue growth subscriptions", "設定"} {
		terms := queryTerms(an.QueryTerms(q))
		df := map[string]int{}
		var lists []bm25.List
		for _, term := range terms {
			ps := b.Postings(term)
			df[term] = len(ps)
			if len(ps) > 0 {
				lists = append(lists, bm25.List{Term: term, Data: [][]byte{bm25.Encode(nil, ps)}})
			}
		}
		want, err := bm25.Score(bm25.Corpus{Docs: st.Docs, Tokens: st.Tokens}, lists, 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := rescore(pts, terms, df, st, 5)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: rescored %v, bm25.Score %v", q, got, want)
		}
	}
}

// TestOpenServerDown: nothing listens on the port.
func TestOpenServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = Open(context.Background(), "qdrant://"+addr+"/x", Options{Timeout: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot reach Qdrant at "+addr) || !strings.Contains(err.Error(), "is the server running") {
		t.Errorf("Open with no server = %v; want a message naming %s and what to check", err, addr)
	}
	t.Logf("the user reads: %v", err)
}

// TestOpenWrongPort: the port answers HTTP/1 (as Qdrant's REST port does),
// not gRPC.
func TestOpenWrongPort(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"title":"qdrant"}`, http.StatusNotFound)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	_, err := Open(context.Background(), "qdrant://"+addr+"/x", Options{Timeout: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "answers HTTP/1.1, not gRPC") || !strings.Contains(err.Error(), addr) {
		t.Errorf("Open on an HTTP port = %v; want a message that names %s and the gRPC port", err, addr)
	}
	t.Logf("the user reads: %v", err)
}
