package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// BenchOptions configure a synthetic benchmark.
type BenchOptions struct {
	Chunks  int // target corpus size in chunks
	Queries int // queries to time
	K       int // results per query
	Mode    search.Mode
	Seed    uint64 // for the corpus shuffle
	// Cold, when set, opens the index as a one-shot command does (no
	// in-memory caches) with an engine over it, and a function that closes
	// it: the bench then also times queries from that store, and opening
	// it for one query at a time (see BenchResult.Cold and OneShot).
	Cold func(ctx context.Context) (*search.Engine, func(), error)
	// Serving, when set, is called once indexing is done, before the
	// caches are filled: the command sets the process up as a long-lived
	// one (see app.ServingGC).
	Serving func()
	// HeapProfile, when set, receives a heap profile taken while the
	// index is served, after the timed queries (for performance work).
	HeapProfile io.Writer
}

// BenchResult is what a benchmark prints.
type BenchResult struct {
	Chunks       int     `json:"chunks"`
	Sources      int     `json:"sources"`
	MB           float64 `json:"mb"`
	IndexSeconds float64 `json:"indexSeconds"`
	// IndexCPUSeconds is the CPU time the process spent indexing (all
	// cores), which a busy machine inflates less than the wall time.
	IndexCPUSeconds float64 `json:"indexCpuSeconds,omitempty"`
	ChunksPerSec    float64 `json:"chunksPerSecond"`
	MBPerSec        float64 `json:"mbPerSecond"`
	// Embedding throughput, when the index has an embedder: chunks sent to
	// it per second of waiting for it (two writers may wait at once).
	Embedded          int     `json:"embedded,omitempty"`
	EmbedChunksPerSec float64 `json:"embedChunksPerSecond,omitempty"`
	// WarmSeconds is how long the store took to fill its in-memory caches
	// (store.Warmer) before the timed queries.
	WarmSeconds float64 `json:"warmSeconds"`
	Mode        string  `json:"mode"`
	Queries     int     `json:"queries"`
	// Latency is from warm caches, as a long-running server answers.
	Latency Latency `json:"latencyMs"`
	// StoreLatency is, in keyword mode, the same queries answered with
	// chunk IDs and scores only: the query analysed and the store's
	// KeywordSearch, without the proximity re-rank and the hits' text
	// (what a bare search engine's top-k returns).
	StoreLatency *Latency `json:"storeLatencyMs,omitempty"`
	// Cold is the same queries from a store opened without in-memory
	// caches, as `sagasu query` opens it (the OS page cache stays warm).
	Cold *Latency `json:"coldLatencyMs,omitempty"`
	// OneShot times opening that store, one query and closing it, over
	// the first oneShotQueries queries: a one-shot command less the
	// process start.
	OneShot *Latency `json:"oneShotMs,omitempty"`
	DBBytes int64    `json:"dbBytes"`
	// PeakRSSMB is the peak resident memory of the whole run.
	PeakRSSMB  float64 `json:"peakRssMb"`
	PeakHeapMB float64 `json:"peakHeapMb"`
	// IndexPeakRSSMB is the peak resident memory while indexing.
	IndexPeakRSSMB float64 `json:"indexPeakRssMb,omitempty"`
	// ServePeakRSSMB is the peak while loading caches and answering
	// queries (0 where it cannot be told from the indexing peak);
	// ServeRSSMB the resident memory after the timed queries, and
	// KeywordCacheMB what the keyword cache held then.
	ServePeakRSSMB float64 `json:"servePeakRssMb,omitempty"`
	ServeRSSMB     float64 `json:"serveRssMb,omitempty"`
	KeywordCacheMB float64 `json:"keywordCacheMb,omitempty"`
	// Vectors is the vector section, when asked for.
	Vectors *VectorBenchResult `json:"vectors,omitempty"`
}

// Synthesize builds n documents of real text and passes them to emit one by
// one: each mixes the sentences of two passages from texts, so the corpus is
// as large as asked without repeating a document. Each document is about one
// passage long, i.e. about one chunk at the default chunk size.
func Synthesize(texts []string, n int, seed uint64, emit func(doc.Document) error) error {
	if len(texts) == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	sentences := make([][]string, len(texts))
	for i, t := range texts {
		sentences[i] = splitSentences(t)
	}
	for i := 0; i < n; i++ {
		a := sentences[i%len(texts)]
		b := sentences[rng.IntN(len(texts))]
		var parts []string
		if i < len(texts) {
			parts = a
		} else {
			half := (len(a) + 1) / 2
			parts = append(append(parts, a[:half]...), b[len(b)/2:]...)
		}
		content := strings.Join(parts, " ")
		err := emit(doc.Document{
			URI:     fmt.Sprintf("bench/%07d.txt", i),
			Type:    doc.TypeText,
			Format:  doc.FormatText,
			Title:   fmt.Sprintf("Document %d", i),
			Content: content,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func splitSentences(t string) []string {
	var out []string
	for len(t) > 0 {
		i := strings.Index(t, ". ")
		if i < 0 {
			out = append(out, strings.TrimSpace(t))
			break
		}
		out = append(out, strings.TrimSpace(t[:i+1]))
		t = t[i+2:]
	}
	return out
}

// Bench indexes a synthetic corpus of opt.Chunks documents drawn from texts
// with ix, then times queries against e.
func Bench(ctx context.Context, ix *index.Indexer, e *search.Engine, st store.Store, texts, queries []string, opt BenchOptions) (BenchResult, error) {
	var res BenchResult
	stop := trackHeap()
	cpu0 := cpuSeconds()
	rep, err := ix.Stream(ctx, func(emit func(doc.Document) error) error {
		return Synthesize(texts, opt.Chunks, opt.Seed, emit)
	})
	if err != nil {
		return res, fmt.Errorf("index: %w", err)
	}
	res.Sources = opt.Chunks
	res.Chunks = rep.Chunks
	res.MB = float64(rep.Bytes) / 1e6
	res.IndexSeconds = rep.Took.Seconds()
	res.IndexCPUSeconds = cpuSeconds() - cpu0
	res.ChunksPerSec = float64(rep.Chunks) / rep.Took.Seconds()
	res.MBPerSec = res.MB / rep.Took.Seconds()
	if rep.Embedded > 0 && rep.EmbedTook > 0 {
		res.Embedded = rep.Embedded
		res.EmbedChunksPerSec = float64(rep.Embedded) / rep.EmbedTook.Seconds()
	}
	if len(queries) > opt.Queries && opt.Queries > 0 {
		queries = queries[:opt.Queries]
	}
	k := opt.K
	if k == 0 {
		k = 10
	}
	res.IndexPeakRSSMB = peakRSSMB()
	// What indexing left behind (the corpus it synthesised, its batches)
	// is garbage now: hand it back, so that the serving figures are those
	// of the memory serving holds, as in a process that only serves.
	if opt.Serving != nil {
		opt.Serving()
	}
	runtime.GC()
	debug.FreeOSMemory()
	reset := resetPeakRSS()
	// A long-running server answers from warm caches: fill them first, and
	// say how long that took.
	if w, ok := st.(store.Warmer); ok {
		start := time.Now()
		if err := w.Warm(ctx); err != nil {
			return res, err
		}
		res.WarmSeconds = time.Since(start).Seconds()
	}
	// One untimed pass warms the page cache as a long-running server would be.
	for _, q := range queries[:min(len(queries), 20)] {
		if _, err := e.Search(ctx, search.Request{Query: q, K: k, Mode: opt.Mode}); err != nil {
			return res, err
		}
	}
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		start := time.Now()
		if _, err := e.Search(ctx, search.Request{Query: q, K: k, Mode: opt.Mode}); err != nil {
			return res, fmt.Errorf("query %q: %w", q, err)
		}
		lat = append(lat, time.Since(start))
	}
	res.Mode = string(opt.Mode)
	res.Queries = len(queries)
	res.Latency = Percentiles(lat)
	if opt.Mode == search.ModeKeyword {
		lat = lat[:0]
		for _, q := range queries {
			start := time.Now()
			if _, err := st.KeywordSearch(ctx, e.KeywordTerms(q), k, store.Filter{}); err != nil {
				return res, fmt.Errorf("query %q: %w", q, err)
			}
			lat = append(lat, time.Since(start))
		}
		sl := Percentiles(lat)
		res.StoreLatency = &sl
	}
	res.PeakHeapMB = stop()
	res.ServeRSSMB = rssMB()
	if opt.HeapProfile != nil {
		runtime.GC()
		if err := pprof.Lookup("heap").WriteTo(opt.HeapProfile, 0); err != nil {
			return res, fmt.Errorf("heap profile: %w", err)
		}
	}
	if c, ok := st.(keywordCacheSizer); ok {
		res.KeywordCacheMB = float64(c.KeywordCacheBytes()) / 1e6
	}
	if s, err := st.Stats(ctx); err == nil {
		res.DBBytes = s.SizeBytes
	}
	if reset {
		res.ServePeakRSSMB = peakRSSMB()
	}
	// The cold section last: the garbage its uncached queries leave is no
	// part of what a long-lived process holds while serving.
	if opt.Cold != nil {
		cold, one, err := benchCold(ctx, opt.Cold, queries, k, opt.Mode)
		if err != nil {
			return res, err
		}
		res.Cold, res.OneShot = &cold, &one
	}
	res.PeakRSSMB = max(peakRSSMB(), res.IndexPeakRSSMB)
	return res, nil
}

// keywordCacheSizer is a store that reports its keyword cache's memory.
type keywordCacheSizer interface {
	KeywordCacheBytes() int64
}

// oneShotQueries is how many queries benchCold times one open each.
const oneShotQueries = 20

// benchCold times queries from a store opened without caches: all of them
// from one open store, then the first oneShotQueries each with an open and
// a close of its own.
func benchCold(ctx context.Context, open func(context.Context) (*search.Engine, func(), error), queries []string, k int, mode search.Mode) (cold, oneShot Latency, err error) {
	e, closeFn, err := open(ctx)
	if err != nil {
		return cold, oneShot, fmt.Errorf("open the index without caches: %w", err)
	}
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		start := time.Now()
		_, err := e.Search(ctx, search.Request{Query: q, K: k, Mode: mode})
		lat = append(lat, time.Since(start))
		if err != nil {
			closeFn()
			return cold, oneShot, fmt.Errorf("query %q: %w", q, err)
		}
	}
	closeFn()
	cold = Percentiles(lat)
	lat = lat[:0]
	for _, q := range queries[:min(len(queries), oneShotQueries)] {
		start := time.Now()
		e, closeFn, err := open(ctx)
		if err != nil {
			return cold, oneShot, err
		}
		_, err = e.Search(ctx, search.Request{Query: q, K: k, Mode: mode})
		closeFn()
		if err != nil {
			return cold, oneShot, fmt.Errorf("query %q: %w", q, err)
		}
		lat = append(lat, time.Since(start))
	}
	return cold, Percentiles(lat), nil
}

// trackHeap samples the Go heap until the returned function is called, and
// returns the peak in MB.
func trackHeap() func() float64 {
	done := make(chan struct{})
	peak := make(chan float64, 1)
	go func() {
		var m runtime.MemStats
		var hi uint64
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&m)
			hi = max(hi, m.HeapInuse)
			select {
			case <-done:
				peak <- float64(hi) / 1e6
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 { close(done); return <-peak }
}

// ExportSummary says what ExportChunks wrote.
type ExportSummary struct {
	Sources int     `json:"sources"`
	Chunks  int     `json:"chunks"`
	MB      float64 `json:"mb"` // of source content, as Bench counts it
}

// exportedChunk is one line of ExportChunks' output.
type exportedChunk struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Heading string `json:"heading,omitempty"`
	Text    string `json:"text"`
}

// ExportChunks writes, one JSON object a line, the chunks that Bench
// indexes for the same texts, n and seed (Synthesize, then the chunker
// with opt): their ID (source URI#index), title, heading path and text.
// Other search engines fed these lines index exactly the text sagasu does.
func ExportChunks(w io.Writer, texts []string, n int, seed uint64, opt chunk.Options) (ExportSummary, error) {
	var sum ExportSummary
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	err := Synthesize(texts, n, seed, func(d doc.Document) error {
		chunks, err := chunk.Split(d, opt)
		if err != nil {
			return fmt.Errorf("chunk %q: %w", d.URI, err)
		}
		sum.Sources++
		sum.MB += float64(len(d.Content)) / 1e6
		for _, c := range chunks {
			sum.Chunks++
			err := enc.Encode(exportedChunk{ID: fmt.Sprintf("%s#%d", d.URI, c.Index), Title: d.Title, Heading: c.HeadingPath(), Text: c.Text})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return sum, err
	}
	return sum, bw.Flush()
}

// ReadTexts returns "title text" of every line of a BEIR corpus.jsonl.
func ReadTexts(path string) ([]string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("bench corpus %q: %w: pass --corpus with a BEIR corpus.jsonl (e.g. ../shared/data/scifact/corpus.jsonl)", path, err)
	}
	var texts []string
	err := readJSONL(path, func(raw []byte) error {
		var l struct {
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		t := strings.TrimSpace(l.Text)
		if l.Title != "" {
			t = strings.TrimSpace(l.Title + ". " + t)
		}
		texts = append(texts, t)
		return nil
	})
	return texts, err
}
