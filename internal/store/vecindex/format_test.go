package vecindex

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"slices"
	"testing"
)

// TestRestoresGraphSavedBeforeInt8Walk reads a graph saved by sagasu
// 6661837 (testdata/graph-v1-6661837.hnsw: format 1, its links chosen by
// the float rows, before graphs were linked and walked by the int8 copy):
// 400 rows of Clustered(400, 16, 51), M 8, seed 5, every 40th row deleted
// before the save. This version walks the same links by the int8 copy. It
// must take every live vector, return no deleted one, find the exact top
// 10 as a graph should, and save the very same bytes back: the format
// did not change, so nothing was misread.
func TestRestoresGraphSavedBeforeInt8Walk(t *testing.T) {
	const n, dim = 400, 16
	saved, err := os.ReadFile("testdata/graph-v1-6661837.hnsw")
	if err != nil {
		t.Fatal(err)
	}
	// The search list length saved (96) is given back, so that the
	// bytes saved back can be compared.
	opt := LiveOptions{Approx: 100, Graph: HNSWOptions{Seed: 5, EfSearch: 96}}
	rs, extra, err := Restore(bytes.NewReader(saved), dim, opt)
	if err != nil {
		t.Fatalf("Restore of a graph saved by 6661837: %v", err)
	}
	if string(extra) != "saved by 6661837" {
		t.Errorf("extra = %q, want %q", extra, "saved by 6661837")
	}
	rows := Clustered(n, dim, 51)
	m := model{}
	for i := range n {
		id := int64(i + 1)
		deleted := i%40 == 0
		if got := rs.Fill(id, rows[i]); got == deleted {
			t.Fatalf("Fill(chunk %d) = %v; the saved graph has it deleted: %v", id, got, deleted)
		}
		if !deleted {
			m[id] = rows[i]
		}
	}
	l := rs.Live()
	defer l.Close()
	if l.g.m != 8 || l.g.efConstruction != 100 {
		t.Errorf("restored graph has M %d, efConstruction %d; saved with 8, 100", l.g.m, l.g.efConstruction)
	}
	if st := l.Stats(); !st.Graph || st.Live != len(m) {
		t.Fatalf("restored index: %+v; want a graph over %d live rows", st, len(m))
	}
	qs := ClusteredQueries(50, n, dim, 51)
	for _, q := range qs {
		for _, h := range l.Search(q, 10, nil) {
			if _, ok := m[h.ChunkID]; !ok {
				t.Fatalf("chunk %d, deleted before the save, returned", h.ChunkID)
			}
		}
	}
	if rec := recallOf(t, l, m, dim, qs, 10); rec < 0.98 {
		t.Errorf("recall@10 of the restored graph = %.3f, want >= 0.98", rec)
	}
	var again bytes.Buffer
	if err := l.Save(&again, extra); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), saved) {
		t.Errorf("saving the restored graph gave %d bytes unlike the %d read", again.Len(), len(saved))
	}
}

// TestRestoredGraphSearchesWithTodaysEf: the search list length is not
// taken from the file (graphs saved with 96 would keep a recall below
// 0.99) but from the caller, else the default for the graph's size.
func TestRestoredGraphSearchesWithTodaysEf(t *testing.T) {
	saved, err := os.ReadFile("testdata/graph-v1-6661837.hnsw")
	if err != nil {
		t.Fatal(err)
	}
	for _, asked := range []int{0, 200} {
		rs, _, err := Restore(bytes.NewReader(saved), 16, LiveOptions{Graph: HNSWOptions{EfSearch: asked}})
		if err != nil {
			t.Fatal(err)
		}
		g := rs.l.g
		want := asked
		if asked == 0 {
			want = DefaultEfSearch(g.live)
		}
		if got := g.EfSearch(); got != want || g.efSearch != asked {
			t.Errorf("restored with EfSearch %d: the graph searches with %d (set %d), want %d", asked, got, g.efSearch, want)
		}
	}
}

// TestRefusesGraphOfAnotherVersion gives Restore a well-formed file (its
// checksum right) whose format version is not this one's: it must refuse
// it, so that the store builds the graph again instead of misreading it.
func TestRefusesGraphOfAnotherVersion(t *testing.T) {
	saved, err := os.ReadFile("testdata/graph-v1-6661837.hnsw")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []uint32{0, graphVersion + 1, 1 << 31} {
		b := slices.Clone(saved)
		binary.LittleEndian.PutUint32(b[len(graphMagic):], v)
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
		if _, _, err := Restore(bytes.NewReader(b), 16, LiveOptions{}); err == nil {
			t.Errorf("Restore of a graph of format version %d: no error", v)
		}
	}
}
