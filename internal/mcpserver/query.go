package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// MaxQueryK bounds sagasu_query's k: a page of results an agent can read.
const MaxQueryK = 50

// QueryInput is sagasu_query's input.
type QueryInput struct {
	Query     string   `json:"query" jsonschema:"what to search for"`
	K         int      `json:"k,omitempty" jsonschema:"results per page, 1 to 50 (default 10)"`
	Mode      string   `json:"mode,omitempty" jsonschema:"retrieval: keyword, semantic or hybrid (default: hybrid when the index has embeddings, else keyword)"`
	Types     []string `json:"types,omitempty" jsonschema:"only sources of these types: file, text, url"`
	Glob      string   `json:"glob,omitempty" jsonschema:"only sources whose URI matches this glob, e.g. docs/**/*.md"`
	SourceIDs []string `json:"sourceIds,omitempty" jsonschema:"only these sources"`
	Full      bool     `json:"full,omitempty" jsonschema:"also return each hit's whole source (original content)"`
	Section   bool     `json:"section,omitempty" jsonschema:"also return the whole section each hit lies in"`
	Cursor    string   `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page; pass the same other arguments"`
}

// QueryOutput is sagasu_query's result.
type QueryOutput struct {
	Query   string   `json:"query"`
	Mode    string   `json:"mode" jsonschema:"the retrieval mode used"`
	TookMs  float64  `json:"tookMs"`
	Offset  int      `json:"offset" jsonschema:"how many results of the ranking come before this page"`
	Results []Result `json:"results"`
	Paging
}

// Paging says what a response left out and how to reach it.
type Paging struct {
	// OmittedResults did not fit the budget; nextCursor starts with them.
	OmittedResults int  `json:"omittedResults" jsonschema:"results of this page left out to fit the budget; nextCursor starts with them"`
	Truncated      bool `json:"truncated" jsonschema:"some text was shortened to fit the budget"`
	// NextCursor continues the listing; empty at its end.
	NextCursor string `json:"nextCursor,omitempty" jsonschema:"pass it with the same arguments for the next page; absent at the end"`
	Measured
}

// Measured is the size of a response, in every tool's output.
type Measured struct {
	EstimatedTokens int `json:"estimatedTokens" jsonschema:"measured size of this whole response in tokens"`
	Budget          int `json:"budget" jsonschema:"the most tokens this response was allowed"`
}

func (s *Server) addQueryTool() {
	addTool(s, &mcp.Tool{
		Name:        ToolQuery,
		Description: "Search the index and return ranked chunks with their text, source and line span. full or section add the original content around each hit. Pages with nextCursor. Use sagasu_search instead to have results judged against a goal.",
		Annotations: ro("Search the index"),
	}, func(in *jsonschema.Schema) {
		notEmpty(prop(in, "query"))
		between(prop(in, "k"), 1, MaxQueryK)
		oneOf(prop(in, "mode"), string(search.ModeKeyword), string(search.ModeSemantic), string(search.ModeHybrid))
	}, s.query)
}

// filter checks and builds a store filter.
func filter(types []string, pathGlob string, ids []string) (store.Filter, error) {
	f := store.Filter{PathGlob: pathGlob, SourceIDs: ids}
	if pathGlob != "" {
		if err := glob.Valid(pathGlob); err != nil {
			return f, fmt.Errorf("glob: %w", err)
		}
	}
	for _, t := range types {
		switch doc.SourceType(t) {
		case doc.TypeFile, doc.TypeText, doc.TypeURL:
			f.Types = append(f.Types, doc.SourceType(t))
		default:
			return f, fmt.Errorf("type %q: use file, text or url", t)
		}
	}
	return f, nil
}

func (s *Server) query(ctx context.Context, req *mcp.CallToolRequest, in QueryInput) (*mcp.CallToolResult, QueryOutput, error) {
	k := in.K
	if k == 0 {
		k = search.DefaultK
	}
	if k < 1 || k > MaxQueryK {
		return nil, QueryOutput{}, fmt.Errorf("k = %d is out of range: use 1 to %d", k, MaxQueryK)
	}
	f, err := filter(in.Types, in.Glob, in.SourceIDs)
	if err != nil {
		return nil, QueryOutput{}, err
	}
	args := hashOf(ToolQuery, in.Query, k, in.Mode, in.Types, in.Glob, in.SourceIDs, in.Full, in.Section)
	p, err := s.rank(ctx, ToolQuery, in.Cursor, args, search.Request{Query: in.Query, Mode: search.Mode(in.Mode), Filter: f}, k)
	if err != nil {
		return nil, QueryOutput{}, err
	}
	if in.Full || in.Section {
		if err := s.originals(ctx, p.hits, in.Full); err != nil {
			return nil, QueryOutput{}, err
		}
	}
	limit := s.limits.Cap
	full := budget.Shape{Items: len(p.hits), Text: budget.TextBound(textLengths(p.hits), limit)}
	return fit(s, req, limit, full, 300, func(sh budget.Shape, est int) view[QueryOutput] {
		out := QueryOutput{Query: echo(in.Query), Mode: string(p.resp.Mode), TookMs: ms(p.resp.Took), Offset: p.offset, Results: []Result{}}
		for _, h := range p.hits[:sh.Items] {
			r, cut := h.result(sh.Text)
			out.Results = append(out.Results, r)
			out.Truncated = out.Truncated || cut
		}
		out.OmittedResults = len(p.hits) - sh.Items
		out.NextCursor = s.next(p, ToolQuery, args, sh.Items)
		out.EstimatedTokens, out.Budget = est, limit
		var b strings.Builder
		if len(out.Results) == 0 && out.OmittedResults == 0 {
			fmt.Fprintf(&b, "No results for %q (%s).\n", out.Query, out.Mode)
		} else {
			fmt.Fprintf(&b, "Results %d-%d for %q (%s, %.1f ms)\n", p.offset+1, p.offset+len(out.Results), out.Query, out.Mode, out.TookMs)
		}
		writeResults(&b, out.Results)
		footer(&b, out.OmittedResults, out.Truncated, out.NextCursor)
		return view[QueryOutput]{Out: out, Text: b.String(), Links: resultLinks(out.Results)}
	})
}

// originals attaches the whole source (full) or the section of each hit;
// a source or section already attached to an earlier hit is not repeated.
func (s *Server) originals(ctx context.Context, hs []hit, full bool) error {
	seen := map[string]bool{}
	for i := range hs {
		h := &hs[i]
		section, scope := "", "source"
		if !full {
			section, scope = h.Chunk.HeadingPath(), "section"
		}
		key := h.Source.ID + "\x00" + section
		if seen[key] {
			continue
		}
		seen[key] = true
		var o search.Original
		var err error
		if section == "" && !full {
			// A chunk outside any section: its section is the text before
			// the first heading, which is the chunk itself.
			continue
		}
		o, err = s.engine.Get(ctx, h.Source.ID, section)
		if err != nil {
			return fmt.Errorf("original content of %s: %w", h.Source.URI, err)
		}
		h.original, h.scope = &o, scope
	}
	return nil
}
