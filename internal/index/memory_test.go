package index_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// BenchmarkLargeFile indexes one large file, keyword only, into a new SQLite
// index and reports the peak Go heap and the process's peak RSS beside the
// file's size: memory should stay near the file once plus a constant, not a
// multiple of it. The file is SciFact abstracts (text) or the VitePress
// docs (markdown) repeated to SAGASU_BENCH_FILE_MB megabytes (default 8; 50
// reproduces the measurements in issue 16). Run one sub-benchmark per
// process (-bench LargeFile/text) for a meaningful peak RSS.
func BenchmarkLargeFile(b *testing.B) {
	mb := 8
	if v, err := strconv.Atoi(os.Getenv("SAGASU_BENCH_FILE_MB")); err == nil && v > 0 {
		mb = v
	}
	for _, kind := range []string{"text", "markdown"} {
		b.Run(kind, func(b *testing.B) {
			path := largeFile(b, kind, mb<<20)
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			var peakHeap uint64
			for b.Loop() {
				s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "i.db"), sqlite.Options{Create: true})
				if err != nil {
					b.Fatal(err)
				}
				stop := sampleHeap(&peakHeap)
				ix := index.New(s, index.Options{Source: source.Options{MaxFileSize: fi.Size()}})
				rep, err := ix.Run(context.Background(), []string{path})
				stop()
				s.Close()
				if err != nil || rep.Chunks == 0 {
					b.Fatalf("index %s: %v (%d chunks)", path, err, rep.Chunks)
				}
			}
			b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
			b.ReportMetric(float64(peakHeap)/1e6, "peak-heap-MB")
			if rss := peakRSS(); rss > 0 {
				b.ReportMetric(float64(rss)/1e6, "peak-rss-MB")
			}
		})
	}
}

// largeFile writes a file of about size bytes of kind text or markdown.
func largeFile(b *testing.B, kind string, size int) string {
	b.Helper()
	var parts []string
	switch kind {
	case "text":
		data, err := os.ReadFile(filepath.Join(testenv.SciFact(b), "corpus.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var d struct{ Title, Text string }
			if json.Unmarshal(sc.Bytes(), &d) == nil {
				parts = append(parts, d.Title+"\n\n"+d.Text+"\n\n")
			}
		}
	default:
		root := testenv.Shared(b, "vitepress-docs")
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".md") {
				if data, err := os.ReadFile(p); err == nil {
					parts = append(parts, string(data)+"\n\n")
				}
			}
			return nil
		})
	}
	if len(parts) == 0 {
		b.Fatalf("no %s to build a large file of", kind)
	}
	var w strings.Builder
	for rep := 0; w.Len() < size; rep++ {
		if kind == "markdown" {
			fmt.Fprintf(&w, "# Part %d\n\n", rep)
		}
		for _, p := range parts {
			w.WriteString(p)
			if w.Len() >= size {
				break
			}
		}
	}
	ext := map[string]string{"text": ".txt", "markdown": ".md"}[kind]
	path := filepath.Join(b.TempDir(), "large"+ext)
	if err := os.WriteFile(path, []byte(w.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// sampleHeap records the largest Go heap in use (objects, live or not yet
// collected) into peak until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// peakRSS is the process's peak resident set size (VmHWM), or 0 where
// /proc does not tell it.
func peakRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
