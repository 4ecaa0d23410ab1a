package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/eval"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/postgres"
	"github.com/sagasu-dev/sagasu/internal/store/postgres/pgtest"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

const dim = 32

func openSQLite(t *testing.T, name string) store.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), name), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(t *testing.T, dsn string) store.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// docs is a corpus with repeated passages, so many hits tie on score and
// their order depends on chunk IDs.
func docs(n int) []doc.Document {
	words := strings.Fields("granite harbor lantern meadow orchard signal copper violet river 設定 ファイル テーマ")
	var out []doc.Document
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Doc %d\n\n", i%7)
		for p := range 2 + i%3 {
			fmt.Fprintf(&b, "## Part %d\n\n", p)
			for w := range 10 {
				b.WriteString(words[(i%9+p*2+w*5)%len(words)] + " ")
			}
			b.WriteString("\n\n")
		}
		out = append(out, doc.Document{URI: fmt.Sprintf("docs/%03d.md", i), Type: doc.TypeFile, Format: doc.FormatMarkdown,
			Title: fmt.Sprintf("Doc %d", i%7), Content: b.String()})
	}
	out = append(out, doc.Document{URI: "docs/empty.md", Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Empty", Content: ""})
	return out
}

// build indexes ds into s with embeddings, as `sagasu index --embedder` does,
// then changes and deletes a few sources so chunk IDs have gaps.
func build(t *testing.T, s store.Store, ds []doc.Document) {
	t.Helper()
	ctx := context.Background()
	if err := s.InitVectors(ctx, dim); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta(ctx, MetaEmbedder, fmt.Sprintf(`{"driver":"test","model":"hashing","dim":%d}`, dim)); err != nil {
		t.Fatal(err)
	}
	opt := index.Options{Chunk: chunk.Options{MaxTokens: 64}, BatchBytes: 3000, Embedder: embedtest.New(dim)}
	if _, err := index.New(s, opt).Documents(ctx, ds); err != nil {
		t.Fatal(err)
	}
	changed := slices.Clone(ds[:5])
	for i := range changed {
		changed[i].Content += "\n\nAn added river paragraph.\n"
	}
	if _, err := index.New(s, opt).Documents(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, []string{doc.SourceID(ds[7].URI), doc.SourceID(ds[8].URI)}); err != nil {
		t.Fatal(err)
	}
}

var queries = []string{"granite harbor", "設定ファイル", "doc 3", "river", "part 1 lantern", "テーマ violet copper", "added paragraph"}

// same checks that b answers keyword and vector queries exactly as a does.
func same(t *testing.T, a, b store.Store) {
	t.Helper()
	ctx := context.Background()
	n, err := Verify(ctx, a, b, queries, 50)
	if err != nil || n != len(queries) {
		t.Fatalf("keyword results: %d of %d same, %v", n, len(queries), err)
	}
	e := embedtest.New(dim)
	for _, q := range queries {
		v, _ := e.EmbedQuery(ctx, q)
		ra, err := a.VectorSearch(ctx, v, 10, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.VectorSearch(ctx, v, 10, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		na, _ := Named(ctx, a, ra)
		nb, _ := Named(ctx, b, rb)
		if !sameNeighbours(na, nb) {
			t.Errorf("vector results for %q differ:\n%v\n%v", q, na, nb)
		}
	}
}

// sameNeighbours compares vector search results. The vectors are copied bit
// for bit, but stores compute cosine distance with different float
// rounding (pgvector in single precision), and hits at equal distance may
// come in any order; so scores must agree to 1e-6, the hits above the last
// score must be the same set, and as many must tie at the last score.
func sameNeighbours(a, b []Result) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	const eps = 1e-6
	last := a[len(a)-1].Score
	for i := range a {
		if abs(a[i].Score-b[i].Score) > eps {
			return false
		}
		if a[i].Score <= last+eps {
			continue // a tie at the cut: either store may keep either hit
		}
		if !slices.ContainsFunc(b, func(r Result) bool {
			return r.URI == a[i].URI && r.Chunk == a[i].Chunk && abs(r.Score-a[i].Score) <= eps
		}) {
			return false
		}
	}
	return true
}

func abs(x float64) float64 { return max(x, -x) }

func TestCopyBetweenSQLiteIndexes(t *testing.T) {
	ctx := context.Background()
	from, to := openSQLite(t, "from.db"), openSQLite(t, "to.db")
	ds := docs(60)
	build(t, from, ds)
	addRuns(t, from)
	var seen []Progress
	rep, err := Copy(ctx, from, to, Options{Verify: 20, BatchBytes: 2000, Progress: func(p Progress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sources != len(ds)-2 || rep.Copied != rep.Sources || rep.Skipped != 0 || rep.Verified == 0 || rep.Vectors == 0 || rep.Runs != 2 || rep.Events != 1203 {
		t.Errorf("report %+v", rep)
	}
	if len(seen) < 3 || seen[len(seen)-1].Done != rep.Sources {
		t.Errorf("progress %v", seen)
	}
	same(t, from, to)
	sameRuns(t, from, to)
	pin, _ := to.Meta(ctx, MetaEmbedder)
	if !strings.Contains(pin, `"dim":32`) {
		t.Errorf("pinned embedder not copied: %q", pin)
	}
	content, err := to.Content(ctx, doc.SourceID(ds[0].URI))
	if err != nil || !strings.HasSuffix(content, "An added river paragraph.\n") {
		t.Errorf("original content not copied: %q, %v", content, err)
	}
	// A second run finds everything in place.
	rep, err = Copy(ctx, from, to, Options{})
	if err != nil || rep.Copied != 0 || rep.Skipped != rep.Sources || rep.Runs != 0 || rep.Events != 0 {
		t.Errorf("second run: %+v, %v", rep, err)
	}
	// Events appended to the origin since are copied on the next run.
	if _, err := from.AppendEvents(ctx, "chat-1", []store.Event{{Type: "user", Data: json.RawMessage(`"more"`)}}); err != nil {
		t.Fatal(err)
	}
	if err := from.UpdateRun(ctx, "agent-1", store.RunUpdate{Status: "done"}); err != nil {
		t.Fatal(err)
	}
	if rep, err = Copy(ctx, from, to, Options{}); err != nil || rep.Runs != 0 || rep.Events != 1 {
		t.Errorf("third run: %+v, %v", rep, err)
	}
	if r, _ := to.Run(ctx, "agent-1"); r.Status != "done" {
		t.Errorf("changed run status not copied: %+v", r)
	}
	if evs, _ := to.Events(ctx, "chat-1", 1200); len(evs) != 1 || evs[0].Seq != 1201 || string(evs[0].Data) != `"more"` {
		t.Errorf("appended event copied as %+v", evs)
	}
}

// addRuns writes a run log: an agent run and a chat thread longer than one
// append of a copy.
func addRuns(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, r := range []store.Run{
		{ID: "agent-1", Kind: store.RunAgent, Title: "plan", Status: "running", Created: at, Meta: json.RawMessage(`{"goal":"g"}`)},
		{ID: "chat-1", Kind: store.RunChat, Title: "questions", Created: at.Add(time.Minute)},
	} {
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AppendEvents(ctx, "agent-1", []store.Event{{Type: "node", Data: json.RawMessage(`{"n":"plan"}`)}, {Type: "node"}, {Type: "done"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 1200 {
		if _, err := s.AppendEvents(ctx, "chat-1", []store.Event{{Type: "user", Time: at.Add(time.Duration(i) * time.Second), Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}}); err != nil {
			t.Fatal(err)
		}
	}
}

// sameRuns checks that two stores hold the same run log, times included.
func sameRuns(t *testing.T, a, b store.Store) {
	t.Helper()
	ctx := context.Background()
	ra, err := a.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ra) != len(rb) {
		t.Fatalf("%d runs, copy has %d", len(ra), len(rb))
	}
	for i := range ra {
		x, y := ra[i], rb[i]
		if x.ID != y.ID || x.Kind != y.Kind || x.Title != y.Title || x.Status != y.Status || !x.Created.Equal(y.Created) ||
			!x.Updated.Equal(y.Updated) || string(x.Meta) != string(y.Meta) {
			t.Errorf("run %d = %+v, copy %+v", i, x, y)
		}
		ea, _ := a.Events(ctx, x.ID, 0)
		eb, _ := b.Events(ctx, x.ID, 0)
		if len(ea) != len(eb) {
			t.Errorf("run %q: %d events, copy has %d", x.ID, len(ea), len(eb))
			continue
		}
		for j := range ea {
			if ea[j].Seq != eb[j].Seq || ea[j].Type != eb[j].Type || !ea[j].Time.Equal(eb[j].Time) || string(ea[j].Data) != string(eb[j].Data) {
				t.Errorf("run %q event %d = %+v, copy %+v", x.ID, j, ea[j], eb[j])
				break
			}
		}
	}
}

// failingStore fails the Nth Replace, as a lost server or a full disk would.
type failingStore struct {
	store.Store
	n, calls int
}

func (f *failingStore) Replace(ctx context.Context, batch []store.SourceData) error {
	if f.calls++; f.calls == f.n {
		return errors.New("disk full")
	}
	return f.Store.Replace(ctx, batch)
}

func TestCopyResumes(t *testing.T) {
	ctx := context.Background()
	from, to := openSQLite(t, "from.db"), openSQLite(t, "to.db")
	build(t, from, docs(60))
	_, err := Copy(ctx, from, &failingStore{Store: to, n: 3}, Options{BatchBytes: 1500})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Copy into a failing store = %v", err)
	}
	rep, err := Copy(ctx, from, to, Options{BatchBytes: 1500, Verify: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skipped == 0 || rep.Copied == 0 || rep.Skipped+rep.Copied != rep.Sources {
		t.Errorf("resumed copy: %+v", rep)
	}
	same(t, from, to)
}

func TestCopyRefusesAnotherEmbedder(t *testing.T) {
	ctx := context.Background()
	from := openSQLite(t, "from.db")
	build(t, from, docs(10))

	other := openSQLite(t, "other.db")
	if err := other.InitVectors(ctx, dim+1); err != nil {
		t.Fatal(err)
	}
	if err := other.SetMeta(ctx, MetaEmbedder, `{"driver":"test","model":"bigger","dim":33}`); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(ctx, from, other, Options{}); err == nil || !strings.Contains(err.Error(), "pinned to embedder") {
		t.Errorf("Copy into an index pinned to another embedder = %v", err)
	}
	// Vectors of another size, without a pin: the dimension check refuses.
	unpinned := openSQLite(t, "unpinned.db")
	if err := unpinned.InitVectors(ctx, dim+1); err != nil {
		t.Fatal(err)
	}
	_, err := Copy(ctx, from, unpinned, Options{})
	if err == nil || !strings.Contains(err.Error(), "33-dimensional") {
		t.Errorf("Copy into an index of another dimension = %v", err)
	}
	for _, s := range []store.Store{other, unpinned} {
		if st, _ := s.Stats(ctx); st.Sources != 0 {
			t.Errorf("a refused copy wrote %d sources", st.Sources)
		}
	}
}

func TestCopyKeepsOrPrunesExtraSources(t *testing.T) {
	ctx := context.Background()
	from, to := openSQLite(t, "from.db"), openSQLite(t, "to.db")
	build(t, from, docs(10))
	if err := to.Replace(ctx, []store.SourceData{{Source: doc.Source{ID: doc.SourceID("mine.txt"), URI: "mine.txt", Type: doc.TypeFile, Format: doc.FormatText, ContentHash: doc.ContentHash("x")}, Content: "x"}}); err != nil {
		t.Fatal(err)
	}
	rep, err := Copy(ctx, from, to, Options{Verify: 5})
	if err != nil || rep.Extra != 1 || rep.Verified != 0 {
		t.Errorf("copy with an extra source: %+v, %v", rep, err)
	}
	rep, err = Copy(ctx, from, to, Options{Prune: true, Verify: 5})
	if err != nil || rep.Pruned != 1 || rep.Verified == 0 {
		t.Errorf("copy with --prune: %+v, %v", rep, err)
	}
	same(t, from, to)
}

func TestRoundTripThroughPostgres(t *testing.T) {
	ctx := context.Background()
	pg := openPostgres(t, pgtest.FreshDSN(t))
	from, back := openSQLite(t, "from.db"), openSQLite(t, "back.db")
	build(t, from, docs(80))
	addRuns(t, from)
	if _, err := Copy(ctx, from, pg, Options{Verify: 30, BatchBytes: 2500}); err != nil {
		t.Fatalf("SQLite → PostgreSQL: %v", err)
	}
	same(t, from, pg)
	sameRuns(t, from, pg)
	if _, err := Copy(ctx, pg, back, Options{Verify: 30}); err != nil {
		t.Fatalf("PostgreSQL → SQLite: %v", err)
	}
	same(t, from, back)
	sameRuns(t, from, back)
}

// TestSciFactRoundTrip migrates the SciFact index SQLite → PostgreSQL →
// SQLite and compares the top 10 of all 300 test queries in the three
// stores. It needs the dataset (SAGASU_SCIFACT, e.g. ../shared/data/scifact)
// and a server, and takes a minute.
func TestSciFactRoundTrip(t *testing.T) {
	dir := testenv.SciFact(t)
	ctx := context.Background()
	pg := openPostgres(t, pgtest.FreshDSN(t))
	ds, err := eval.LoadBEIR(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	orig, back := openSQLite(t, "orig.db"), openSQLite(t, "back.db")
	ix := index.New(orig, index.Options{Chunk: chunk.Options{MaxTokens: 512, Overlap: 64}})
	if _, err := eval.IndexDataset(ctx, ix, ds); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(ctx, orig, pg, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(ctx, pg, back, Options{}); err != nil {
		t.Fatal(err)
	}
	var qs []string
	for id := range ds.Qrels {
		if q, ok := ds.Queries[id]; ok {
			qs = append(qs, q)
		}
	}
	sort.Strings(qs)
	for _, s := range []struct {
		name string
		st   store.Store
	}{{"PostgreSQL", pg}, {"SQLite after the round trip", back}} {
		n, err := Verify(ctx, orig, s.st, qs, 10)
		if err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
		t.Logf("%s: top 10 identical (URI, chunk, score) for %d of %d queries", s.name, n, len(qs))
	}
}
