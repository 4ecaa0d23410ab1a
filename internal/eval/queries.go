package eval

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/search"
)

// Query is one labelled question of a query set: the pages that answer it
// (grade 2) and those related to it (grade 1), by path.
type Query struct {
	ID    string
	Text  string
	Pages map[string]int // page path → grade
	Line  int            // where it is in its file
}

// LoadQueries reads a query set from a TSV file (see ParseQueries).
func LoadQueries(path string) ([]Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("query set: %w", err)
	}
	defer f.Close()
	qs, err := ParseQueries(f)
	if err != nil {
		return nil, fmt.Errorf("query set %s: %w", path, err)
	}
	return qs, nil
}

// ParseQueries reads a query set: one query a line, three fields separated
// by tabs — an ID, the query, and its judgments, space-separated
// page=grade pairs where grade is 2 for a page that answers the query and 1
// for a related page (0 may be written for an explicitly irrelevant one).
// Blank lines and lines starting with # are skipped. Errors name the line
// and what is wrong with it.
func ParseQueries(r io.Reader) ([]Query, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var out []Query
	seen := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 3 {
			return nil, fmt.Errorf("line %d: %d tab-separated fields, want 3 (id, query, judgments)", n, len(fields))
		}
		q := Query{ID: strings.TrimSpace(fields[0]), Text: strings.TrimSpace(fields[1]), Pages: map[string]int{}, Line: n}
		switch {
		case q.ID == "":
			return nil, fmt.Errorf("line %d: the query ID (first field) is empty", n)
		case q.Text == "":
			return nil, fmt.Errorf("line %d: query %s has no text (second field)", n, q.ID)
		case seen[q.ID] > 0:
			return nil, fmt.Errorf("line %d: query ID %s is already used on line %d", n, q.ID, seen[q.ID])
		}
		seen[q.ID] = n
		answers := 0
		for _, j := range strings.Fields(fields[2]) {
			page, g, ok := strings.Cut(j, "=")
			if !ok || page == "" {
				return nil, fmt.Errorf("line %d: judgment %q is not page=grade", n, j)
			}
			grade, err := strconv.Atoi(g)
			if err != nil || grade < 0 || grade > 2 {
				return nil, fmt.Errorf("line %d: judgment %q: grade %q is not 0, 1 or 2", n, j, g)
			}
			if _, dup := q.Pages[page]; dup {
				return nil, fmt.Errorf("line %d: page %s is judged twice", n, page)
			}
			q.Pages[page] = grade
			if grade > 0 {
				answers++
			}
		}
		if answers == 0 {
			return nil, fmt.Errorf("line %d: query %s judges no page relevant: give at least one page=2 or page=1", n, q.ID)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no queries: write one a line as id<TAB>query<TAB>page=grade (see docs/eval.md)")
	}
	return out, nil
}

// QueryOutcome is how one query of a set ranked.
type QueryOutcome struct {
	ID     string   `json:"id"`
	Query  string   `json:"query"`
	NDCG   float64  `json:"ndcgAt10"`
	Rank   int      `json:"rank"`             // of the first page graded 2 (1-based), 0 beyond 10
	Top    []string `json:"top"`              // the first pages returned, at most 3
	Missed []string `json:"missed,omitempty"` // judged pages not in the top 10
}

// QueriesResult is what `sagasu eval queries` prints.
type QueriesResult struct {
	Set        string         `json:"set"`
	Mode       string         `json:"mode"`
	Queries    int            `json:"queries"`
	NDCGAt10   float64        `json:"ndcgAt10"`
	RecallAt10 float64        `json:"recallAt10"`
	MRRAt10    float64        `json:"mrrAt10"`
	Latency    Latency        `json:"latencyMs"`
	PerQuery   []QueryOutcome `json:"perQuery"`
}

// pageOf maps a result URI to the judged page it is: the page itself, or
// the page the URI ends with after a slash ("en/guide/routing.md" is
// "guide/routing.md"), so judgments need not know where the docs were
// indexed from.
func pageOf(uri string, pages map[string]int) string {
	if _, ok := pages[uri]; ok {
		return uri
	}
	u := strings.ReplaceAll(uri, "\\", "/")
	for p := range pages {
		if strings.HasSuffix(u, "/"+strings.TrimPrefix(p, "/")) {
			return p
		}
	}
	return uri
}

// RunQueries searches every query of a set with e and scores the page
// rankings: nDCG@10 with the grades as gains, recall@10 of the pages
// graded 1 or 2, and MRR@10 of the first page graded 2.
func RunQueries(ctx context.Context, e *search.Engine, set string, qs []Query, mode search.Mode) (QueriesResult, error) {
	res := QueriesResult{Set: set, Mode: string(mode), Queries: len(qs)}
	lat := make([]time.Duration, 0, len(qs))
	for _, q := range qs {
		start := time.Now()
		resp, err := e.Search(ctx, search.Request{Query: q.Text, K: 100, Mode: mode})
		if err != nil && !errors.Is(err, search.ErrEmptyQuery) {
			return res, fmt.Errorf("query %s (line %d): %w", q.ID, q.Line, err)
		}
		lat = append(lat, time.Since(start))
		uris := RankDocs(resp.Hits, 10)
		ranked := make([]string, len(uris))
		for i, u := range uris {
			ranked[i] = pageOf(u, q.Pages)
		}
		answers := map[string]int{}
		for p, g := range q.Pages {
			if g == 2 {
				answers[p] = 1
			}
		}
		o := QueryOutcome{ID: q.ID, Query: q.Text, NDCG: NDCG(ranked, q.Pages, 10), Top: ranked[:min(3, len(ranked))]}
		for i, p := range ranked {
			if answers[p] > 0 {
				o.Rank = i + 1
				break
			}
		}
		for p, g := range q.Pages {
			if g > 0 && !slices.Contains(ranked, p) {
				o.Missed = append(o.Missed, p)
			}
		}
		slices.Sort(o.Missed)
		res.NDCGAt10 += o.NDCG
		res.RecallAt10 += Recall(ranked, q.Pages, 10)
		res.MRRAt10 += MRR(ranked, answers, 10)
		res.PerQuery = append(res.PerQuery, o)
	}
	if n := float64(len(qs)); n > 0 {
		res.NDCGAt10 /= n
		res.RecallAt10 /= n
		res.MRRAt10 /= n
	}
	res.Latency = Percentiles(lat)
	return res, nil
}
