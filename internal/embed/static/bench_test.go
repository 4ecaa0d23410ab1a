package static

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// The full GloVe model comes from scripts/glove-subset.sh and SciFact from
// the shared data folder beside the repository; the benchmarks skip
// without them. SAGASU_GLOVE and SAGASU_SCIFACT (the folder) point elsewhere.
func benchPaths(b *testing.B) (model, corpus string) {
	model = os.Getenv("SAGASU_GLOVE")
	if model == "" {
		model = filepath.Join("..", "..", "..", ".tools", "models", "glove-100d.bin")
	}
	_, err := os.Stat(model)
	testenv.Need(b, err == nil, model+" is missing: run scripts/glove-subset.sh for the model (or set SAGASU_GLOVE)")
	return model, filepath.Join(testenv.SciFact(b), "corpus.jsonl")
}

func sciFact(b *testing.B, path string) (texts []string, bytes int) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var d struct{ Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			b.Fatal(err)
		}
		texts = append(texts, d.Title+"\n\n"+d.Text)
		bytes += len(texts[len(texts)-1])
	}
	return texts, bytes
}

// BenchmarkSciFact embeds the 5,183 SciFact abstracts (title and text, one
// chunk each) with the full GloVe model, and reports chunks per second:
// "wrapped" through embed.New as the indexer uses it (4 batches at once),
// "serial" on one goroutine.
func BenchmarkSciFact(b *testing.B) {
	model, corpus := benchPaths(b)
	texts, size := sciFact(b, corpus)
	c, err := Open(model, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	run := func(b *testing.B, embedAll func() error) {
		b.SetBytes(int64(size))
		for b.Loop() {
			if err := embedAll(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(texts))*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
	}
	b.Run("wrapped", func(b *testing.B) {
		e := embed.New(c, embed.Options{})
		run(b, func() error { _, err := e.EmbedDocuments(ctx, texts); return err })
	})
	b.Run("serial", func(b *testing.B) {
		run(b, func() error { _, err := c.Embed(ctx, texts, embed.TaskDocument); return err })
	})
}

// BenchmarkOpenGloVe loads the full GloVe model, as each sagasu command
// that embeds does once.
func BenchmarkOpenGloVe(b *testing.B) {
	model, _ := benchPaths(b)
	for b.Loop() {
		if _, err := Open(model, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
