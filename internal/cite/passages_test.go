package cite

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

func hit(id int64, uri, heading, text string) doc.Hit {
	return doc.Hit{
		Chunk:  doc.Chunk{ID: id, Text: text, Heading: []string{heading}, StartLine: int(id), EndLine: int(id) + 2},
		Source: doc.Source{URI: uri, Title: strings.TrimSuffix(uri, ".md")},
	}
}

// index is a Loader over fixed chunks.
func index(hits ...doc.Hit) Loader {
	return func(_ context.Context, ids []int64) ([]doc.Hit, error) {
		var out []doc.Hit
		for _, h := range hits {
			if slices.Contains(ids, h.Chunk.ID) {
				out = append(out, h)
			}
		}
		return out, nil
	}
}

func TestPassagesNumberEachChunkOnce(t *testing.T) {
	var p Passages
	a, b, c := hit(10, "a.md", "A", "alpha"), hit(20, "b.md", "B", "beta"), hit(30, "c.md", "C", "gamma")
	if got := p.Add(b, a); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("first numbers: %v", got)
	}
	if got := p.Add(a, c, b); !slices.Equal(got, []int{2, 3, 1}) {
		t.Fatalf("numbers of seen and new passages: %v, want [2 3 1]", got)
	}
	if n, ok := p.Number(30); !ok || n != 3 {
		t.Errorf("Number(30) = %d, %t", n, ok)
	}
	if h, ok := p.Get(1); !ok || h.Chunk.ID != 20 {
		t.Errorf("Get(1) = %d, %t", h.Chunk.ID, ok)
	}
	if _, ok := p.Get(4); ok {
		t.Error("Get past the end found a passage")
	}
	if got := p.Hits([]int{3, 9, 1}); len(got) != 2 || got[0].Chunk.ID != 30 || got[1].Chunk.ID != 20 {
		t.Errorf("Hits([3 9 1]) = %+v", got)
	}
	// A clone grows apart from its original.
	q := p.Clone()
	q.Add(hit(40, "d.md", "D", "delta"))
	if p.Len() != 3 || q.Len() != 4 {
		t.Errorf("after adding to a clone: original %d, clone %d passages", p.Len(), q.Len())
	}
	if _, ok := p.Number(40); ok {
		t.Error("a passage added to the clone is numbered in the original")
	}
}

// TestPassagesCheckpointAsChunkIDs: a checkpoint holds chunk IDs only, and
// Restore reads the text back from the index; a chunk gone from it keeps
// its number.
func TestPassagesCheckpointAsChunkIDs(t *testing.T) {
	a, b, c := hit(10, "a.md", "A", "alpha text"), hit(20, "b.md", "B", "beta text"), hit(30, "c.md", "C", "gamma text")
	p := NewPassages(b, a, c)
	raw, err := json.Marshal(struct {
		Hits Passages `json:"hits"`
	}{*p})
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"hits":[20,10,30]}` {
		t.Fatalf("checkpoint: %s, want the chunk IDs in number order", raw)
	}
	var back struct {
		Hits Passages `json:"hits"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Hits.Len() != 3 {
		t.Fatalf("read back %d passages", back.Hits.Len())
	}
	if err := back.Hits.Restore(context.Background(), nil); err == nil {
		t.Error("Restore without a loader read nothing and said nothing")
	}
	// b is no longer in the index.
	if err := back.Hits.Restore(context.Background(), index(a, c)); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id   int64
		text string
	}{{20, Gone}, {10, "alpha text"}, {30, "gamma text"}}
	for i, w := range want {
		h, _ := back.Hits.Get(i + 1)
		if h.Chunk.ID != w.id || h.Chunk.Text != w.text {
			t.Errorf("passage %d: chunk %d %q, want chunk %d %q", i+1, h.Chunk.ID, h.Chunk.Text, w.id, w.text)
		}
	}
	if h, _ := back.Hits.Get(2); h.Source.URI != "a.md" || h.Chunk.HeadingPath() != "A" || h.Chunk.StartLine != 10 {
		t.Errorf("a restored passage lost its place: %+v", h)
	}
	// Restoring again asks the index nothing more.
	failing := func(context.Context, []int64) ([]doc.Hit, error) { return nil, errors.New("asked twice") }
	if err := back.Hits.Restore(context.Background(), failing); err != nil {
		t.Errorf("a restored set asked the index again: %v", err)
	}
	// A failing index is an error, not passages without text.
	var again Passages
	if err := json.Unmarshal([]byte(`[20]`), &again); err != nil {
		t.Fatal(err)
	}
	if err := again.Restore(context.Background(), failing); err == nil || !strings.Contains(err.Error(), "asked twice") {
		t.Errorf("Restore over a failing index: %v", err)
	}
}

// TestPassagesReadOlderCheckpoints: checkpoints written before passages
// were chunk IDs held whole passages (doc.Hit, or Plan-and-Act's flat
// form); they read with their text and need no index.
func TestPassagesReadOlderCheckpoints(t *testing.T) {
	old, err := json.Marshal([]doc.Hit{hit(10, "a.md", "Guide", "alpha text")})
	if err != nil {
		t.Fatal(err)
	}
	flat := `[{"chunkId":7,"uri":"b.md","title":"B","heading":"Guide > Setup","lines":[3,9],"text":"beta text"}]`
	for name, raw := range map[string]string{"doc.Hit": string(old), "planact": flat} {
		var p Passages
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := p.Restore(context.Background(), nil); err != nil {
			t.Errorf("%s: whole passages needed the index: %v", name, err)
		}
		h, ok := p.Get(1)
		if !ok || !strings.HasSuffix(h.Chunk.Text, "text") || h.Source.URI == "" || h.Chunk.ID == 0 {
			t.Errorf("%s: read %+v", name, h)
		}
	}
	var p Passages
	if err := json.Unmarshal([]byte(flat), &p); err != nil {
		t.Fatal(err)
	}
	if h, _ := p.Get(1); h.Chunk.HeadingPath() != "Guide > Setup" || h.Chunk.StartLine != 3 || h.Chunk.EndLine != 9 {
		t.Errorf("the flat form's heading and lines: %+v", h.Chunk)
	}
	if err := json.Unmarshal([]byte(`{"not":"a list"}`), &p); err == nil {
		t.Error("an object where passages belong was read without an error")
	}
}
