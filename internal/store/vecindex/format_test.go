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
	opt := LiveOptions{Approx: 100, Graph: HNSWOptions{M: 8, Seed: 5}}
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
