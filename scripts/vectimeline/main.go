// Command vectimeline shows what a long-lived process's vector queries
// cost while another handle writes the index: it opens a SQLite index of
// synthetic vectors (making it first when the file does not exist) as the
// MCP server does, queries it at a steady rate for --duration, replaces
// --batch sources every --every from a second handle (as `sagasu index`
// in another process would), and prints one line per second: queries,
// their p50 and worst latency, and the writes committed in that second.
//
//	go run ./scripts/vectimeline --db /tmp/v1m.db --vectors 1000000
//
// It uses only the store contract and app.OpenStoreWith, so the same file
// builds against an older tree to show the old behaviour (see
// docs/performance.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/vecindex"
)

func main() {
	var (
		path     = flag.String("db", "", "SQLite index (made with --vectors synthetic vectors when missing)")
		n        = flag.Int("vectors", 100_000, "vectors of a new index")
		dim      = flag.Int("dim", 384, "dimensions of a new index's vectors")
		approx   = flag.Int("approx", 100_000, "search.approx_vectors of the long-lived handle")
		duration = flag.Duration("duration", 40*time.Second, "how long to query")
		every    = flag.Duration("every", 5*time.Second, "time between two writes")
		batch    = flag.Int("batch", 100, "sources replaced by each write (half rewritten, half new)")
		qps      = flag.Int("qps", 50, "queries per second")
		prepare  = flag.Duration("prepare", 0, "first open the index long-lived and wait up to this long for it to save its vector graph beside the index (DB.hnsw), then close it, so that the timed run starts from a saved graph")
	)
	flag.Parse()
	if *path == "" {
		log.Fatal("vectimeline: pass --db PATH")
	}
	ctx := context.Background()
	if _, err := os.Stat(*path); err != nil {
		if err := create(ctx, *path, *n, *dim); err != nil {
			log.Fatalf("vectimeline: make %s: %v", *path, err)
		}
	}
	w, err := app.OpenStoreWith(ctx, *path, app.StoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	st, err := w.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	qs := vecindex.ClusteredQueries(1000, st.Vectors, *dim, 1)
	if *prepare > 0 {
		if err := waitForGraph(ctx, *path, *approx, qs[0], *prepare); err != nil {
			log.Fatal(err)
		}
	}

	opened := time.Now()
	r, err := app.OpenStoreWith(ctx, *path, app.StoreOptions{LongLived: true, ApproxVectors: *approx})
	if err != nil {
		log.Fatal(err)
	}
	var samples, writes []sample
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second / time.Duration(*qps))
		defer tick.Stop()
		for i := 0; time.Since(opened) < *duration; i++ {
			start := time.Now()
			if _, err := r.VectorSearch(ctx, qs[i%len(qs)], 10, store.Filter{}); err != nil {
				log.Fatalf("vectimeline: query: %v", err)
			}
			samples = append(samples, sample{start.Sub(opened), time.Since(start)})
			<-tick.C
		}
	}()
	rng := rand.New(rand.NewPCG(2, 3))
	next := st.Sources
	for k := 1; ; k++ {
		wait := time.Until(opened.Add(time.Duration(k) * *every))
		if time.Since(opened)+wait >= *duration {
			break
		}
		time.Sleep(wait)
		var sds []store.SourceData
		vs := vecindex.Clustered(*batch, *dim, uint64(100+k))
		picked := map[int]bool{}
		for i := range *batch {
			j := next
			if i%2 == 0 {
				// Rewrite an existing source, each once in a batch (a
				// source twice in one write is not what an indexer sends).
				for j = rng.IntN(st.Sources); picked[j]; j = rng.IntN(st.Sources) {
				}
				picked[j] = true
			} else {
				next++
			}
			sd := source(j, vs[i])
			sd.Source.ContentHash += fmt.Sprint(k)
			sds = append(sds, sd)
		}
		start := time.Now()
		if err := w.Replace(ctx, sds); err != nil {
			log.Fatalf("vectimeline: write: %v", err)
		}
		writes = append(writes, sample{start.Sub(opened), time.Since(start)})
	}
	<-done
	r.Close()
	report(samples, writes)
}

// waitForGraph opens the index long-lived, queries it once (which loads
// the vectors and starts the graph), and waits until the graph is saved
// beside the index or the time is up.
func waitForGraph(ctx context.Context, path string, approx int, q []float32, limit time.Duration) error {
	start := time.Now()
	s, err := app.OpenStoreWith(ctx, path, app.StoreOptions{LongLived: true, ApproxVectors: approx})
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.VectorSearch(ctx, q, 10, store.Filter{}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "vectors loaded in %.1f s; waiting for the graph ...\n", time.Since(start).Seconds())
	for time.Since(start) < limit {
		if _, err := os.Stat(path + ".hnsw"); err == nil {
			fmt.Fprintf(os.Stderr, "graph saved after %.0f s\n", time.Since(start).Seconds())
			return nil
		}
		time.Sleep(5 * time.Second)
	}
	fmt.Fprintf(os.Stderr, "no graph saved within %s\n", limit)
	return nil
}

// sample is one query or write: when it started (since the open) and how
// long it took.
type sample struct {
	at, took time.Duration
}

// report prints one line per second of the run.
func report(samples, writes []sample) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	if len(samples) > 0 {
		fmt.Printf("first query (loads the vectors): %.0f ms\n", ms(samples[0].took))
	}
	fmt.Println("second  queries  p50 ms  max ms  writes (commit ms)")
	for sec := 0; ; sec++ {
		var lat []time.Duration
		for _, s := range samples {
			if int(s.at/time.Second) == sec {
				lat = append(lat, s.took)
			}
		}
		var ws []string
		for _, w := range writes {
			if int(w.at/time.Second) == sec {
				ws = append(ws, fmt.Sprintf("%.0f", ms(w.took)))
			}
		}
		if len(lat) == 0 && len(ws) == 0 {
			if sec*int(time.Second) > int(samples[len(samples)-1].at) {
				return
			}
			fmt.Printf("%6d  %7d       -       -  %v\n", sec, 0, ws)
			continue
		}
		slices.Sort(lat)
		p50, worst := 0.0, 0.0
		if len(lat) > 0 {
			p50, worst = ms(lat[len(lat)/2]), ms(lat[len(lat)-1])
		}
		fmt.Printf("%6d  %7d  %6.2f  %6.1f  %v\n", sec, len(lat), p50, worst, ws)
	}
}

// source is synthetic source i: one chunk with vector v.
func source(i int, v []float32) store.SourceData {
	uri := fmt.Sprintf("synthetic/%07d.txt", i)
	text := fmt.Sprintf("vector %d", i)
	return store.SourceData{
		Source: doc.Source{
			ID: doc.SourceID(uri), URI: uri, Type: doc.TypeText, Format: doc.FormatText,
			Title: fmt.Sprintf("Vector %d", i), ContentHash: doc.ContentHash(text),
		},
		Content: text,
		Chunks:  []doc.Chunk{{Index: 0, Text: text, StartLine: 1, EndLine: 1, EndByte: len(text), Tokens: 2}},
		Vectors: [][]float32{v},
	}
}

// create makes an index of n synthetic single-chunk sources with
// clustered vectors.
func create(ctx context.Context, path string, n, dim int) error {
	s, err := app.OpenStoreWith(ctx, path, app.StoreOptions{Create: true})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.InitVectors(ctx, dim); err != nil {
		return err
	}
	start := time.Now()
	vs := vecindex.Clustered(n, dim, 1)
	const per = 5000
	for lo := 0; lo < n; lo += per {
		var sds []store.SourceData
		for i := lo; i < min(lo+per, n); i++ {
			sds = append(sds, source(i, vs[i]))
		}
		if err := s.Replace(ctx, sds); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "\rmade %d of %d vectors (%.0f s)", min(lo+per, n), n, time.Since(start).Seconds())
	}
	fmt.Fprintln(os.Stderr)
	return nil
}
