package watch

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The watch's costs, printed as benchmark metrics (run each once):
//
//	go test ./internal/watch -run '^$' -bench 'Watch' -benchtime 1x
//
// SAGASU_WATCH_BENCH_FILES sets the tree's size (default 10,000 files in
// 500 folders), SAGASU_WATCH_BENCH_IDLE how long the idle watch is
// measured (default 30s), SAGASU_WATCH_BENCH_SAVES how many saves are
// timed (default 20).

func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchTree writes n small markdown files in n/20 folders and returns a
// harness watching them, caught up.
func benchTree(b *testing.B, n int) *harness {
	h := newHarness(b)
	for i := range n {
		h.write(fmt.Sprintf("d%03d/f%05d.md", i%max(n/20, 1), i), fmt.Sprintf("# File %d\n\nSome text about topic %d and its details.\n", i, i%97))
	}
	start := time.Now()
	h.start(Options{Debounce: DefaultDebounce})
	b.Logf("%d files indexed and watched in %s", n, time.Since(start).Round(time.Millisecond))
	return h
}

// cpuTime is this process's user and system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssKB reads a VmRSS-like line of /proc/self/status, in kB (0 when there
// is none, off Linux).
func rssKB(field string) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			n, _ := strconv.Atoi(string(bytes.Fields(v)[0]))
			return n
		}
	}
	return 0
}

// BenchmarkWatchIdle: the CPU time and memory of a watch over a tree in
// which nothing changes.
func BenchmarkWatchIdle(b *testing.B) {
	files := benchEnv("SAGASU_WATCH_BENCH_FILES", 10000)
	idle := time.Duration(benchEnv("SAGASU_WATCH_BENCH_IDLE", 30)) * time.Second
	h := benchTree(b, files)
	b.ResetTimer()
	for range b.N {
		before := cpuTime(b)
		time.Sleep(idle)
		used := cpuTime(b) - before
		b.ReportMetric(float64(used.Microseconds())/1000/idle.Seconds(), "cpu-ms/s")
	}
	b.StopTimer()
	b.ReportMetric(float64(rssKB("VmRSS"))/1024, "rss-MB")
	b.ReportMetric(float64(rssKB("VmHWM"))/1024, "peak-rss-MB")
	b.ReportMetric(float64(len(h.ts.Freshness().States())), "roots")
}

// BenchmarkWatchSaveToSearchable: the time from writing a file to the
// first query that finds its new word, with the default debounce.
func BenchmarkWatchSaveToSearchable(b *testing.B) {
	files := benchEnv("SAGASU_WATCH_BENCH_FILES", 10000)
	saves := benchEnv("SAGASU_WATCH_BENCH_SAVES", 20)
	h := benchTree(b, files)
	b.ResetTimer()
	for range b.N {
		var took []time.Duration
		for i := range saves {
			word := fmt.Sprintf("quokka%dx%d", i, time.Now().UnixNano())
			start := time.Now()
			h.write("d000/saved.md", "# Saved\n\nThe word is "+word+".\n")
			for len(h.find(word)) == 0 {
				time.Sleep(time.Millisecond)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
		b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
		b.ReportMetric(float64(took[0].Microseconds())/1000, "min-ms")
	}
}
