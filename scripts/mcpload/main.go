// Command mcpload is a bounded loopback load test of `sagasu mcp --http`:
// for each sagasu binary it is given, it indexes a folder of documents
// (keyword search, no model), starts the server on 127.0.0.1, runs rounds
// of 1, 4, 16 and 64 concurrent MCP clients (each its own session, each
// making a fixed number of sagasu_search calls with varied queries), stops
// the server and prints a table per binary: clients, calls, errors,
// throughput, p50 and p99. It talks to the server only over HTTP, so it
// measures any build, such as one of an older commit, alike.
// scripts/mcp-load.sh builds the binaries and runs it.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
)

// binaries collects -bin NAME=PATH flags in order.
type binaries [][2]string

func (b *binaries) String() string { return fmt.Sprint(*b) }

func (b *binaries) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("-bin %q: give NAME=PATH", v)
	}
	*b = append(*b, [2]string{name, path})
	return nil
}

type config struct {
	docs    string
	clients []int
	calls   int
	mode    string
	timeout time.Duration
}

func main() {
	var (
		bins    binaries
		clients string
		cfg     config
	)
	flag.Var(&bins, "bin", "NAME=PATH of a sagasu binary to measure (repeatable; each gets its own table)")
	flag.StringVar(&cfg.docs, "docs", "docs", "folder of documents to index and search")
	flag.StringVar(&clients, "clients", "1,4,16,64", "concurrent clients of each round")
	flag.IntVar(&cfg.calls, "calls", 12, "sagasu_search calls each client makes per round")
	flag.StringVar(&cfg.mode, "mode", "summary", "sagasu_search mode: summary, detailed or full")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "give up after this long")
	flag.Parse()
	log.SetFlags(0)
	if len(bins) == 0 {
		log.Fatal("mcpload: give at least one -bin NAME=PATH")
	}
	for _, c := range strings.Split(clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			log.Fatalf("mcpload: -clients %q: give positive numbers separated by commas", clients)
		}
		cfg.clients = append(cfg.clients, n)
	}
	docs, err := filepath.Abs(cfg.docs)
	if err != nil {
		log.Fatal(err)
	}
	cfg.docs = docs
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	// Every build serves at once, and the rounds alternate between them,
	// so that each round of each build meets the machine in the same state
	// (on a shared machine the load of others changes by the minute).
	urls := make([]endpoint, len(bins))
	for i, b := range bins {
		url, stop, err := prepare(ctx, b[1], cfg)
		if err != nil {
			log.Fatalf("mcpload: %s (%s): %v", b[0], b[1], err)
		}
		defer stop()
		urls[i] = url
	}
	rows := make([][]row, len(bins))
	for ri, n := range cfg.clients {
		for i, b := range bins {
			r, err := round(ctx, urls[i], n, cfg.calls, cfg.mode, ri*1000)
			if err != nil {
				log.Fatalf("mcpload: %s: %d clients: %v", b[0], n, err)
			}
			rows[i] = append(rows[i], r)
		}
	}
	for i, b := range bins {
		fmt.Printf("\n%s: %s, sagasu_search mode %s, %d calls per client, %s\n", b[0], b[1], cfg.mode, cfg.calls, cfg.docs)
		fmt.Printf("%8s %7s %7s %10s %9s %9s\n", "clients", "calls", "errors", "calls/s", "p50 ms", "p99 ms")
		for _, r := range rows[i] {
			fmt.Printf("%8d %7d %7d %10.1f %9.1f %9.1f\n", r.clients, r.calls, r.errors, r.throughput, r.p50, r.p99)
		}
		for _, r := range rows[i] {
			if r.firstError != "" {
				fmt.Printf("first error at %d clients: %s\n", r.clients, r.firstError)
			}
		}
	}
}

// row is one round's result.
type row struct {
	clients, calls, errors int
	throughput, p50, p99   float64
	firstError             string
}

// prepare indexes the documents with bin into a new folder, serves them
// and warms the server; stop ends the server and removes the folder.
func prepare(ctx context.Context, bin string, cfg config) (ep endpoint, stop func(), err error) {
	dir, err := os.MkdirTemp("", "mcpload-")
	if err != nil {
		return endpoint{}, nil, err
	}
	db := filepath.Join(dir, "sagasu.db")
	index := exec.CommandContext(ctx, bin, "--db", db, "index", cfg.docs)
	index.Dir, index.Env = dir, cleanEnv()
	if out, err := index.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return endpoint{}, nil, fmt.Errorf("index %s: %v\n%s", cfg.docs, err, out)
	}
	ep, halt, err := serve(ctx, bin, dir, db, cfg.docs)
	if err != nil {
		os.RemoveAll(dir)
		return endpoint{}, nil, err
	}
	stop = func() { halt(); os.RemoveAll(dir) }
	// Warm the server (caches, the tokenizer) before the first round.
	if _, err := round(ctx, ep, 1, 5, cfg.mode, 1000); err != nil {
		stop()
		return endpoint{}, nil, err
	}
	return ep, stop, nil
}

// cleanEnv is the environment without sagasu's settings, so no embedder or
// model configured for the user joins the measurement.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SAGASU_") {
			env = append(env, kv)
		}
	}
	return env
}

// endpoint is a started server: its URL and the bearer token it takes.
type endpoint struct{ url, token string }

// serve starts `bin mcp --http 127.0.0.1:0` with a fresh token and returns
// its endpoint and a stop function.
func serve(ctx context.Context, bin, dir, db, root string) (endpoint, func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	tok := make([]byte, 24)
	_, _ = rand.Read(tok)
	token := hex.EncodeToString(tok)
	cmd := exec.CommandContext(ctx, bin, "--db", db, "mcp", "--http", "127.0.0.1:0", "--root", root, "--token", token)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		cancel()
		return endpoint{}, nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return endpoint{}, nil, err
	}
	stop := func() { cancel(); _ = cmd.Wait() }
	lines := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
	for lines.Scan() {
		if u := re.FindString(lines.Text()); u != "" {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return endpoint{u, token}, stop, nil
		}
	}
	stop()
	return endpoint{}, nil, fmt.Errorf("%s mcp --http printed no address", bin)
}

// queries are goals and queries about the VitePress documentation, mixed
// so that clients rarely ask the same thing at once.
var (
	goals = []string{"configure the sidebar", "deploy the site", "write a custom theme", "use Vue in Markdown",
		"set up internationalization", "generate a sitemap", "add search to the site", "extend the default theme"}
	words = []string{"sidebar", "deploy", "theme", "markdown", "vue component", "i18n locales", "sitemap", "search",
		"frontmatter", "layout", "routing", "build", "config", "nav", "plugins", "assets", "head tags", "dark mode",
		"code blocks", "home page", "last updated", "edit link", "team page", "badge", "carbon ads", "social links"}
)

func query(i int) (goal, q string) {
	return goals[i%len(goals)], words[i%len(words)] + " " + words[(i*7+3)%len(words)]
}

// round runs n clients making calls sagasu_search calls each, and measures
// every call's round trip.
func round(ctx context.Context, ep endpoint, n, calls int, mode string, seed int) (row, error) {
	var (
		mu       sync.Mutex
		lat      []float64
		errs     int
		wg       sync.WaitGroup
		connErr  error
		firstErr string
	)
	sessions := make([]*mcp.ClientSession, n)
	for c := range n {
		client := mcp.NewClient(&mcp.Implementation{Name: "mcpload", Version: "1"}, nil)
		// Each client its own connections, as separate agents have.
		hc := &http.Client{Transport: httpguardtest.Bearer(ep.token, &http.Transport{MaxIdleConnsPerHost: 4})}
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ep.url, HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			connErr = err
			break
		}
		sessions[c] = cs
	}
	defer func() {
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
	}()
	if connErr != nil {
		return row{}, fmt.Errorf("connect: %w", connErr)
	}
	start := time.Now()
	for c, cs := range sessions {
		wg.Go(func() {
			for i := range calls {
				goal, q := query(seed + c*calls + i)
				callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
				t := time.Now()
				res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "sagasu_search", Arguments: map[string]any{
					"goal": goal, "query": q, "options": map[string]any{"mode": mode}}})
				d := time.Since(t)
				cancel()
				mu.Lock()
				lat = append(lat, float64(d.Microseconds())/1000)
				if err != nil || res.IsError {
					errs++
					if firstErr == "" {
						firstErr = fmt.Sprint(err)
						if err == nil && len(res.Content) > 0 {
							if tc, ok := res.Content[0].(*mcp.TextContent); ok {
								firstErr = tc.Text
							}
						}
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	slices.Sort(lat)
	return row{clients: n, calls: len(lat), errors: errs, throughput: float64(len(lat)) / took.Seconds(),
		p50: percentile(lat, 0.50), p99: percentile(lat, 0.99), firstError: firstErr}, nil
}

// percentile of sorted values, nearest rank.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
