// Package eval measures retrieval: BEIR-layout datasets scored with the
// standard IR metrics (nDCG@10, recall, MRR), and synthetic benchmarks of
// indexing throughput, query latency and memory.
package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// Dataset is a BEIR-layout dataset: corpus.jsonl, queries.jsonl and qrels.
type Dataset struct {
	Dir     string
	Docs    []doc.Document            // one per corpus line; URI is the corpus _id
	Queries map[string]string         // query id -> text
	Qrels   map[string]map[string]int // query id -> doc id -> relevance
}

// LoadBEIR reads a dataset folder; split names the qrels file (default "test").
func LoadBEIR(dir, split string) (*Dataset, error) {
	if split == "" {
		split = "test"
	}
	ds := &Dataset{Dir: dir, Queries: map[string]string{}, Qrels: map[string]map[string]int{}}
	type line struct {
		ID    string `json:"_id"`
		Title string `json:"title"`
		Text  string `json:"text"`
	}
	err := readJSONL(filepath.Join(dir, "corpus.jsonl"), func(raw []byte) error {
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		if l.ID == "" {
			return errors.New(`a line has no "_id"`)
		}
		ds.Docs = append(ds.Docs, doc.Document{
			URI: l.ID, Type: doc.TypeText, Format: doc.FormatText, Title: l.Title, Content: l.Text,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readJSONL(filepath.Join(dir, "queries.jsonl"), func(raw []byte) error {
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		ds.Queries[l.ID] = l.Text
		return nil
	})
	if err != nil {
		return nil, err
	}
	qrels := filepath.Join(dir, "qrels", split+".tsv")
	f, err := os.Open(qrels)
	if err != nil {
		return nil, fmt.Errorf("dataset %q: %w (a BEIR folder has corpus.jsonl, queries.jsonl and qrels/%s.tsv)", dir, err, split)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Split(strings.TrimSpace(sc.Text()), "\t")
		if len(fields) < 3 || (n == 1 && fields[0] == "query-id") {
			continue
		}
		rel, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%s line %d: relevance %q is not a number", qrels, n, fields[2])
		}
		if ds.Qrels[fields[0]] == nil {
			ds.Qrels[fields[0]] = map[string]int{}
		}
		ds.Qrels[fields[0]][fields[1]] = rel
	}
	return ds, sc.Err()
}

// KeepHalf keeps the judgments of the queries whose numeric ID is odd (or
// even), the split used to tune parameters on one half of a dataset and
// check them on the other. IDs that are not numbers are dropped.
func (ds *Dataset) KeepHalf(odd bool) {
	for id := range ds.Qrels {
		n, err := strconv.Atoi(id)
		if err != nil || (n%2 == 1) != odd {
			delete(ds.Qrels, id)
		}
	}
}

func readJSONL(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dataset: %w (a BEIR folder has corpus.jsonl, queries.jsonl and qrels/test.tsv)", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		raw, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(raw))) > 0 {
			if ferr := fn(raw); ferr != nil {
				return fmt.Errorf("%s line %d: %w", path, n, ferr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// Result is what an evaluation prints.
type Result struct {
	Dataset     string      `json:"dataset"`
	Mode        string      `json:"mode"`
	Queries     int         `json:"queries"`
	NDCGAt10    float64     `json:"ndcgAt10"`
	RecallAt10  float64     `json:"recallAt10"`
	RecallAt100 float64     `json:"recallAt100"`
	MRRAt10     float64     `json:"mrrAt10"`
	Latency     Latency     `json:"latencyMs"`
	Index       *IndexStats `json:"index,omitempty"`
}

// IndexStats describes the indexing part of an evaluation.
type IndexStats struct {
	Docs    int     `json:"docs"`
	Chunks  int     `json:"chunks"`
	Seconds float64 `json:"seconds"`
	MBps    float64 `json:"mbPerSecond"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// IndexDataset writes the dataset's documents with ix.
func IndexDataset(ctx context.Context, ix *index.Indexer, ds *Dataset) (IndexStats, error) {
	rep, err := ix.Documents(ctx, ds.Docs)
	if err != nil {
		return IndexStats{}, err
	}
	st := IndexStats{Docs: len(ds.Docs), Chunks: rep.Chunks, Seconds: rep.Took.Seconds()}
	if rep.Took > 0 {
		st.MBps = float64(rep.Bytes) / 1e6 / rep.Took.Seconds()
	}
	return st, nil
}

// Run searches every judged query and scores the rankings.
func Run(ctx context.Context, e *search.Engine, ds *Dataset, mode search.Mode) (Result, error) {
	ids := make([]string, 0, len(ds.Qrels))
	for id := range ds.Qrels {
		if _, ok := ds.Queries[id]; ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return Result{}, fmt.Errorf("dataset %q: no query in queries.jsonl has relevance judgements", ds.Dir)
	}
	sort.Strings(ids)
	var res Result
	res.Dataset, res.Mode, res.Queries = filepath.Base(filepath.Clean(ds.Dir)), string(mode), len(ids)
	lat := make([]time.Duration, 0, len(ids))
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		start := time.Now()
		resp, err := e.Search(ctx, search.Request{Query: ds.Queries[id], K: 200, Mode: mode})
		if err != nil && !errors.Is(err, search.ErrEmptyQuery) {
			return res, fmt.Errorf("query %s: %w", id, err)
		}
		lat = append(lat, time.Since(start))
		ranked := RankDocs(resp.Hits, 100)
		rels := ds.Qrels[id]
		res.NDCGAt10 += NDCG(ranked, rels, 10)
		res.RecallAt10 += Recall(ranked, rels, 10)
		res.RecallAt100 += Recall(ranked, rels, 100)
		res.MRRAt10 += MRR(ranked, rels, 10)
	}
	n := float64(len(ids))
	res.NDCGAt10 /= n
	res.RecallAt10 /= n
	res.RecallAt100 /= n
	res.MRRAt10 /= n
	res.Latency = Percentiles(lat)
	return res, nil
}

// RankDocs turns chunk hits into a document ranking: each source at the
// rank of its best chunk.
func RankDocs(hits []doc.Hit, n int) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		if !seen[h.Source.URI] {
			seen[h.Source.URI] = true
			out = append(out, h.Source.URI)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

// NDCG is normalised discounted cumulative gain at k with linear gains, as
// trec_eval computes it.
func NDCG(ranked []string, rels map[string]int, k int) float64 {
	dcg := 0.0
	for i, id := range ranked[:min(k, len(ranked))] {
		if r := rels[id]; r > 0 {
			dcg += float64(r) / math.Log2(float64(i+2))
		}
	}
	var ideal []int
	for _, r := range rels {
		if r > 0 {
			ideal = append(ideal, r)
		}
	}
	slices.SortFunc(ideal, func(a, b int) int { return b - a })
	idcg := 0.0
	for i, r := range ideal[:min(k, len(ideal))] {
		idcg += float64(r) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Recall is the share of relevant documents found in the top k.
func Recall(ranked []string, rels map[string]int, k int) float64 {
	total, found := 0, 0
	top := map[string]bool{}
	for _, id := range ranked[:min(k, len(ranked))] {
		top[id] = true
	}
	for id, r := range rels {
		if r > 0 {
			total++
			if top[id] {
				found++
			}
		}
	}
	if total == 0 {
		return 0
	}
	return float64(found) / float64(total)
}

// MRR is the reciprocal rank of the first relevant document in the top k.
func MRR(ranked []string, rels map[string]int, k int) float64 {
	for i, id := range ranked[:min(k, len(ranked))] {
		if rels[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// Percentiles returns p50 and p99 of durations in milliseconds.
func Percentiles(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		i = max(0, min(i, len(s)-1))
		return float64(s[i].Microseconds()) / 1000
	}
	return Latency{P50: at(0.50), P99: at(0.99)}
}
