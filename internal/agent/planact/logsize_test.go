package planact

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/mcpclient"
)

// BenchmarkScriptedRunLog runs the scripted shop goal of
// TestPlanActReplansAfterAToolError (plan, a failed click, a replan, the
// price read) and reports the bytes per run of its log and checkpoints, as
// stored and as whole states in every checkpoint (the format before
// deltas). In the "page" case the shop's pages are 4,000 characters long,
// as a browser snapshot cut to the observation cap is.
func BenchmarkScriptedRunLog(b *testing.B) {
	for _, page := range []int{0, 4000} {
		b.Run(fmt.Sprintf("page=%d", page), func(b *testing.B) {
			var size graph.Size
			for i := range b.N {
				web := shop()
				if page > 0 {
					inner := web.call
					web.call = func(name string, args json.RawMessage) (mcpclient.Result, error) {
						res, err := inner(name, args)
						if n := page - len(res.Text); n > 0 && !res.IsError {
							res.Text = strings.Repeat("- generic [ref=e9]: navigation link\n", n/36+1)[:n] + res.Text
						}
						return res, err
					}
				}
				log := graph.NewMemLog()
				a, err := New(Options{Model: shopRoles().model(40), MCP: web, Log: log})
				if err != nil {
					b.Fatal(err)
				}
				run := fmt.Sprintf("shop-%d", i)
				res, err := a.Run(context.Background(), RunInput{Goal: "Find the price of green tea at the shop", RunID: run})
				if err != nil || res.Outcome != OutcomeSuccess {
					b.Fatalf("run: %v %+v", err, res)
				}
				evs, _ := log.Events(context.Background(), run)
				s, err := graph.Measure(evs)
				if err != nil {
					b.Fatal(err)
				}
				size = size.Plus(s)
			}
			n := float64(b.N)
			b.ReportMetric(float64(size.Log)/n, "log-B/run")
			b.ReportMetric(float64(size.Checkpoints)/n, "checkpoint-B/run")
			b.ReportMetric(float64(size.WholeCheckpoints)/n, "whole-checkpoint-B/run")
			b.ReportMetric(float64(size.WholeLog())/n, "whole-log-B/run")
		})
	}
}
