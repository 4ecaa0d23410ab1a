package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// fake is a Driver that records what reaches it. Methods a test does not
// expect to be called are left to the nil Driver it embeds (they panic).
type fake struct {
	Driver
	dim      int
	calls    []string
	replaced [][]SourceData
	deleted  [][]string
	terms    [][]string
	setVecs  []map[int64][]float32
	sources  map[string]doc.Source
	runs     []Run
	events   []Event
	last     int64
	appended []Event
	renamed  []string
	warmed   bool
}

func (f *fake) called(name string) { f.calls = append(f.calls, name) }

func (f *fake) VectorDim(context.Context) (int, error) { f.called("VectorDim"); return f.dim, nil }
func (f *fake) Replace(_ context.Context, b []SourceData) error {
	f.called("Replace")
	f.replaced = append(f.replaced, b)
	return nil
}
func (f *fake) Delete(_ context.Context, ids []string) (int, error) {
	f.called("Delete")
	f.deleted = append(f.deleted, ids)
	return len(ids), nil
}
func (f *fake) KeywordSearch(_ context.Context, terms []string, k int, _ Filter) ([]Scored, error) {
	f.called("KeywordSearch")
	f.terms = append(f.terms, terms)
	return []Scored{{ChunkID: 1, Score: 1}}, nil
}
func (f *fake) VectorSearch(context.Context, []float32, int, Filter) ([]Scored, error) {
	f.called("VectorSearch")
	return []Scored{{ChunkID: 1, Score: 1}}, nil
}
func (f *fake) SetVectors(_ context.Context, v map[int64][]float32) error {
	f.called("SetVectors")
	f.setVecs = append(f.setVecs, v)
	return nil
}
func (f *fake) Source(_ context.Context, id string) (doc.Source, error) {
	f.called("Source")
	if s, ok := f.sources[id]; ok {
		return s, nil
	}
	return doc.Source{}, ErrNotFound
}
func (f *fake) Sources(context.Context, ListOptions) ([]doc.Source, error) {
	f.called("Sources")
	var out []doc.Source
	for _, s := range f.sources {
		out = append(out, s)
	}
	return out, nil
}
func (f *fake) RenameSource(_ context.Context, id, uri string) (doc.Source, error) {
	f.called("RenameSource")
	f.renamed = append(f.renamed, id+">"+uri)
	return doc.Source{ID: doc.SourceID(uri), URI: uri}, nil
}
func (f *fake) InsertRun(_ context.Context, r Run) error {
	f.called("InsertRun")
	f.runs = append(f.runs, r)
	return nil
}
func (f *fake) Run(_ context.Context, id string) (Run, error) {
	f.called("Run")
	for _, r := range f.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return Run{}, ErrNotFound
}
func (f *fake) RunsOfKind(context.Context, string) ([]Run, error) {
	f.called("RunsOfKind")
	return slices.Clone(f.runs), nil
}
func (f *fake) AppendEvents(_ context.Context, _ string, evs []Event, _ time.Time) (int64, error) {
	f.called("AppendEvents")
	f.appended = slices.Clone(evs)
	return f.last, nil
}
func (f *fake) Events(context.Context, string, int64) ([]Event, error) {
	f.called("Events")
	return slices.Clone(f.events), nil
}

// warmFake is a driver that keeps caches.
type warmFake struct{ *fake }

func (w warmFake) Warm(context.Context) error { w.warmed = true; return nil }

func src(uri, content string) SourceData {
	return SourceData{Source: doc.Source{ID: doc.SourceID(uri), URI: uri, ContentHash: doc.ContentHash(content)}, Content: content,
		Chunks: []doc.Chunk{{Text: content}}}
}

func TestReplaceIsCheckedOnce(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	f := &fake{}
	s := New(f)
	// Nothing to write is nil in every store, even with a done context.
	if err := s.Replace(cancelled, nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
	noURI := src("", "x")
	noURI.Source.ID = "abc"
	wrongID := src("a.md", "x")
	wrongID.Source.ID = "0123456789abcdef"
	tooFew := src("b.md", "x")
	tooFew.Vectors = [][]float32{}
	for name, tc := range map[string]struct {
		batch []SourceData
		want  string
	}{
		"empty URI":       {[]SourceData{src("ok.md", "x"), noURI}, "without a URI"},
		"ID not from URI": {[]SourceData{wrongID}, "is not the ID of its URI"},
		"vector count":    {[]SourceData{tooFew}, "0 vectors for 1 chunks"},
	} {
		if err := s.Replace(ctx, tc.batch); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
	}
	if len(f.replaced) != 0 {
		t.Fatalf("the driver was handed a batch the Store refused: %v", f.calls)
	}

	// An ID is filled in from the URI; a source given twice is written
	// once, as its last entry, where it first stood.
	noID := src("c.md", "one")
	noID.Source.ID = ""
	batch := []SourceData{src("a.md", "old"), noID, src("a.md", "new")}
	if err := s.Replace(ctx, batch); err != nil {
		t.Fatal(err)
	}
	got := f.replaced[0]
	if len(got) != 2 || got[0].Source.URI != "a.md" || got[0].Content != "new" || got[1].Source.ID != doc.SourceID("c.md") {
		t.Errorf("driver got %+v", got)
	}
	if batch[1].Source.ID != "" {
		t.Errorf("the caller's batch was changed: %+v", batch[1].Source)
	}
	if slices.Contains(f.calls, "VectorDim") {
		t.Errorf("a batch without vectors asked for the dimension: %v", f.calls)
	}
}

func TestReplaceChecksVectorsAgainstTheIndex(t *testing.T) {
	ctx := context.Background()
	withVec := func(v ...[]float32) SourceData {
		sd := src("v.md", "text")
		sd.Chunks = make([]doc.Chunk, len(v))
		sd.Vectors = v
		return sd
	}
	f := &fake{}
	s := New(f)
	if err := s.Replace(ctx, []SourceData{withVec([]float32{1, 0})}); err == nil || !strings.Contains(err.Error(), "no vectors yet") {
		t.Errorf("vectors into an index without them: %v", err)
	}
	f.dim = 3
	if err := s.Replace(ctx, []SourceData{withVec([]float32{1, 0, 0}, []float32{1, 0})}); err == nil || !strings.Contains(err.Error(), "vector 1 has 2 dimensions, the index holds 3") {
		t.Errorf("wrong dimension: %v", err)
	}
	// A zero vector (no known word) passes at any length: it is not stored.
	if err := s.Replace(ctx, []SourceData{withVec([]float32{1, 0, 0}, []float32{0})}); err != nil {
		t.Errorf("zero vector: %v", err)
	}
	if len(f.replaced) != 1 {
		t.Errorf("driver got %d batches, want the one valid batch", len(f.replaced))
	}
}

func TestEmptyAndRepeatedArgumentsStopAtTheStore(t *testing.T) {
	ctx := context.Background()
	f := &fake{dim: 2}
	s := New(f)
	if n, err := s.Delete(ctx, nil); n != 0 || err != nil {
		t.Errorf("Delete(nil) = %d, %v", n, err)
	}
	if _, err := s.Delete(ctx, []string{"a", "b", "a"}); err != nil || !slices.Equal(f.deleted[0], []string{"a", "b"}) {
		t.Errorf("Delete with a repeat: driver got %v, %v", f.deleted, err)
	}
	for _, k := range []int{0, -1} {
		if res, err := s.KeywordSearch(ctx, []string{"x"}, k, Filter{}); res != nil || err != nil {
			t.Errorf("KeywordSearch(k=%d) = %v, %v", k, res, err)
		}
	}
	if res, err := s.KeywordSearch(ctx, nil, 5, Filter{}); res != nil || err != nil {
		t.Errorf("KeywordSearch(no terms) = %v, %v", res, err)
	}
	if _, err := s.KeywordSearch(ctx, []string{"cat", "dog", "cat"}, 5, Filter{}); err != nil || !slices.Equal(f.terms[0], []string{"cat", "dog"}) {
		t.Errorf("KeywordSearch with a repeated term: driver got %v, %v", f.terms, err)
	}
	if _, err := s.KeywordSearch(ctx, []string{"x"}, 5, Filter{PathGlob: "[a"}); err == nil || !strings.Contains(err.Error(), `glob "[a"`) {
		t.Errorf("KeywordSearch with a broken glob: %v", err)
	}
	if res, err := s.VectorSearch(ctx, []float32{0, 0}, 5, Filter{}); res != nil || err != nil {
		t.Errorf("VectorSearch(zero query) = %v, %v", res, err)
	}
	if _, err := s.VectorSearch(ctx, []float32{1, 0, 0}, 5, Filter{}); err == nil || !strings.Contains(err.Error(), "3 dimensions, the index holds 2") {
		t.Errorf("VectorSearch(wrong dimension): %v", err)
	}
	if res, err := s.VectorSearch(ctx, []float32{1, 0}, 5, Filter{}); len(res) != 1 || err != nil {
		t.Errorf("VectorSearch = %v, %v", res, err)
	}
	if err := s.SetVectors(ctx, map[int64][]float32{1: {0, 0}}); err != nil {
		t.Errorf("SetVectors(only zero vectors): %v", err)
	}
	if err := s.SetVectors(ctx, map[int64][]float32{1: {1, 0}, 2: {0, 0}}); err != nil || len(f.setVecs) != 1 || len(f.setVecs[0]) != 1 {
		t.Errorf("SetVectors keeps zero vectors from the driver: %v, %v", f.setVecs, err)
	}
	if err := s.SetVectors(ctx, map[int64][]float32{1: {1, 0, 0}}); err == nil {
		t.Error("SetVectors with the wrong dimension succeeded")
	}
	for _, name := range []string{"Delete", "KeywordSearch", "VectorSearch", "SetVectors"} {
		if n := countOf(f.calls, name); n != 1 {
			t.Errorf("driver's %s called %d times, want once (only for the valid call): %v", name, n, f.calls)
		}
	}
	f.dim = 0
	if res, err := s.VectorSearch(ctx, []float32{1, 0}, 5, Filter{}); res != nil || err != nil {
		t.Errorf("VectorSearch on an index without vectors = %v, %v", res, err)
	}
}

func countOf(calls []string, name string) int {
	n := 0
	for _, c := range calls {
		if c == name {
			n++
		}
	}
	return n
}

func TestSourcesByURIAndHashesComeFromTheRecords(t *testing.T) {
	ctx := context.Background()
	a := doc.Source{ID: doc.SourceID("a.md"), URI: "a.md", ContentHash: "h1"}
	f := &fake{sources: map[string]doc.Source{a.ID: a, doc.SourceID("b.md"): {ID: doc.SourceID("b.md"), URI: "not-b.md"}}}
	s := New(f)
	if got, err := s.SourceByURI(ctx, "a.md"); err != nil || got != a {
		t.Errorf("SourceByURI = %+v, %v", got, err)
	}
	if _, err := s.SourceByURI(ctx, "b.md"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SourceByURI of a URI whose ID holds another URI = %v, want ErrNotFound", err)
	}
	if _, err := s.SourceByURI(ctx, "nope.md"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nope.md") {
		t.Errorf("SourceByURI(unknown) = %v", err)
	}
	h, err := s.Hashes(ctx)
	if err != nil || h["a.md"] != "h1" || len(h) != 2 {
		t.Errorf("Hashes = %v, %v", h, err)
	}
	// Renaming a source to its own URI, or to nothing, never reaches the driver.
	if got, err := s.RenameSource(ctx, a.ID, "a.md"); err != nil || got != a {
		t.Errorf("rename to itself = %+v, %v", got, err)
	}
	if _, err := s.RenameSource(ctx, a.ID, ""); err == nil {
		t.Error("rename to an empty URI succeeded")
	}
	if _, err := s.RenameSource(ctx, "missing", "x.md"); !errors.Is(err, ErrNotFound) {
		t.Errorf("rename of an unknown source = %v", err)
	}
	if len(f.renamed) != 0 {
		t.Errorf("driver renamed %v", f.renamed)
	}
	if _, err := s.RenameSource(ctx, a.ID, "docs/a.md"); err != nil || !slices.Equal(f.renamed, []string{a.ID + ">docs/a.md"}) {
		t.Errorf("rename: %v, driver %v", err, f.renamed)
	}
}

func TestRunLogRulesAreTheStores(t *testing.T) {
	ctx := context.Background()
	f := &fake{}
	s := New(f)
	for _, r := range []Run{{ID: "x"}, {Kind: RunChat}, {ID: "x", Kind: RunChat, Meta: json.RawMessage(`{`)}} {
		if err := s.CreateRun(ctx, r); err == nil {
			t.Errorf("CreateRun(%+v) succeeded", r)
		}
	}
	local := time.Date(2026, 1, 2, 3, 4, 5, 678912345, time.FixedZone("JST", 9*3600))
	if err := s.CreateRun(ctx, Run{ID: "r", Kind: RunChat, Created: local}); err != nil {
		t.Fatal(err)
	}
	r := f.runs[0]
	if !r.Created.Equal(local.Truncate(time.Microsecond)) || r.Created.Location() != time.UTC || !r.Updated.Equal(r.Created) {
		t.Errorf("stored run %+v: want Created in UTC to the microsecond and Updated = Created", r)
	}

	// The order of a list is the Store's, whatever the driver's.
	t0 := time.Unix(1000, 0)
	f.runs = []Run{{ID: "b", Updated: t0}, {ID: "c", Updated: t0.Add(time.Minute), Meta: json.RawMessage("")}, {ID: "a", Updated: t0}}
	list, err := s.ListRuns(ctx, RunFilter{Limit: 2})
	if err != nil || len(list) != 2 || list[0].ID != "c" || list[1].ID != "a" || list[0].Meta != nil {
		t.Errorf("ListRuns = %+v, %v; want c then a (latest first, then by ID), no empty JSON", list, err)
	}

	// Events: numbered after the driver's last, checked, sorted on the way out.
	if _, err := s.AppendEvents(ctx, "a", []Event{{Type: "x"}, {}}); err == nil {
		t.Error("an event without a type was appended")
	}
	f.last = 7
	out, err := s.AppendEvents(ctx, "a", []Event{{Type: "x"}, {Type: "y", Data: json.RawMessage(`1`)}})
	if err != nil || len(out) != 2 || out[0].Seq != 8 || out[1].Seq != 9 || out[0].RunID != "a" || out[0].Time.IsZero() {
		t.Errorf("AppendEvents = %+v, %v", out, err)
	}
	if f.appended[0].Seq != 1 || f.appended[1].Seq != 2 {
		t.Errorf("driver got Seq %d, %d; want 1, 2 (relative)", f.appended[0].Seq, f.appended[1].Seq)
	}
	if _, err := s.AppendEvents(ctx, "missing", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("appending nothing to an unknown run = %v, want ErrNotFound", err)
	}
	f.events = []Event{{Seq: 3, Type: "c"}, {Seq: 1, Type: "a", Data: json.RawMessage("")}}
	evs, err := s.Events(ctx, "a", 0)
	if err != nil || len(evs) != 2 || evs[0].Seq != 1 || evs[0].Data != nil || evs[1].RunID != "a" {
		t.Errorf("Events = %+v, %v", evs, err)
	}
	if _, err := s.Events(ctx, "missing", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("Events of an unknown run = %v", err)
	}
}

func TestOptionalCapabilitiesFollowTheDriver(t *testing.T) {
	ctx := context.Background()
	plain := &fake{}
	if err := New(plain).(Warmer).Warm(ctx); err != nil {
		t.Errorf("Warm on a driver without caches: %v", err)
	}
	New(plain).(Settler).Settle(ctx) // nothing to settle: must not panic
	w := warmFake{&fake{}}
	if err := New(w).(Warmer).Warm(ctx); err != nil || !w.warmed {
		t.Errorf("Warm did not reach the driver: %v", err)
	}
}
