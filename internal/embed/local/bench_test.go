package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/viterin/vek/vek32"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

func randSlice(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// BenchmarkGemm: one linear layer's product over 2,046 tokens (a full pass)
// with this package's kernels and with vek's MatMul, in GFLOP/s on one core.
func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const m = 2046
	for _, shape := range [][2]int{{384, 1536}, {1536, 384}, {384, 1152}} {
		k, n := shape[0], shape[1]
		a := randSlice(r, (m+mr)*k)
		w := randSlice(r, n*k)
		c := make([]float32, (m+mr)*n)
		var p packed
		packRows(&p, w, n, k, k)
		flops := 2 * float64(m) * float64(k) * float64(n)
		for name, kern := range map[string]func([]float32, int, []float32, []float32, int, int){"go": kernelGo, "asm": kernel} {
			b.Run(fmt.Sprintf("%s/%dx%d", name, k, n), func(b *testing.B) {
				saved := kernel
				kernel = kern
				defer func() { kernel = saved }()
				c0 := cpuTime()
				for b.Loop() {
					gemm(c, n, a, k, m, &p)
				}
				report(b, flops, c0)
			})
		}
		b.Run(fmt.Sprintf("vek/%dx%d", k, n), func(b *testing.B) {
			wt := make([]float32, k*n) // vek wants B as k rows of n
			for i := 0; i < n; i++ {
				for j := 0; j < k; j++ {
					wt[j*n+i] = w[i*k+j]
				}
			}
			c0 := cpuTime()
			for b.Loop() {
				vek32.MatMul_Into(c, a[:m*k], wt, k)
			}
			report(b, flops, c0)
		})
	}
}

// report gives GFLOP/s of wall-clock time and GFLOP per CPU-second.
func report(b *testing.B, flops float64, c0 time.Duration) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu := cpuTime() - c0; cpu > 0 {
		b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
	}
}

// BenchmarkEmbed: the test model over the reference texts' VitePress
// paragraphs, as chunks/s.
func BenchmarkEmbed(b *testing.B) {
	c, err := Open(embedtest.LocalModel(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, t := range embedtest.RefTexts(b) {
		texts = append(texts, t.Text)
	}
	texts = texts[250:350]
	e := embed.New(c, EmbedOptions(0))
	c0 := cpuTime()
	for b.Loop() {
		if _, err := e.EmbedDocuments(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "chunks/s")
	if cpu := cpuTime() - c0; cpu > 0 {
		b.ReportMetric(float64(len(texts)*b.N)/cpu.Seconds(), "chunks/cpu-s")
	}
}
