// Command mcpcost measures what sagasu's MCP surface costs a client in
// tokens (o200k_base, no margin): the tools/list result in total and per
// tool, and a coding agent's typical session of calls (session.mjs: list,
// query, search, get, evaluate, refine, search again) as the official
// TypeScript SDK client receives it. For each binary given it indexes the
// same folder into a fresh database, runs the session and prints a table,
// so an old build and a new one are compared on the same documents.
//
//	go run ./scripts/mcpcost -bin old=/path/sagasu-old -bin new=bin/sagasu \
//	    -docs ../shared/data/vitepress-docs/en -goal "..." -query "..."
//
// Needs node and scripts/mcp-clients.sh's clients ($SAGASU_MCP_CLIENTS, or
// .tools/mcp-clients). -json FILE writes the raw session of the last binary.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/budget"
)

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

// session is what session.mjs prints.
type session struct {
	Tools struct {
		Tools []json.RawMessage `json:"tools"`
	} `json:"tools"`
	Calls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Result    json.RawMessage `json:"result"`
		Missing   bool            `json:"missing"`
	} `json:"calls"`
}

func main() {
	var bins binaries
	flag.Var(&bins, "bin", "NAME=PATH of a sagasu binary (repeat to compare)")
	docs := flag.String("docs", "", "folder of documents to index")
	goal := flag.String("goal", "understand how to configure the sidebar and the navigation bar", "the session's goal")
	query := flag.String("query", "sidebar configuration", "the session's first query")
	mcpArgs := flag.String("mcp-args", "", "extra arguments after `mcp`, as NAME=ARGS (space-separated), e.g. new=--tools=all")
	rawOut := flag.String("json", "", "write the raw session of the last binary here")
	flag.Parse()
	if len(bins) == 0 || *docs == "" {
		log.Fatal("give -bin NAME=PATH (one or more) and -docs FOLDER")
	}
	clients := os.Getenv("SAGASU_MCP_CLIENTS")
	if clients == "" {
		clients, _ = filepath.Abs(".tools/mcp-clients")
	}
	script, _ := filepath.Abs("scripts/mcpcost/session.mjs")
	counter, err := budget.New(budget.Options{Encoding: budget.O200k})
	if err != nil {
		log.Fatal(err)
	}
	extra := map[string][]string{}
	for _, kv := range strings.Split(*mcpArgs, ",") {
		if name, args, ok := strings.Cut(kv, "="); ok {
			extra[name] = strings.Fields(args)
		}
	}
	for _, b := range bins {
		name, bin := b[0], b[1]
		dir, err := os.MkdirTemp("", "mcpcost")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		db := filepath.Join(dir, "cost.db")
		if out, err := exec.Command(bin, "--db", db, "index", *docs).CombinedOutput(); err != nil {
			log.Fatalf("%s: index %s: %v\n%s", name, *docs, err, out)
		}
		cmd := append([]string{bin, "--db", db, "mcp"}, extra[name]...)
		stdio, _ := json.Marshal(cmd)
		run := exec.Command("node", script, "--stdio", string(stdio), "--goal", *goal, "--query", *query)
		run.Env = append(os.Environ(), "SAGASU_MCP_CLIENTS="+clients)
		var stderr bytes.Buffer
		run.Stderr = &stderr
		raw, err := run.Output()
		if err != nil {
			log.Fatalf("%s: session: %v\n%s", name, err, stderr.String())
		}
		if *rawOut != "" {
			if err := os.WriteFile(*rawOut, raw, 0o644); err != nil {
				log.Fatal(err)
			}
		}
		var s session
		if err := json.Unmarshal(raw, &s); err != nil {
			log.Fatalf("%s: read the session: %v", name, err)
		}
		report(counter, name, s)
	}
}

func report(c *budget.Counter, name string, s session) {
	list, _ := json.Marshal(s.Tools)
	listTokens := c.Count(string(list))
	fmt.Printf("== %s\ntools/list: %d tools, %d tokens (%d bytes)\n", name, len(s.Tools.Tools), listTokens, len(list))
	type tool struct {
		name           string
		tokens, output int
	}
	var ts []tool
	for _, raw := range s.Tools.Tools {
		var t struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		_ = json.Unmarshal(raw, &t)
		ot := 0
		if len(t.OutputSchema) > 0 {
			ot = c.Count(string(t.OutputSchema))
		}
		ts = append(ts, tool{t.Name, c.Count(string(raw)), ot})
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].tokens > ts[j].tokens })
	for _, t := range ts {
		fmt.Printf("  %-28s %6d  (output schema %d)\n", t.name, t.tokens, t.output)
	}
	total, text := listTokens, listTokens
	fmt.Printf("session (tokens of arguments + whole result | of arguments + text content only):\n")
	for _, call := range s.Calls {
		if call.Missing {
			fmt.Printf("  %-28s not offered\n", call.Name)
			continue
		}
		args := c.Count(string(call.Arguments))
		whole := c.Count(string(call.Result))
		var r struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(call.Result, &r)
		var b strings.Builder
		for _, ct := range r.Content {
			b.WriteString(ct.Text)
		}
		tx := c.Count(b.String())
		total += args + whole
		text += args + tx
		fmt.Printf("  %-28s args %5d  result %6d | text %6d\n", call.Name, args, whole, tx)
	}
	fmt.Printf("session total with tools/list: %d tokens (whole results) | %d (text content only)\n\n", total, text)
}
