package qdrant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/migrate"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// Env names the Qdrant server the tests use: its gRPC address as
// http://host:port (or host:port); "model" runs them on the in-process
// model of model_test.go instead, which checks only the driver's logic.
const Env = "SAGASU_TEST_QDRANT"

// What the tests log for scripts/testreport, which says "Qdrant server:
// not tested" unless a test that passed logged reportServer.
const (
	reportServer = "Qdrant server: tested at"
	reportModel  = "Qdrant server: not tested (this test ran on the in-process model)"
)

// onModel reports whether the tests run on the in-process model.
func onModel() bool { v := os.Getenv(Env); return v == "" || v == "model" }

// testServer returns the test server's host and gRPC port: the server
// SAGASU_TEST_QDRANT names, or the in-process model when it is unset.
func testServer(t *testing.T) (string, int) {
	t.Helper()
	v := os.Getenv(Env)
	if v == "" {
		// No server (CI has none): the driver's logic still runs through
		// the whole suite, on the in-process model.
		t.Logf("%s is not set: running on the in-process model of Qdrant's API; start a Qdrant server and run `%s=http://127.0.0.1:6334 go test ./internal/store/qdrant` (its gRPC port) to test the real server", Env, Env)
		v = "model"
	}
	if v == "model" {
		// The in-process model (model_test.go): checks the driver's logic
		// only, never the real server's behaviour.
		t.Log(reportModel)
		v = startModel(t)
	} else {
		t.Logf(reportServer+" %s", v)
	}
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	u, err := url.Parse(v)
	if err != nil || u.Hostname() == "" {
		t.Fatalf("%s=%q: want http://host:port", Env, os.Getenv(Env))
	}
	port := 6334
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	return u.Hostname(), port
}

// rawClient is a plain client for looking behind the driver's back.
func rawClient(t *testing.T, host string, port int) *qdrant.Client {
	t.Helper()
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: port, SkipCompatibilityCheck: true, APIKey: os.Getenv("QDRANT_API_KEY")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// freshDSN returns a DSN with a new collection prefix, whose collections
// are dropped when the test ends.
func freshDSN(t *testing.T, params string) string {
	t.Helper()
	host, port := testServer(t)
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	prefix := "sagasu_test_" + hex.EncodeToString(b)
	c := rawClient(t, host, port)
	t.Cleanup(func() {
		ctx := context.Background()
		names, err := c.ListCollections(ctx)
		if err != nil {
			t.Errorf("list collections: %v", err)
			return
		}
		for _, n := range names {
			if strings.HasPrefix(n, prefix+"_") {
				if err := c.DeleteCollection(ctx, n); err != nil {
					t.Errorf("drop %s: %v", n, err)
				}
			}
		}
	})
	dsn := fmt.Sprintf("qdrant://%s/%s", netJoin(host, port), prefix)
	if params != "" {
		dsn += "?" + params
	}
	return dsn
}

func netJoin(host string, port int) string {
	if strings.Contains(host, ":") {
		return fmt.Sprintf("[%s]:%d", host, port)
	}
	return fmt.Sprintf("%s:%d", host, port)
}

func openStore(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := openDriver(context.Background(), dsn, Options{Create: true, APIKey: os.Getenv("QDRANT_API_KEY")})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	testServer(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		s := openStore(t, freshDSN(t, ""))
		t.Logf("Qdrant %s", s.Version())
		return store.New(s)
	})
}

// TestConformanceQdrantRanking runs the suite on Qdrant's own scores
// (keyword=qdrant): they are not BM25F's wherever the average field lengths
// changed after a chunk was written, so only ranks are checked there. With
// full checks, Delete, DeleteChunksWithoutTerms and RenameSource (its
// check after deleting the renamed source) fail: survivors keep weights
// normalised by the averages from before the delete.
func TestConformanceQdrantRanking(t *testing.T) {
	testServer(t)
	storetest.RunWith(t, func(t *testing.T) store.Store {
		return store.New(openStore(t, freshDSN(t, "keyword=qdrant")))
	}, storetest.Options{RankOnlyKeyword: true})
}

func TestNoIndexWithoutCreate(t *testing.T) {
	dsn := freshDSN(t, "")
	_, err := openDriver(context.Background(), dsn, Options{APIKey: os.Getenv("QDRANT_API_KEY")})
	if !errors.Is(err, ErrNoIndex) || !strings.Contains(err.Error(), "sagasu index --db") {
		t.Errorf("Open without Create on an empty prefix = %v; want ErrNoIndex saying to index first", err)
	}
	t.Logf("the user reads: %v", err)
}

// TestRefusesForeignCollections: a collection under the prefix that sagasu
// did not make is refused, and left as it was.
func TestRefusesForeignCollections(t *testing.T) {
	ctx := context.Background()
	for _, role := range []string{roleMeta, roleChunks} {
		t.Run(role, func(t *testing.T) {
			dsn := freshDSN(t, "")
			set, _ := ParseDSN(dsn)
			c := rawClient(t, set.Host, set.Port)
			name := set.Prefix + "_" + role
			if err := c.CreateCollection(ctx, &qdrant.CreateCollection{
				CollectionName: name,
				VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 4, Distance: qdrant.Distance_Dot}),
			}); err != nil {
				t.Fatal(err)
			}
			wait := true
			if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: name, Wait: &wait, Points: []*qdrant.PointStruct{{
				Id: qdrant.NewIDNum(7), Vectors: qdrant.NewVectors(1, 2, 3, 4), Payload: qdrant.NewValueMap(map[string]any{"theirs": true}),
			}}}); err != nil {
				t.Fatal(err)
			}
			_, err := openDriver(ctx, dsn, Options{Create: true, APIKey: os.Getenv("QDRANT_API_KEY")})
			if !errors.Is(err, store.ErrForeign) || !strings.Contains(err.Error(), name) {
				t.Fatalf("Open over another tool's %s = %v; want ErrForeign naming it", name, err)
			}
			t.Logf("the user reads: %v", err)
			if n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: name}); err != nil || n != 1 {
				t.Errorf("the foreign collection now has %d points (%v); it must be left alone", n, err)
			}
		})
	}
}

// TestVectorsOfAnotherDimension: an index made with one embedder refuses
// another's dimension, in a later process too, and keeps its vectors.
func TestVectorsOfAnotherDimension(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t, "")
	s := openStore(t, dsn)
	if err := s.InitVectors(ctx, storetest.VectorDim); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, storetest.EmbeddedCorpus(t)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, dsn)
	defer s.Close()
	err := s.InitVectors(ctx, 384)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("holds %d-dimensional vectors", storetest.VectorDim)) {
		t.Fatalf("InitVectors(384) on a %d-dimensional index = %v", storetest.VectorDim, err)
	}
	t.Logf("the user reads: %v", err)
	if st, err := s.Stats(ctx); err != nil || st.Vectors != 9 {
		t.Errorf("after the refusal Stats = %+v, %v; want the 9 vectors kept", st, err)
	}
}

// state renders what a user can see of an index.
func state(t *testing.T, s *Store) string {
	t.Helper()
	ctx := context.Background()
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d sources %d chunks %d bytes %d vectors\n", st.Sources, st.Chunks, st.Bytes, st.Vectors)
	srcs, err := s.Sources(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range srcs {
		chunks, _ := s.Chunks(ctx, src.ID)
		fmt.Fprintf(&b, "%s %s:", src.URI, src.ContentHash)
		for _, c := range chunks {
			fmt.Fprintf(&b, " %q", c.Text)
		}
		b.WriteByte('\n')
	}
	for _, q := range []string{"cat", "carnivores", "zebras", "revenue"} {
		res, err := s.KeywordSearch(ctx, storetest.Terms(q), 10, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		hits, _ := s.Hits(ctx, idsOf(res))
		for i, h := range hits {
			fmt.Fprintf(&b, "%s: %s#%d %.6f\n", q, h.Source.URI, h.Chunk.Index, res[i].Score)
		}
	}
	return b.String()
}

func idsOf(res []store.Scored) []int64 {
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.ChunkID
	}
	return ids
}

// TestCrashRecovery stops a Replace where a crash could, then lets the
// next writer (another process) finish or undo it from the journal.
func TestCrashRecovery(t *testing.T) {
	ctx := context.Background()
	changed := storetest.Source("docs/cats.md", doc.TypeFile, "Cats", "Cats purr.\n\nKittens are young cats.\n\nZebras are not cats.")
	for _, tc := range []struct {
		at   string
		want func(before, clean string) string
	}{
		{"chunks", func(before, _ string) string { return before }}, // not committed: undone
		{"sources", func(_, clean string) string { return clean }},  // committed: finished
	} {
		t.Run(tc.at, func(t *testing.T) {
			// What a clean replace gives, on its own prefix.
			ref := openStore(t, freshDSN(t, ""))
			defer ref.Close()
			if err := ref.InitVectors(ctx, storetest.VectorDim); err != nil {
				t.Fatal(err)
			}
			if err := ref.Replace(ctx, storetest.EmbeddedCorpus(t)[:3]); err != nil {
				t.Fatal(err)
			}
			if err := ref.Replace(ctx, []store.SourceData{changed}); err != nil {
				t.Fatal(err)
			}
			clean := state(t, ref)

			dsn := freshDSN(t, "")
			s := openStore(t, dsn)
			if err := s.InitVectors(ctx, storetest.VectorDim); err != nil {
				t.Fatal(err)
			}
			if err := s.Replace(ctx, storetest.EmbeddedCorpus(t)[:3]); err != nil {
				t.Fatal(err)
			}
			before := state(t, s)
			s.crashAt = tc.at
			if err := s.Replace(ctx, []store.SourceData{changed}); !errors.Is(err, errCrash) {
				t.Fatalf("Replace = %v, want the simulated crash", err)
			}
			s.Close()
			s2 := openStore(t, dsn)
			defer s2.Close()
			if _, err := s2.Delete(ctx, []string{"no-such-source"}); err != nil { // any write recovers
				t.Fatal(err)
			}
			want := tc.want(before, clean)
			if got := state(t, s2); got != want {
				t.Errorf("after a crash at %q and recovery:\n%s\nwant:\n%s", tc.at, got, want)
			}
		})
	}
}

// TestRenameCrashRecovery: a rename that stopped after writing the new
// source record (its commit) is finished by the next write: the index is
// then as a clean rename leaves it, vectors found under the new ID.
func TestRenameCrashRecovery(t *testing.T) {
	ctx := context.Background()
	const to = "/home/user/docs/cats.md"
	from := doc.SourceID("docs/cats.md")
	setup := func(dsn string) *Store {
		s := openStore(t, dsn)
		if err := s.InitVectors(ctx, storetest.VectorDim); err != nil {
			t.Fatal(err)
		}
		if err := s.Replace(ctx, storetest.EmbeddedCorpus(t)[:3]); err != nil {
			t.Fatal(err)
		}
		return s
	}
	ref := setup(freshDSN(t, ""))
	defer ref.Close()
	if _, err := ref.RenameSource(ctx, from, to); err != nil {
		t.Fatal(err)
	}
	clean := state(t, ref)

	dsn := freshDSN(t, "")
	s := setup(dsn)
	s.crashAt = "renamed"
	if _, err := s.RenameSource(ctx, from, to); !errors.Is(err, errCrash) {
		t.Fatalf("RenameSource = %v, want the simulated crash", err)
	}
	s.Close()
	s2 := openStore(t, dsn)
	defer s2.Close()
	if _, err := s2.Delete(ctx, []string{"no-such-source"}); err != nil { // any write recovers
		t.Fatal(err)
	}
	if got := state(t, s2); got != clean {
		t.Errorf("after a crash in a rename and recovery:\n%s\nwant:\n%s", got, clean)
	}
	if _, err := s2.Source(ctx, from); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the old record survived recovery: %v", err)
	}
	q := make([]float32, storetest.VectorDim)
	q[0] = 1
	res, err := s2.VectorSearch(ctx, q, 10, store.Filter{SourceIDs: []string{doc.SourceID(to)}})
	if err != nil || len(res) == 0 {
		t.Errorf("vector search under the new ID after recovery = %v, %v", res, err)
	}
}

// TestLockAcrossStores: two processes' stores on one index; a lock left by
// a crashed writer expires.
func TestLockAcrossStores(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t, "")
	a, b := openStore(t, dsn), openStore(t, dsn)
	defer a.Close()
	defer b.Close()
	unlock, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock(ctx)
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Errorf("second writer's Lock = %v; want ErrLocked naming the holder", err)
	}
	t.Logf("the user reads: %v", err)
	unlock()
	unlockB, err := b.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock after the other released it: %v", err)
	}
	unlockB()
	// A crashed writer's lock: expired, so taken over.
	if err := a.putLock(ctx, "crashed", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx); !errors.Is(err, store.ErrLocked) {
		t.Errorf("Lock over a fresh lock = %v, want ErrLocked", err)
	}
	wait := true
	c := rawClient(t, a.set.Host, a.set.Port)
	if _, err := c.SetPayload(ctx, &qdrant.SetPayloadPoints{
		CollectionName: a.coll(roleMeta), Wait: &wait, PointsSelector: qdrant.NewPointsSelector(lockID),
		Payload: map[string]*qdrant.Value{"expires": vint(time.Now().Add(-time.Second).UnixMilli())},
	}); err != nil {
		t.Fatal(err)
	}
	unlockB, err = b.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock over an expired lock: %v", err)
	}
	unlockB()
}

// TestMigrateThroughQdrant copies a SQLite index into Qdrant and back: the
// keyword results are identical in all three (migrate.Verify compares
// source, chunk and score of every hit).
func TestMigrateThroughQdrant(t *testing.T) {
	ctx := context.Background()
	open := func(name string) store.Store {
		s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), name), sqlite.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	src := open("from.db")
	if err := src.InitVectors(ctx, storetest.VectorDim); err != nil {
		t.Fatal(err)
	}
	var batch []store.SourceData
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	for i := range 60 {
		text := fmt.Sprintf("%s %s note %d about %s.\n\nMore on %s and %s here.", words[i%8], words[(i*3)%8], i, words[(i*5)%8], words[(i*7)%8], words[i%5])
		batch = append(batch, storetest.Source(fmt.Sprintf("notes/%02d.md", i), doc.TypeFile, "Note "+strconv.Itoa(i), text))
	}
	batch = append(batch, storetest.EmbeddedCorpus(t)...)
	for i := range batch[:60] {
		batch[i].Vectors = nil
	}
	if err := src.Replace(ctx, batch[:60]); err != nil {
		t.Fatal(err)
	}
	if err := src.Replace(ctx, batch[60:]); err != nil {
		t.Fatal(err)
	}
	q := openStore(t, freshDSN(t, ""))
	defer q.Close()
	queries := []string{"alpha beta", "theta note", "cat", "a cat and a dog", "revenue", "設定", "more gamma here"}
	if _, err := migrate.Copy(ctx, src, store.New(q), migrate.Options{}); err != nil {
		t.Fatalf("SQLite to Qdrant: %v", err)
	}
	if n, err := migrate.Verify(ctx, src, store.New(q), queries, 10); err != nil || n != len(queries) {
		t.Errorf("SQLite vs Qdrant: %d of %d queries identical: %v", n, len(queries), err)
	}
	back := open("back.db")
	if _, err := migrate.Copy(ctx, store.New(q), back, migrate.Options{}); err != nil {
		t.Fatalf("Qdrant to SQLite: %v", err)
	}
	if n, err := migrate.Verify(ctx, src, back, queries, 10); err != nil || n != len(queries) {
		t.Errorf("SQLite vs SQLite through Qdrant: %d of %d queries identical: %v", n, len(queries), err)
	}
	want, _ := src.Stats(ctx)
	got, _ := back.Stats(ctx)
	want.SizeBytes, got.SizeBytes = 0, 0
	if got != want {
		t.Errorf("after the round trip Stats = %+v, want %+v", got, want)
	}
}

// TestAPIKey needs a second server started with an API key:
// SAGASU_TEST_QDRANT_KEYED=http://host:port and QDRANT_TEST_KEY=<its key>.
func TestAPIKey(t *testing.T) {
	addr, key := os.Getenv("SAGASU_TEST_QDRANT_KEYED"), os.Getenv("QDRANT_TEST_KEY")
	testenv.QdrantServer(t, addr != "" && key != "", "SAGASU_TEST_QDRANT_KEYED and QDRANT_TEST_KEY are not set: start a Qdrant with QDRANT__SERVICE__API_KEY=<key> and set them to its gRPC address and key to test API keys")
	u, err := url.Parse(addr)
	if err != nil {
		t.Fatal(err)
	}
	dsn := "qdrant://" + u.Host + "/sagasu_keytest"
	for _, bad := range []string{"", "wrong-" + key} {
		_, err := openDriver(context.Background(), dsn, Options{Create: true, APIKey: bad})
		if err == nil || !strings.Contains(err.Error(), "refused the API key") || !strings.Contains(err.Error(), "QDRANT_API_KEY") {
			t.Errorf("Open with API key %q = %v; want a refusal that says to set QDRANT_API_KEY", bad, err)
		}
		t.Logf("the user reads: %v", err)
	}
	s, err := openDriver(context.Background(), dsn, Options{Create: true, APIKey: key})
	if err != nil {
		t.Fatalf("Open with the right key: %v", err)
	}
	defer s.Close()
	c, err := qdrant.NewClient(&qdrant.Config{Host: u.Hostname(), Port: s.set.Port, APIKey: key, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, r := range []string{roleMeta, roleSources, roleChunks, roleRuns, roleEvents} {
		_ = c.DeleteCollection(context.Background(), s.coll(r))
	}
}

// TestRefusesSchema1: an index of the plain-BM25 layout is refused with
// what to do, and left alone.
func TestRefusesSchema1(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t, "")
	set, _ := ParseDSN(dsn)
	c := rawClient(t, set.Host, set.Port)
	name := set.Prefix + "_" + roleMeta
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: name,
		Metadata:       map[string]*qdrant.Value{markerKey: qdrant.NewValueString(markerValue), schemaKey: qdrant.NewValueInt(1)},
	}); err != nil {
		t.Fatal(err)
	}
	_, err := openDriver(ctx, dsn, Options{Create: true, APIKey: os.Getenv("QDRANT_API_KEY")})
	if err == nil || !strings.Contains(err.Error(), "schema 1") || !strings.Contains(err.Error(), "sagasu index") {
		t.Fatalf("Open on a schema 1 index = %v; want a refusal that says to index again", err)
	}
	t.Logf("the user reads: %v", err)
	if names, err := c.ListCollections(ctx); err != nil || slices.Contains(names, set.Prefix+"_"+roleChunks) {
		t.Errorf("collections after the refusal: %v, %v; nothing may be created", names, err)
	}
}

// TestScoringParamsPinned: a new index pins bm25.DefaultParams; an index
// whose pinned parameters differ scores with those, in a later process
// too; parameters this sagasu cannot read are refused.
func TestScoringParamsPinned(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t, "")
	s := openStore(t, dsn)
	if v, err := s.Meta(ctx, bm25.MetaKey); err != nil || v != bm25.DefaultParams().String() {
		t.Fatalf("pinned scoring of a new index = %q, %v", v, err)
	}
	other := bm25.DefaultParams()
	other.K1, other.Weight = 2, [bm25.NumFields]float64{1, 1, 1}
	if err := s.SetMeta(ctx, bm25.MetaKey, other.String()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, dsn)
	if err := s.InitVectors(ctx, storetest.VectorDim); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, storetest.EmbeddedCorpus(t)); err != nil {
		t.Fatal(err)
	}
	got, err := s.KeywordSearch(ctx, storetest.Terms("cat"), 3, store.Filter{})
	if err != nil || len(got) == 0 {
		t.Fatalf("keyword search = %v, %v", got, err)
	}
	// The same chunks scored with the defaults rank or score differently.
	if s.params != other {
		t.Errorf("the store scores with %v, %v is pinned", s.params, other)
	}
	s.params = bm25.DefaultParams()
	dgot, err := s.KeywordSearch(ctx, storetest.Terms("cat"), 3, store.Filter{})
	if err != nil || fmt.Sprint(dgot) == fmt.Sprint(got) {
		t.Errorf("scores with pinned %v equal those with the defaults: %v, %v", other, got, err)
	}
	if err := s.SetMeta(ctx, bm25.MetaKey, "bm25f/9 k1=1"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := openDriver(ctx, dsn, Options{APIKey: os.Getenv("QDRANT_API_KEY")}); err == nil || !strings.Contains(err.Error(), "upgrade sagasu") {
		t.Errorf("Open with unreadable scoring parameters = %v; want a refusal that says to upgrade", err)
	}
}

// TestSchema2KeepsWorking opens an index whose collections an older
// sagasu made (schema 2: per-term payload values), writes to it and
// searches it exactly, with the same scores as an index of schema 3
// ("fc") holding the same sources; each keeps its layout across opens.
func TestSchema2KeepsWorking(t *testing.T) {
	ctx := context.Background()
	run := func(schema int64) (*Store, []store.Scored) {
		dsn := freshDSN(t, "")
		s, err := openDriver(ctx, dsn, Options{Create: true, APIKey: os.Getenv("QDRANT_API_KEY"), schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InitVectors(ctx, storetest.VectorDim); err != nil {
			t.Fatal(err)
		}
		if err := s.Replace(ctx, storetest.EmbeddedCorpus(t)); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = openStore(t, dsn) // a later process, of this build
		t.Cleanup(func() { s.Close() })
		if want := schema >= 3; s.compact != want {
			t.Fatalf("schema %d index opened with compact=%v", schema, s.compact)
		}
		// A write by this build keeps the collection's layout.
		if err := s.Replace(ctx, []store.SourceData{storetest.Source("late.md", doc.TypeFile, "Late", "cats and routing, written later")}); err != nil {
			t.Fatal(err)
		}
		got, err := s.KeywordSearch(ctx, storetest.Terms("cats routing revenue"), 10, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		return s, got
	}
	_, old := run(2)
	_, cur := run(3)
	if len(old) == 0 || fmt.Sprint(old) != fmt.Sprint(cur) {
		t.Fatalf("schema 2 index ranks %v, schema 3 %v", old, cur)
	}
}
