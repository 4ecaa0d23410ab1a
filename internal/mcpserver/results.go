package mcpserver

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// Result is one search hit as the tools return it.
type Result struct {
	Rank    int     `json:"rank" jsonschema:"position in the whole ranking, from 1"`
	ChunkID int64   `json:"chunkId"`
	Score   float64 `json:"score"`
	Heading string  `json:"heading" jsonschema:"heading path of the chunk's section, e.g. Guide > Routing"`
	Lines   [2]int  `json:"lines" jsonschema:"first and last line of the chunk in its source"`
	Text    string  `json:"text,omitempty" jsonschema:"the chunk's text (a snippet in detailed mode)"`
	// Truncated marks a text shortened to fit the budget.
	Truncated bool      `json:"truncated,omitempty" jsonschema:"the text was shortened to fit the budget; read the resource for all of it"`
	Source    SourceRef `json:"source"`
	Resource  string    `json:"resource" jsonschema:"the chunk as a resource: sagasu://chunk/ID"`
	// Original is the whole source or section around the hit (sagasu_query
	// with full or section).
	Original *Original `json:"original,omitempty"`
}

// SourceRef names a result's source.
type SourceRef struct {
	ID    string `json:"id" jsonschema:"source ID; its resource is sagasu://source/ID"`
	URI   string `json:"uri"`
	Title string `json:"title"`
	Type  string `json:"type" jsonschema:"file, text or url"`
}

// Original is the original content around a hit.
type Original struct {
	Scope     string `json:"scope" jsonschema:"source (the whole document) or section"`
	Heading   string `json:"heading,omitempty"`
	Lines     [2]int `json:"lines"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"shortened to fit; read resource or call sagasu_get for all of it"`
	Resource  string `json:"resource"`
}

func sourceRef(s doc.Source) SourceRef { return SourceRef(search.ViewSource(s)) }

// hit is a search hit with what a page may show of it.
type hit struct {
	doc.Hit
	rank     int
	original *search.Original // full or section content, for sagasu_query
	scope    string
}

// result renders h with its texts cut to at most n runes.
func (h hit) result(n int) (Result, bool) {
	r, cut := viewResult(search.View(h.Hit), h.rank, n)
	if o := h.original; o != nil {
		content, tr := budget.Truncate(o.Content, n)
		r.Original = &Original{Scope: h.scope, Heading: o.Section, Lines: [2]int{o.StartLine, o.EndLine},
			Content: content, Truncated: tr, Resource: sourceURI(o.Source.ID)}
		cut = cut || tr
	}
	return r, cut
}

// viewResult renders a result in the CLI's shape with its text cut to at
// most n runes, and reports whether it was cut.
func viewResult(v search.ResultView, rank, n int) (Result, bool) {
	r := Result{
		Rank: rank, ChunkID: v.ChunkID, Score: round(v.Score), Heading: v.Heading, Lines: v.Lines,
		Source: SourceRef(v.Source), Resource: chunkURI(v.ChunkID),
	}
	r.Text, r.Truncated = budget.Truncate(v.Text, n)
	return r, r.Truncated
}

// textLengths are the lengths of the hits' texts, in runes.
func textLengths(hs []hit) []int {
	var out []int
	for _, h := range hs {
		out = append(out, runes(h.Chunk.Text))
		if h.original != nil {
			out = append(out, runes(h.original.Content))
		}
	}
	return out
}

// page is one page of a ranking: the hits from offset, and whether the
// ranking goes on after them.
type page struct {
	hits    []hit
	offset  int
	ids     []int64 // chunk IDs of the ranking up to the end of the page
	hasMore bool
	resp    search.Response
}

// rank runs a search for one page of k results from the cursor's offset.
// args identifies the request for its cursor.
func (s *Server) rank(ctx context.Context, tool, cursor, args string, req search.Request, k int) (page, error) {
	offset, seen := 0, ""
	if cursor != "" {
		st, err := s.cursors.open(cursor, tool, args)
		if err != nil {
			return page{}, err
		}
		offset, seen = st.Offset, st.Seen
	}
	if offset+k+1 > search.MaxK {
		return page{}, fmt.Errorf("the ranking ends at %d results: there is no page after offset %d", search.MaxK, offset)
	}
	req.K = offset + k + 1
	resp, err := s.engine.Search(ctx, req)
	if err != nil {
		return page{}, err
	}
	p := page{offset: offset, resp: resp}
	for _, h := range resp.Hits {
		p.ids = append(p.ids, h.Chunk.ID)
	}
	if cursor != "" && hashOf(p.ids[:min(offset, len(p.ids))]) != seen {
		return page{}, errCursorStale
	}
	end := min(offset+k, len(resp.Hits))
	for i := offset; i < end; i++ {
		p.hits = append(p.hits, hit{Hit: resp.Hits[i], rank: i + 1})
	}
	p.hasMore = len(resp.Hits) > end
	return p, nil
}

// next returns the cursor to the page after the first kept hits of p, or ""
// when the ranking ends there.
func (s *Server) next(p page, tool, args string, kept int) string {
	if kept >= len(p.hits) && !p.hasMore {
		return ""
	}
	o := p.offset + kept
	return s.cursors.issue(cursorState{Tool: tool, Args: args, Offset: o, Seen: hashOf(p.ids[:o])})
}

// writeResults renders results as Markdown.
func writeResults(b *strings.Builder, rs []Result) {
	for _, r := range rs {
		loc := fmt.Sprintf("%s:%d-%d", r.Source.URI, r.Lines[0], r.Lines[1])
		fmt.Fprintf(b, "\n### %d. %s", r.Rank, loc)
		if r.Heading != "" {
			fmt.Fprintf(b, " — %s", r.Heading)
		}
		fmt.Fprintf(b, "\nscore %g · chunk %d · %s\n", r.Score, r.ChunkID, r.Resource)
		if r.Text != "" {
			b.WriteString(r.Text)
			b.WriteByte('\n')
		}
		if r.Truncated {
			fmt.Fprintf(b, "[shortened to fit the budget: read %s for the whole chunk]\n", r.Resource)
		}
		if o := r.Original; o != nil {
			fmt.Fprintf(b, "\n%s %s, lines %d-%d:\n%s\n", o.Scope, o.Heading, o.Lines[0], o.Lines[1], o.Content)
			if o.Truncated {
				fmt.Fprintf(b, "[shortened to fit the budget: read %s or call sagasu_get]\n", o.Resource)
			}
		}
	}
}

// resultLinks links every result's chunk.
func resultLinks(rs []Result) []*mcp.ResourceLink {
	links := make([]*mcp.ResourceLink, 0, len(rs))
	for _, r := range rs {
		name := r.Source.URI
		if r.Heading != "" {
			name += " — " + r.Heading
		}
		links = append(links, chunkLink(r.ChunkID, name))
	}
	return links
}

// footer says what was left out and how to get it.
func footer(b *strings.Builder, omitted int, truncated bool, cursor string) {
	if omitted > 0 {
		fmt.Fprintf(b, "\n%d more result(s) on this page did not fit the budget.", omitted)
	}
	if truncated {
		b.WriteString("\nSome texts were shortened to fit; their resources hold them whole.")
	}
	if cursor != "" {
		fmt.Fprintf(b, "\nNext page: call again with the same arguments and cursor %q.\n", cursor)
	}
}

// round keeps scores readable: 4 decimals.
func round(f float64) float64 { return math.Round(f*1e4) / 1e4 }
