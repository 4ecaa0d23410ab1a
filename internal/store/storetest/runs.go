package storetest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// runTests are the conformance cases for the run log.
var runTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"RunsCreateReadUpdate", testRunsCRUD},
	{"RunsList", testRunsList},
	{"RunsEvents", testRunsEvents},
	{"RunsUnknown", testRunsUnknown},
	{"RunsConcurrentAppends", testRunsConcurrent},
}

func mustCreateRun(t *testing.T, s store.Store, r store.Run) {
	t.Helper()
	if err := s.CreateRun(context.Background(), r); err != nil {
		t.Fatalf("CreateRun(%q): %v", r.ID, err)
	}
}

func testRunsCRUD(t *testing.T, s store.Store) {
	ctx := context.Background()
	created := time.Date(2026, 5, 1, 9, 30, 0, 123456789, time.FixedZone("JST", 9*3600))
	want := store.Run{ID: "r1", Kind: store.RunAgent, Title: "plan the release", Status: "running",
		Created: created, Meta: json.RawMessage(`{"goal": "ship", "steps": [1, 2]}`)}
	mustCreateRun(t, s, want)
	got, err := s.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want.Created = created.UTC().Truncate(time.Microsecond)
	want.Updated = want.Created
	if got.ID != want.ID || got.Kind != want.Kind || got.Title != want.Title || got.Status != want.Status ||
		!got.Created.Equal(want.Created) || !got.Updated.Equal(want.Updated) || string(got.Meta) != string(want.Meta) {
		t.Errorf("Run = %+v\nwant %+v (times in UTC to the microsecond, meta byte for byte)", got, want)
	}
	if got.Created.Location() != time.UTC {
		t.Errorf("Run's Created is in %v, want UTC", got.Created.Location())
	}
	if err := s.CreateRun(ctx, store.Run{ID: "r1", Kind: store.RunChat}); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateRun(existing ID) = %v, want ErrExists", err)
	}
	if err := s.CreateRun(ctx, store.Run{ID: "r2"}); err == nil {
		t.Errorf("CreateRun(no kind) succeeded")
	}
	if err := s.CreateRun(ctx, store.Run{ID: "r3", Kind: store.RunChat, Meta: json.RawMessage(`{oops`)}); err == nil {
		t.Errorf("CreateRun(invalid JSON meta) succeeded")
	}

	if err := s.UpdateRun(ctx, "r1", store.RunUpdate{Status: "done"}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Run(ctx, "r1")
	if got.Status != "done" || got.Title != want.Title || string(got.Meta) != string(want.Meta) {
		t.Errorf("after UpdateRun(status) = %+v: status must change, title and meta stay", got)
	}
	if !got.Updated.After(want.Updated) {
		t.Errorf("UpdateRun left Updated at %v", got.Updated)
	}
	if err := s.UpdateRun(ctx, "r1", store.RunUpdate{Title: "released", Meta: json.RawMessage(`null`)}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Run(ctx, "r1")
	if got.Status != "done" || got.Title != "released" || string(got.Meta) != "null" {
		t.Errorf("after UpdateRun(title, meta) = %+v", got)
	}
	// Updated follows the latest event, never back in time: a log copied
	// with its events' own times keeps its Updated.
	before := got.Updated
	if _, err := s.AppendEvents(ctx, "r1", []store.Event{{Type: "late", Time: before.Add(-time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Run(ctx, "r1"); !got.Updated.Equal(before) {
		t.Errorf("an event dated before Updated moved Updated from %v to %v", before, got.Updated)
	}
	later := before.Add(time.Hour + time.Nanosecond)
	if _, err := s.AppendEvents(ctx, "r1", []store.Event{{Type: "later", Time: later}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Run(ctx, "r1"); !got.Updated.Equal(later.Truncate(time.Microsecond)) {
		t.Errorf("after an event at %v, Updated = %v", later, got.Updated)
	}
	mustCreateRun(t, s, store.Run{ID: "bare", Kind: store.RunChat})
	if got, _ := s.Run(ctx, "bare"); got.Meta != nil || got.Created.IsZero() || time.Since(got.Created) > time.Hour {
		t.Errorf("run without meta or time = %+v, want nil meta and Created now", got)
	}
}

func testRunsList(t *testing.T, s store.Store) {
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, kind := range []string{store.RunAgent, store.RunChat, store.RunAgent, store.RunChat, store.RunAgent} {
		mustCreateRun(t, s, store.Run{ID: fmt.Sprintf("run-%d", i), Kind: kind, Created: base.Add(time.Duration(i) * time.Minute)})
	}
	// Same time as run-4: ties go by ID.
	mustCreateRun(t, s, store.Run{ID: "run-3b", Kind: store.RunChat, Created: base.Add(4 * time.Minute)})
	ids := func(f store.RunFilter) []string {
		rs, err := s.ListRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	tests := []struct {
		f    store.RunFilter
		want []string
	}{
		{store.RunFilter{}, []string{"run-3b", "run-4", "run-3", "run-2", "run-1", "run-0"}},
		{store.RunFilter{Kind: store.RunAgent}, []string{"run-4", "run-2", "run-0"}},
		{store.RunFilter{Kind: store.RunChat, Limit: 2}, []string{"run-3b", "run-3"}},
		{store.RunFilter{Kind: "nothing"}, nil},
	}
	for _, tc := range tests {
		if got := ids(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("ListRuns(%+v) = %v, want %v", tc.f, got, tc.want)
		}
	}
	// An append makes a run the most recent.
	if _, err := s.AppendEvents(ctx, "run-0", []store.Event{{Type: "message"}}); err != nil {
		t.Fatal(err)
	}
	if got := ids(store.RunFilter{Limit: 1}); !slices.Equal(got, []string{"run-0"}) {
		t.Errorf("after an append to run-0, newest = %v", got)
	}
}

func testRunsEvents(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreateRun(t, s, store.Run{ID: "chat", Kind: store.RunChat})
	mustCreateRun(t, s, store.Run{ID: "other", Kind: store.RunChat})
	at := time.Date(2026, 2, 3, 4, 5, 6, 789000999, time.UTC)
	first, err := s.AppendEvents(ctx, "chat", []store.Event{
		{Type: "user", Data: json.RawMessage(`{"text":"hello"}`), Time: at},
		{Type: "assistant", Data: json.RawMessage(`{"text": "hi", "parts": []}`)},
		{Type: "done"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendEvents(ctx, "other", []store.Event{{Type: "user"}}); err != nil {
		t.Fatal(err)
	}
	second, err := s.AppendEvents(ctx, "chat", []store.Event{{Type: "user", Data: json.RawMessage(`"again"`)}, {Type: "assistant"}})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, e := range append(first, second...) {
		seqs = append(seqs, e.Seq)
		if e.RunID != "chat" || e.Time.IsZero() {
			t.Errorf("AppendEvents returned %+v: want RunID and Time filled", e)
		}
	}
	if !slices.Equal(seqs, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("AppendEvents assigned Seq %v, want 1..5 (each run has its own sequence)", seqs)
	}
	all, err := s.Events(ctx, "chat", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Fatalf("Events(chat, 0) = %d events, want 5", len(all))
	}
	for i, e := range all {
		w := append(first, second...)[i]
		if e.Seq != w.Seq || e.Type != w.Type || string(e.Data) != string(w.Data) || !e.Time.Equal(w.Time) || e.RunID != "chat" {
			t.Errorf("event %d = %+v, want %+v as appended", i, e, w)
		}
	}
	if !all[0].Time.Equal(at.Truncate(time.Microsecond)) {
		t.Errorf("event time = %v, want the given %v to the microsecond", all[0].Time, at)
	}
	if all[2].Data != nil {
		t.Errorf("event without data read back as %q, want nil", all[2].Data)
	}
	after, err := s.Events(ctx, "chat", 3)
	if err != nil || len(after) != 2 || after[0].Seq != 4 || after[1].Seq != 5 {
		t.Errorf("Events(chat, after 3) = %+v, %v; want seq 4 and 5", after, err)
	}
	if none, err := s.Events(ctx, "chat", 5); err != nil || len(none) != 0 {
		t.Errorf("Events(chat, after 5) = %+v, %v; want none", none, err)
	}
	if _, err := s.AppendEvents(ctx, "chat", []store.Event{{Type: "ok"}, {Type: "bad", Data: json.RawMessage(`{`)}}); err == nil {
		t.Errorf("AppendEvents(invalid JSON) succeeded")
	}
	if _, err := s.AppendEvents(ctx, "chat", []store.Event{{Data: json.RawMessage(`1`)}}); err == nil {
		t.Errorf("AppendEvents(event without type) succeeded")
	}
	if got, _ := s.Events(ctx, "chat", 0); len(got) != 5 {
		t.Errorf("a refused append left %d events, want 5", len(got))
	}
}

func testRunsUnknown(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreateRun(t, s, store.Run{ID: "known", Kind: store.RunAgent})
	if _, err := s.Run(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Run(missing) = %v, want ErrNotFound", err)
	}
	if err := s.UpdateRun(ctx, "missing", store.RunUpdate{Status: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateRun(missing) = %v, want ErrNotFound", err)
	}
	if _, err := s.AppendEvents(ctx, "missing", []store.Event{{Type: "x"}}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AppendEvents(missing) = %v, want ErrNotFound", err)
	}
	if _, err := s.AppendEvents(ctx, "missing", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AppendEvents(missing, no events) = %v, want ErrNotFound", err)
	}
	if _, err := s.Events(ctx, "missing", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events(missing) = %v, want ErrNotFound", err)
	}
	if evs, err := s.Events(ctx, "known", 0); err != nil || len(evs) != 0 {
		t.Errorf("Events(run without events) = %v, %v; want none", evs, err)
	}
}

func testRunsConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreateRun(t, s, store.Run{ID: "busy", Kind: store.RunAgent})
	const writers, appends = 6, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*appends)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range appends {
				batch := make([]store.Event, 1+a%3)
				for i := range batch {
					batch[i] = store.Event{Type: "step", Data: json.RawMessage(fmt.Sprintf(`{"w":%d,"a":%d,"i":%d}`, w, a, i))}
				}
				if _, err := s.AppendEvents(ctx, "busy", batch); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent AppendEvents: %v", err)
	}
	evs, err := s.Events(ctx, "busy", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := writers * (4*(1+2+3) - 2 - 3) // a%3 over 10 appends: 1,2,3,1,2,3,1,2,3,1
	if len(evs) != want {
		t.Fatalf("%d events stored, want %d", len(evs), want)
	}
	type pos struct{ w, a, i int }
	var prev pos
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has Seq %d: sequence must be 1..%d without gaps", i, e.Seq, want)
		}
		var p pos
		if err := json.Unmarshal(e.Data, &struct {
			W *int `json:"w"`
			A *int `json:"a"`
			I *int `json:"i"`
		}{&p.w, &p.a, &p.i}); err != nil {
			t.Fatal(err)
		}
		// One append's events are consecutive.
		if p.i > 0 && (p.w != prev.w || p.a != prev.a || p.i != prev.i+1) {
			t.Errorf("event %d %+v follows %+v: an append was interleaved with another", i, p, prev)
		}
		prev = p
	}
}

// Upgrade checks that an index an older sagasu wrote (old, a fresh store at
// an older schema version) opens with this build's schema (reopen opens the
// same index) keeping its sources, rankings and statistics, and gains a
// working run log.
func Upgrade(t *testing.T, old store.Store, reopen func(t *testing.T) store.Store) {
	t.Helper()
	ctx := context.Background()
	// Only what the older schema has is written here: this build's code
	// writes it.
	mustReplace(t, old, slices.Delete(corpus(), 1, 2)...)
	wantHits := kwSearch(t, old, "cat revenue", 10, store.Filter{})
	wantStats, err := old.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old.Close()

	s := reopen(t)
	defer s.Close()
	if got := kwSearch(t, s, "cat revenue", 10, store.Filter{}); !slices.Equal(got, wantHits) {
		t.Errorf("after upgrade keyword search = %v, want %v as before", got, wantHits)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sources != wantStats.Sources || st.Chunks != wantStats.Chunks || st.Terms != wantStats.Terms {
		t.Errorf("after upgrade stats = %+v, want %+v", st, wantStats)
	}
	// The upgraded index takes writes and runs.
	mustReplace(t, s, corpus()[1])
	if got := uris(t, s, kwSearch(t, s, "loyal companions", 1, store.Filter{})); len(got) != 1 || got[0] != "docs/dogs.md" {
		t.Errorf("after upgrade, a new source is found as %v", got)
	}
	mustCreateRun(t, s, store.Run{ID: "after-upgrade", Kind: store.RunChat})
	if evs, err := s.AppendEvents(ctx, "after-upgrade", []store.Event{{Type: "user"}}); err != nil || len(evs) != 1 || evs[0].Seq != 1 {
		t.Errorf("AppendEvents on an upgraded index = %+v, %v", evs, err)
	}
}

// LegacyIndex is an index as sagasu wrote it before BM25F (SQLite schema 3,
// PostgreSQL schema 2): each chunk's terms are those of its context text,
// and each postings row is, per chunk, the uvarints of the ID delta, the
// term frequency and the chunk's length. Chunk IDs are 1, 2, … in the
// order of Sources and their chunks; all postings are in segment 1.
type LegacyIndex struct {
	Sources  []store.SourceData
	Postings map[string][]byte // term → encoded postings
	Counts   map[string]int    // term → postings in the row
	Lengths  []int             // each chunk's length in terms, by ID−1
	Terms    [][]string        // each chunk's distinct terms, sorted, by ID−1
	Docs     int
	Tokens   int64
}

// Legacy builds the LegacyIndex of the corpus that UpgradeRebuilt expects.
func Legacy() LegacyIndex {
	an := analyze.New(analyze.Options{})
	li := LegacyIndex{Sources: slices.Delete(corpus(), 1, 2), Postings: map[string][]byte{}, Counts: map[string]int{}}
	last := map[string]uint64{}
	id := uint64(0)
	for _, sd := range li.Sources {
		for _, ch := range sd.Chunks {
			id++
			terms := an.Terms(doc.ContextText(sd.Source.Title, ch))
			tf := map[string]int{}
			for _, t := range terms {
				tf[t]++
			}
			distinct := slices.Sorted(maps.Keys(tf))
			for _, t := range distinct {
				b := li.Postings[t]
				b = binary.AppendUvarint(b, id-last[t])
				b = binary.AppendUvarint(b, uint64(tf[t]))
				b = binary.AppendUvarint(b, uint64(len(terms)))
				li.Postings[t] = b
				li.Counts[t]++
				last[t] = id
			}
			li.Lengths = append(li.Lengths, len(terms))
			li.Terms = append(li.Terms, distinct)
			li.Docs++
			li.Tokens += int64(len(terms))
		}
	}
	return li
}

// UpgradeRebuilt checks an index of the pre-BM25F format (written by the
// driver's test from Legacy) after reopen upgraded it: its keyword index is
// rebuilt, so it ranks exactly as reference BM25F does over the same
// chunks, keeps its sources and statistics, and takes writes and runs.
func UpgradeRebuilt(t *testing.T, reopen func(t *testing.T) store.Store) {
	t.Helper()
	ctx := context.Background()
	li := Legacy()
	s := reopen(t)
	defer s.Close()
	for _, q := range []string{"cat revenue", "cat", "routing dynamic", "設定"} {
		want := referenceScores(li.Sources, q)
		got := kwSearch(t, s, q, 100, store.Filter{})
		if len(got) != len(want) {
			t.Errorf("after upgrade %q: %d hits, reference BM25F has %d", q, len(got), len(want))
			continue
		}
		for i := range got {
			if math.Abs(got[i].Score-want[i]) > 1e-4 {
				t.Errorf("after upgrade %q hit %d: score %.6f, reference %.6f", q, i, got[i].Score, want[i])
			}
		}
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sources != len(li.Sources) || st.Chunks != li.Docs {
		t.Errorf("after upgrade stats = %+v, want %d sources and %d chunks", st, len(li.Sources), li.Docs)
	}
	// The upgraded index takes writes, deletes and runs.
	mustReplace(t, s, corpus()[1])
	if got := uris(t, s, kwSearch(t, s, "loyal companions", 1, store.Filter{})); len(got) != 1 || got[0] != "docs/dogs.md" {
		t.Errorf("after upgrade, a new source is found as %v", got)
	}
	if _, err := s.Delete(ctx, []string{li.Sources[0].Source.ID}); err != nil {
		t.Fatal(err)
	}
	rest := append(slices.Clone(li.Sources[1:]), corpus()[1])
	matchReference(t, s, rest, "cat revenue", "after upgrade and a delete")
	mustCreateRun(t, s, store.Run{ID: "after-upgrade", Kind: store.RunChat})
	if evs, err := s.AppendEvents(ctx, "after-upgrade", []store.Event{{Type: "user"}}); err != nil || len(evs) != 1 || evs[0].Seq != 1 {
		t.Errorf("AppendEvents on an upgraded index = %+v, %v", evs, err)
	}
}
