package qdrant

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
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

// TestWeightIsBM25F: a term found only in the body weighs what classic
// BM25 gives it; the same occurrence in the title weighs more, by the
// title's field weight before saturation; the field lengths normalise each
// field on its own.
func TestWeightIsBM25F(t *testing.T) {
	p := bm25.DefaultParams()
	avg := [bm25.NumFields]float64{3, 5, 48.7}
	dl := [bm25.NumFields]uint32{4, 2, 60}
	for _, tf := range []uint32{1, 2, 7} {
		got := weight(p, [bm25.NumFields]uint32{bm25.Body: tf}, dl, avg)
		x := float64(tf)
		b := p.B[bm25.Body]
		want := x * (p.K1 + 1) / (x + p.K1*(1-b+b*float64(dl[bm25.Body])/avg[bm25.Body]))
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("body tf %d: weight %v, classic BM25 %v", tf, got, want)
		}
		title := weight(p, [bm25.NumFields]uint32{bm25.Title: tf}, dl, avg)
		if title <= got {
			t.Errorf("tf %d: in the title %v, in the body %v: the title should weigh more", tf, title, got)
		}
	}
	longer := dl
	longer[bm25.Title] = 40
	if a, b := weight(p, [bm25.NumFields]uint32{bm25.Title: 1}, dl, avg), weight(p, [bm25.NumFields]uint32{bm25.Title: 1}, longer, avg); b >= a {
		t.Errorf("a longer title should dilute a title term: %v for 4 terms, %v for 40", a, b)
	}
	if a, b := weight(p, [bm25.NumFields]uint32{bm25.Body: 1}, dl, avg), weight(p, [bm25.NumFields]uint32{bm25.Body: 1}, longer, avg); a != b {
		t.Errorf("the title's length changed a body term's weight: %v and %v", a, b)
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
	p := bm25.DefaultParams()
	avg := [bm25.NumFields]float64{1, 1, 4}
	c := bm25.Count([bm25.NumFields][]string{bm25.Body: {a, b, b, "cat"}})
	idx, val := sparseWeights(c, p, avg)
	if len(idx) != 2 || idx[0] >= idx[1] {
		t.Fatalf("dimensions %v: want 2, sorted, for 3 terms of which 2 share one", idx)
	}
	one := func(n uint32) float64 {
		return weight(p, [bm25.NumFields]uint32{bm25.Body: n}, c.Len, avg)
	}
	for i, d := range idx {
		want := one(1)
		if d == termDim(a) {
			want = one(1) + one(2)
		}
		if math.Abs(float64(val[i])-want) > 1e-6 {
			t.Errorf("dimension %d weight %v, want %v", d, val[i], want)
		}
	}
}

// TestRescoreIsBM25F: candidates written under old average field lengths
// are rescored to exactly what bm25.Score (the SQL stores' scorer) gives
// with the same parameters, the defaults and others.
func TestRescoreIsBM25F(t *testing.T) {
	an := analyze.New(analyze.Options{})
	batch := storetest.EmbeddedCorpus(t)
	analysed := segment.Analyse(an, batch)
	b := bm25.NewBuilder()
	var st corpusStats
	id := int64(0)
	type written struct {
		sd store.SourceData
		c  doc.Chunk
		a  segment.Analysed
		id int64
	}
	var chunks []written
	for i, sd := range batch {
		for j, c := range sd.Chunks {
			id++
			a := analysed[i][j]
			b.AddCounts(uint64(id), a.Counts)
			st.Docs++
			for f, n := range a.Counts.Len {
				st.Tokens[f] += int64(n)
			}
			chunks = append(chunks, written{sd, c, a, id})
		}
	}
	stale := st.avgdl()
	for f := range stale {
		stale[f] *= 0.6 // as if written when chunks were shorter on average
	}
	other := bm25.DefaultParams()
	other.K1, other.Weight, other.B = 0.9, [bm25.NumFields]float64{2, 3, 1}, [bm25.NumFields]float64{0.3, 1, 0.6}
	for pi, p := range []bm25.Params{bm25.DefaultParams(), other, bm25.DefaultParams(), other} {
		compact := pi >= 2 // schema 3 payloads ("fc"), else schema 2 ones
		var pts []*qdrant.ScoredPoint
		for _, w := range chunks {
			pt := chunkPoint(w.sd, w.c, w.a, w.id, "g", p, stale, compact)
			pts = append(pts, &qdrant.ScoredPoint{Id: pt.Id, Payload: pt.Payload})
		}
		for _, q := range []string{"cat", "a cat and a dog", "revenue growth subscriptions", "設定", "cats routing"} {
			terms := slices.Compact(slices.Sorted(slices.Values(an.QueryTerms(q))))
			df := map[string]int{}
			var lists []bm25.List
			for _, term := range terms {
				data, n := b.Encoded(term, 0)
				df[term] = n
				if n > 0 {
					lists = append(lists, bm25.List{Term: term, Data: [][]byte{data}})
				}
			}
			want, err := bm25.Score(p, bm25.Corpus{Docs: st.Docs, Tokens: st.Tokens}, lists, 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := rescore(pts, terms, df, st, p, 5)
			if len(want) == 0 && q != "a cat and a dog" {
				t.Errorf("%q: the reference finds nothing; the test corpus should match it", q)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s %q: rescored %v, bm25.Score %v", p, q, got, want)
			}
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
	_, err = openDriver(context.Background(), "qdrant://"+addr+"/x", Options{Timeout: 3 * time.Second})
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
	_, err := openDriver(context.Background(), "qdrant://"+addr+"/x", Options{Timeout: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "answers HTTP/1.1, not gRPC") || !strings.Contains(err.Error(), addr) {
		t.Errorf("Open on an HTTP port = %v; want a message that names %s and the gRPC port", err, addr)
	}
	t.Logf("the user reads: %v", err)
}
