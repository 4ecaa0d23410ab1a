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
	Counts bm25.Counts // its distinct terms, sorted, and its fields' lengths in terms
	Hash   string      // of its context text, to find reusable embeddings
}

// Analyse turns every chunk of batch into its terms, on every core, so a
// store can hold its write lock only for writing. Terms come from the
// chunk's fields (Fields), which is what a delete finds them under again.
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
					counts := bm25.Count(fieldTerms(an, sd.Source.Title, c))
					slices.SortFunc(counts.Terms, func(a, b bm25.TermCount) int { return strings.Compare(a.Term, b.Term) })
					out[i][j] = Analysed{Counts: counts, Hash: doc.ContentHash(doc.ContextText(sd.Source.Title, c))}
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// Fields splits a chunk of a source titled title into the texts BM25F
// weighs apart: the title, the heading path (less a first heading equal to
// the title, which would repeat it) and the chunk's text.
func Fields(title string, c doc.Chunk) [bm25.NumFields]string {
	h := c.Heading
	if len(h) > 0 && h[0] == title {
		h = h[1:]
	}
	var f [bm25.NumFields]string
	f[bm25.Title] = title
	f[bm25.Heading] = strings.Join(h, "\n")
	f[bm25.Body] = c.Text
	return f
}

func fieldTerms(an *analyze.Analyzer, title string, c doc.Chunk) [bm25.NumFields][]string {
	var out [bm25.NumFields][]string
	for f, text := range Fields(title, c) {
		out[f] = an.Terms(text)
	}
	return out
}

// Indexed returns the distinct terms a chunk of a source titled title was
// indexed under and the lengths of its fields, for stores that keep neither.
func Indexed(an *analyze.Analyzer, title string, c doc.Chunk) ([]string, [bm25.NumFields]int64) {
	counts := bm25.Count(fieldTerms(an, title, c))
	terms := make([]string, len(counts.Terms))
	for i, tc := range counts.Terms {
		terms[i] = tc.Term
	}
	slices.Sort(terms)
	var lens [bm25.NumFields]int64
	for f, n := range counts.Len {
		lens[f] = int64(n)
	}
	return terms, lens
}

// Prepared is a batch analysed for writing, in a form that does not grow
// with the text of its chunks: per chunk only its length and hash are kept,
// and the postings of all of them are already encoded.
type Prepared struct {
	// Chunks[i][j] is chunk j of source i of the batch.
	Chunks [][]Written
	// Postings holds the postings of every chunk, numbered from 1 in batch
	// order (source by source, chunk by chunk): the writer adds the ID
	// before the first chunk's (bm25.Builder.Encoded).
	Postings *bm25.Builder
}

// Written is what the write path stores about one analysed chunk.
type Written struct {
	Len  uint32 // its length in terms over all fields; 0 for a chunk without terms
	Hash string // of its context text, to find reusable embeddings
}

// PrepareWindow is how many chunks Prepare analyses at a time.
const PrepareWindow = 256

// Prepare is Analyse for stores that keep no term list per chunk. It
// analyses the chunks PrepareWindow at a time, on every core, and adds each
// window to the postings before the next is analysed, so the terms of at
// most one window are held at once however big the batch is (one large file
// is one batch). The postings it builds are those Analyse's counts give.
func Prepare(an *analyze.Analyzer, batch []store.SourceData) *Prepared {
	p := &Prepared{Chunks: make([][]Written, len(batch)), Postings: bm25.NewBuilder()}
	type at struct{ i, j int }
	window := make([]at, 0, PrepareWindow)
	counts := make([]bm25.Counts, PrepareWindow)
	workers := runtime.GOMAXPROCS(0)
	// Each worker keeps its tally table and term buffers for the whole
	// batch, and each slot of counts its Terms from window to window: the
	// loop allocates little beyond the analyzer's terms themselves.
	scratch := make([]analyseScratch, workers)
	var id uint64
	flush := func() {
		var wg sync.WaitGroup
		for w := range min(workers, len(window)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sc := &scratch[w]
				for k := w; k < len(window); k += workers {
					sd := batch[window[k].i]
					c := sd.Chunks[window[k].j]
					counts[k] = sc.count(an, counts[k].Terms, sd.Source.Title, c)
					p.Chunks[window[k].i][window[k].j] = Written{Len: counts[k].Total(), Hash: doc.ContentHash(doc.ContextText(sd.Source.Title, c))}
				}
			}()
		}
		wg.Wait()
		for k := range window {
			id++
			p.Postings.AddCounts(id, counts[k])
			// Keep the slot's memory, not its terms' text.
			clear(counts[k].Terms)
			counts[k] = bm25.Counts{Terms: counts[k].Terms[:0]}
		}
		window = window[:0]
	}
	for i, sd := range batch {
		p.Chunks[i] = make([]Written, len(sd.Chunks))
		for j := range sd.Chunks {
			window = append(window, at{i, j})
			if len(window) == PrepareWindow {
				flush()
			}
		}
	}
	flush()
	return p
}

// analyseScratch is what one Prepare worker reuses from chunk to chunk.
type analyseScratch struct {
	counter bm25.Counter
	terms   [bm25.NumFields][]string
}

// count is bm25.Count(fieldTerms(an, title, c)) with the terms appended to
// dst[:0].
func (sc *analyseScratch) count(an *analyze.Analyzer, dst []bm25.TermCount, title string, c doc.Chunk) bm25.Counts {
	for f, text := range Fields(title, c) {
		sc.terms[f] = an.AppendTerms(sc.terms[f][:0], text)
	}
	out := sc.counter.Count(dst, sc.terms)
	for f := range sc.terms {
		clear(sc.terms[f]) // do not keep the chunk's term text alive
	}
	return out
}
