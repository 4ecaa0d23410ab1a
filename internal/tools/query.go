package tools

import (
	"context"
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/search"
)

// MaxQueryK bounds sagasu_query's k: a page of results an agent can read.
const MaxQueryK = 50

// QueryInput is sagasu_query's input.
type QueryInput struct {
	Query       string   `json:"query" jsonschema:"what to search for"`
	K           int      `json:"k,omitempty" jsonschema:"results per page, 1 to 50 (default 10)"`
	Mode        string   `json:"mode,omitempty" jsonschema:"retrieval: keyword, semantic or hybrid (default: hybrid when the index has embeddings)"`
	Types       []string `json:"types,omitempty" jsonschema:"only sources of these types"`
	Glob        string   `json:"glob,omitempty" jsonschema:"only sources whose URI matches, e.g. docs/**/*.md"`
	SourceIDs   []string `json:"sourceIds,omitempty" jsonschema:"only these sources"`
	WholeSource bool     `json:"wholeSource,omitempty" jsonschema:"add each hit's whole source"`
	// WholeSection is named apart from sagasu_get's section (a heading):
	// one parameter name, one meaning across the tools.
	WholeSection bool    `json:"wholeSection,omitempty" jsonschema:"add the whole section each hit lies in"`
	MMR          float64 `json:"mmr,omitempty" jsonschema:"re-rank for variety: relevance weight 0..1 (0 is off; needs embeddings)"`
	Cursor       string  `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page; pass the same other arguments"`

	// Offset is where the page starts in the ranking; a face sets it (from
	// a cursor), agents do not.
	Offset int `json:"-"`
}

// QueryOutput is sagasu_query's result.
type QueryOutput struct {
	Query   string   `json:"query"`
	Mode    string   `json:"mode" jsonschema:"the retrieval mode used"`
	Offset  int      `json:"offset" jsonschema:"how many results of the ranking come before this page"`
	Results []Result `json:"results"`
	Paging
}

// QueryResult is a page of sagasu_query's ranking before it is shaped.
type QueryResult struct {
	Query string
	K     int
	Ranking
}

// Query searches the index for one page of results, with the original
// content around each hit when asked for.
func (t *Toolset) Query(ctx context.Context, in QueryInput) (QueryResult, error) {
	k := in.K
	if k == 0 {
		k = search.DefaultK
	}
	f, err := Filter(in.Types, in.Glob, in.SourceIDs)
	if err != nil {
		return QueryResult{}, err
	}
	p, err := t.rank(ctx, search.Request{Query: in.Query, Mode: search.Mode(in.Mode), Filter: f, MMR: in.MMR}, in.Offset, k)
	if err != nil {
		return QueryResult{}, err
	}
	if in.WholeSource || in.WholeSection {
		if err := t.originals(ctx, p.Hits, in.WholeSource); err != nil {
			return QueryResult{}, err
		}
	}
	return QueryResult{Query: in.Query, K: k, Ranking: p}, nil
}

// Output renders the first items hits with their texts cut to at most text
// runes; cursor continues the ranking ("" at its end).
func (r QueryResult) Output(items, text int, cursor string) QueryOutput {
	out := QueryOutput{Query: echo(r.Query), Mode: string(r.Mode), Offset: r.Offset, Results: []Result{}}
	for _, h := range r.Hits[:items] {
		res, cut := h.Result(text)
		out.Results = append(out.Results, res)
		out.Truncated = out.Truncated || cut
	}
	out.OmittedResults = len(r.Hits) - items
	out.NextCursor = cursor
	return out
}

// originals attaches the whole source (wholeSource) or the section of each
// hit; a source or section already attached to an earlier hit is not
// repeated.
func (t *Toolset) originals(ctx context.Context, hs []Hit, wholeSource bool) error {
	seen := map[string]bool{}
	for i := range hs {
		h := &hs[i]
		section, scope := "", "source"
		if !wholeSource {
			section, scope = h.Chunk.HeadingPath(), "section"
		}
		key := h.Source.ID + "\x00" + section
		if seen[key] {
			continue
		}
		seen[key] = true
		if section == "" && !wholeSource {
			// A chunk outside any section: its section is the text before
			// the first heading, which is the chunk itself.
			continue
		}
		o, err := t.engine.Get(ctx, h.Source.ID, section)
		if err != nil {
			return fmt.Errorf("original content of %s: %w", h.Source.URI, err)
		}
		h.Original, h.Scope = &o, scope
	}
	return nil
}
