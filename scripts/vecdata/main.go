// Command vecdata makes a vector file of real sentence embeddings for the
// vector bench (sagasu bench --vectors N --vectors-from FILE) and for
// other engines: the sentences of a BEIR corpus (title and abstract
// sentences, then runs of two and three consecutive sentences, until --n
// texts) embedded by an in-process model, and the dataset's queries
// embedded as held-out queries (they are not in the collection).
//
//	go run ./scripts/vecdata --model .tools/models/all-MiniLM-L6-v2 \
//	    --corpus ../shared/data/scifact/corpus.jsonl --n 100000 --out scifact-minilm.vec
//
// The bench extends a file to larger collections by mixing pairs of its
// rows (see docs/performance.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/local"
	"github.com/sagasu-dev/sagasu/internal/eval"
)

func main() {
	var (
		model   = flag.String("model", "", "folder of a sentence-transformers model (e.g. .tools/models/all-MiniLM-L6-v2)")
		corpus  = flag.String("corpus", "../shared/data/scifact/corpus.jsonl", "BEIR corpus.jsonl; its queries.jsonl beside it gives the queries")
		n       = flag.Int("n", 100_000, "texts to embed for the collection")
		out     = flag.String("out", "", "vector file to write")
		batch   = flag.Int("batch", 2048, "texts per progress line")
		queries = flag.String("queries", "", "queries.jsonl (default: beside --corpus)")
	)
	flag.Parse()
	if *model == "" || *out == "" {
		log.Fatal("vecdata: pass --model FOLDER and --out FILE")
	}
	texts, err := eval.ReadTexts(*corpus)
	if err != nil {
		log.Fatal(err)
	}
	if *queries == "" {
		*queries = filepath.Join(filepath.Dir(*corpus), "queries.jsonl")
	}
	qs, err := eval.ReadTexts(*queries)
	if err != nil {
		log.Fatal(err)
	}
	units := textUnits(texts, *n)
	c, err := local.Open(*model, local.Options{})
	if err != nil {
		log.Fatal(err)
	}
	e := embed.New(c, local.EmbedOptions(0))
	ctx := context.Background()
	start := time.Now()
	qv, err := e.EmbedDocuments(ctx, qs)
	if err != nil {
		log.Fatal(err)
	}
	var rows [][]float32
	for i := 0; i < len(units); i += *batch {
		vs, err := e.EmbedDocuments(ctx, units[i:min(i+*batch, len(units))])
		if err != nil {
			log.Fatal(err)
		}
		rows = append(rows, vs...)
		fmt.Fprintf(os.Stderr, "%d of %d texts embedded, %.0f s\n", len(rows), len(units), time.Since(start).Seconds())
	}
	if err := eval.WriteVectorFile(*out, rows, qv); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d rows and %d queries of %d dimensions (%s)\n", *out, len(rows), len(qv), len(rows[0]), c.Info().Model)
}

// textUnits returns up to n texts of the corpus: every sentence (a title
// counts as one), then every run of two consecutive sentences, then of
// three, in corpus order.
func textUnits(texts []string, n int) []string {
	docs := make([][]string, len(texts))
	for i, t := range texts {
		for s := range strings.SplitSeq(t, ". ") {
			if s = strings.TrimSpace(s); len(s) > 1 {
				docs[i] = append(docs[i], s)
			}
		}
	}
	var out []string
	for run := 1; run <= 3 && len(out) < n; run++ {
		for _, ss := range docs {
			for i := 0; i+run <= len(ss) && len(out) < n; i++ {
				out = append(out, strings.Join(ss[i:i+run], ". "))
			}
		}
	}
	return out
}
