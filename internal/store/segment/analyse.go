package segment

import (
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// Analysed is a chunk as the write path indexes it.
type Analysed struct {
	Counts bm25.Counts // its distinct terms, sorted, and its length in terms
	Hash   string      // of its context text, to find reusable embeddings
}

// Analyse turns every chunk of batch into its terms, on every core, so a
// store can hold its write lock only for writing. Terms come from the
// chunk's context text (doc.ContextText), which is what a delete finds
// them under again.
func Analyse(an *analyze.Analyzer, batch []store.SourceData) [][]Analysed {
	out := make([][]Analysed, len(batch))
	for i, sd := range batch {
		out[i] = make([]Analysed, len(sd.Chunks))
	}
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(batch); i += workers {
				sd := batch[i]
				for j, c := range sd.Chunks {
					text := doc.ContextText(sd.Source.Title, c)
					counts := bm25.Count(an.Terms(text))
					slices.SortFunc(counts.Terms, func(a, b bm25.TermCount) int { return strings.Compare(a.Term, b.Term) })
					out[i][j] = Analysed{Counts: counts, Hash: doc.ContentHash(text)}
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// Terms returns the distinct terms a chunk of a source titled title was
// indexed under, for stores that do not keep them.
func Terms(an *analyze.Analyzer, title string, c doc.Chunk) []string {
	return an.QueryTerms(doc.ContextText(title, c))
}
