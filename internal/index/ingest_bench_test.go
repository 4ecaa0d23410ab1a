package index_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/eval"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/segment"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// analyseOnly is a store whose writes analyse a batch as the SQLite store
// does (segment.Prepare) and then discard it: indexing into it measures
// the pipeline without the SQL writes. Only what Indexer.Stream calls is
// implemented; the embedded nil Store panics on anything else.
type analyseOnly struct {
	store.Store
	an *analyze.Analyzer

	mu       sync.Mutex
	postings int // postings built, so the work is not optimised away
}

func (s *analyseOnly) Meta(context.Context, string) (string, error) { return "1", nil }

func (s *analyseOnly) Hashes(context.Context) (map[string]string, error) {
	return map[string]string{}, nil
}

func (s *analyseOnly) Replace(_ context.Context, batch []store.SourceData) error {
	p := segment.Prepare(s.an, batch)
	n := 0
	for _, t := range p.Postings.Terms() {
		_, k := p.Postings.Encoded(t, 0)
		n += k
	}
	s.mu.Lock()
	s.postings += n
	s.mu.Unlock()
	return nil
}

// BenchmarkKeywordIngest indexes the synthetic corpus of `sagasu bench`
// (SciFact sentences, SAGASU_BENCH_CHUNKS documents, default 20000)
// keyword only, into a store that analyses and discards (analyse-only: the
// ceiling the SQL writes leave) and into a new SQLite index, and reports
// MB/s of content indexed.
func BenchmarkKeywordIngest(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("SAGASU_BENCH_CHUNKS")); err == nil && v > 0 {
		n = v
	}
	texts, err := eval.ReadTexts(filepath.Join(testenv.SciFact(b), "corpus.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	produce := func(emit func(doc.Document) error) error { return eval.Synthesize(texts, n, 1, emit) }
	for _, name := range []string{"analyse-only", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			var bytes int64
			var secs float64
			for b.Loop() {
				var st store.Store
				if name == "sqlite" {
					s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "i.db"), sqlite.Options{Create: true})
					if err != nil {
						b.Fatal(err)
					}
					st = s
				} else {
					st = &analyseOnly{an: analyze.New(analyze.Options{})}
				}
				rep, err := index.New(st, index.Options{}).Stream(context.Background(), produce)
				if err != nil || rep.Chunks == 0 {
					b.Fatalf("index: %v (%d chunks)", err, rep.Chunks)
				}
				if a, ok := st.(*analyseOnly); ok && a.postings == 0 {
					b.Fatal("the analyse-only store built no postings")
				}
				if name == "sqlite" {
					st.Close()
				}
				bytes += rep.Bytes
				secs += rep.Took.Seconds()
			}
			b.ReportMetric(float64(bytes)/1e6/secs, "MB/s")
		})
	}
}
