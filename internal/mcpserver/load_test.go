package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
)

// BenchmarkHTTPSearchClients runs sagasu_search over streamable HTTP from
// several clients at once (each its own session and connections) and
// reports the latency percentiles. With -mutexprofile and -blockprofile it
// shows where concurrent calls wait for each other.
func BenchmarkHTTPSearchClients(b *testing.B) {
	f := newFixture(b, Options{})
	var ds []doc.Document
	for i := range 40 {
		ds = append(ds, english(i, 4, 40))
	}
	for i := range 10 {
		ds = append(ds, japanese(100+i, 3, 12))
	}
	f.add(512, ds...)
	ts := httptest.NewServer(f.srv.Handler(HTTPOptions{Token: "bench"}))
	defer ts.Close()
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			ctx := context.Background()
			sessions := make([]*mcp.ClientSession, clients)
			for c := range sessions {
				hc := &http.Client{Transport: httpguardtest.Bearer("bench", &http.Transport{MaxIdleConnsPerHost: 4})}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: ts.URL + Path, HTTPClient: hc, MaxRetries: -1}, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				sessions[c] = cs
			}
			var (
				next atomic.Int64
				mu   sync.Mutex
				lat  []float64
				wg   sync.WaitGroup
			)
			b.ResetTimer()
			for c, cs := range sessions {
				wg.Go(func() {
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						t := time.Now()
						res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{
							"goal": "configure the sidebar navigation", "query": fmt.Sprintf("sidebar option%d value%d", (int(i)+c)%97, int(i)%101)}})
						d := time.Since(t)
						if err != nil || res.IsError {
							b.Errorf("call %d: %v %v", i, err, res)
							return
						}
						mu.Lock()
						lat = append(lat, float64(d.Microseconds())/1000)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(lat[len(lat)/2], "p50-ms")
				b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
			}
		})
	}
}
