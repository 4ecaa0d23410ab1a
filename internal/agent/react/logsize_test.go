package react

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/testcorpus"
)

// BenchmarkOfflineRunLog answers the project's question set
// (testdata/ask/vitepress.json) offline over the VitePress documents and
// reports the bytes per run of the log and of its checkpoints, as stored
// and as whole states in every checkpoint (the format before deltas).
func BenchmarkOfflineRunLog(b *testing.B) {
	raw, err := os.ReadFile("../../../testdata/ask/vitepress.json")
	if err != nil {
		b.Fatal(err)
	}
	var set struct {
		Questions []struct{ Question string } `json:"questions"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		b.Fatal(err)
	}
	fns := functions(b, testcorpus.VitePress(b))
	b.ResetTimer()
	var runs int
	var size graph.Size
	for range b.N {
		log := graph.NewMemLog()
		a := New(fns, Options{Log: log})
		for _, q := range set.Questions {
			res, err := a.Answer(context.Background(), q.Question)
			if err != nil {
				b.Fatal(err)
			}
			evs, _ := log.Events(context.Background(), res.Trace[0].Run)
			s, err := graph.Measure(evs)
			if err != nil {
				b.Fatal(err)
			}
			runs, size = runs+1, size.Plus(s)
		}
	}
	reportSize(b, size, runs)
}

// reportSize reports a log's bytes per run.
func reportSize(b *testing.B, s graph.Size, runs int) {
	b.ReportMetric(float64(s.Log)/float64(runs), "log-B/run")
	b.ReportMetric(float64(s.Checkpoints)/float64(runs), "checkpoint-B/run")
	b.ReportMetric(float64(s.WholeCheckpoints)/float64(runs), "whole-checkpoint-B/run")
	b.ReportMetric(float64(s.WholeLog())/float64(runs), "whole-log-B/run")
}
