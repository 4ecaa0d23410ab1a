package tools

import (
	"context"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// Result is one search hit as the tools return it.
type Result struct {
	Rank    int   `json:"rank" jsonschema:"position in the whole ranking, from 1"`
	ChunkID int64 `json:"chunkId" jsonschema:"the chunk; its resource is sagasu://chunk/ID"`
	// Relevance is the score over the best score of the same search.
	Relevance float64 `json:"relevance" jsonschema:"0..1: the score relative to the best result of the same search (1 is the best match found, not proof that it answers)"`
	Heading   string  `json:"heading" jsonschema:"heading path of the chunk's section, e.g. Guide > Routing"`
	Lines     [2]int  `json:"lines" jsonschema:"first and last line of the chunk in its source"`
	Text      string  `json:"text,omitempty" jsonschema:"the chunk's text (a snippet in detailed mode)"`
	// Truncated marks a text shortened to fit the budget.
	Truncated bool      `json:"truncated,omitempty" jsonschema:"the text was shortened to fit the budget; read the resource for all of it"`
	Source    SourceRef `json:"source"`
	// Original is the whole source or section around the hit (sagasu_query
	// with wholeSource or section).
	Original *Original `json:"original,omitempty"`
}

// SourceRef names a result's source.
type SourceRef struct {
	ID    string `json:"id" jsonschema:"source ID; its resource is sagasu://source/ID"`
	URI   string `json:"uri"`
	Title string `json:"title"`
	Type  string `json:"type" jsonschema:"file, text, url, github or gist"`
}

// Original is the original content around a hit.
type Original struct {
	Scope     string `json:"scope" jsonschema:"source (the whole document) or section"`
	Heading   string `json:"heading,omitempty"`
	Lines     [2]int `json:"lines"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"shortened to fit; sagasu_get reads all of it"`
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

// Measured is the size of a reply, in every operation's output: what Fit
// measured (its JSON, its text and its links).
type Measured struct {
	EstimatedTokens int `json:"estimatedTokens" jsonschema:"measured size of this whole response in tokens"`
}

// NoLimit is a text length no text reaches: pass it to an Output method to
// keep every text whole.
const NoLimit = math.MaxInt

// Ref returns the reference of a source.
func Ref(s doc.Source) SourceRef { return SourceRef(search.ViewSource(s)) }

// Hit is a ranked search hit with the original content around it, when
// asked for.
type Hit struct {
	doc.Hit
	// Rank is the position in the whole ranking, from 1.
	Rank int
	// Relevance is the score over the ranking's best score, in 0..1.
	Relevance float64
	// Original is the whole source or the section of the hit, when asked.
	Original *search.Original
	// Scope says which: "source" or "section".
	Scope string
}

// Result renders h with its texts cut to at most n runes, and reports
// whether any was cut.
func (h Hit) Result(n int) (Result, bool) {
	r, cut := resultOf(search.View(h.Hit), h.Rank, h.Relevance, n)
	if o := h.Original; o != nil {
		content, tr := budget.Truncate(o.Content, n)
		r.Original = &Original{Scope: h.Scope, Heading: o.Section, Lines: [2]int{o.StartLine, o.EndLine},
			Content: content, Truncated: tr}
		cut = cut || tr
	}
	return r, cut
}

// resultOf renders a result with its text cut to at most n runes, and
// reports whether it was cut.
func resultOf(v search.ResultView, rank int, relevance float64, n int) (Result, bool) {
	r := Result{
		Rank: rank, ChunkID: v.ChunkID, Relevance: round2(relevance), Heading: v.Heading, Lines: v.Lines,
		Source: SourceRef(v.Source),
	}
	r.Text, r.Truncated = budget.Truncate(v.Text, n)
	return r, r.Truncated
}

// TextLengths are the lengths of the hits' texts (and originals), in runes:
// what a face fitting a budget needs to know.
func TextLengths(hs []Hit) []int {
	var out []int
	for _, h := range hs {
		out = append(out, Runes(h.Chunk.Text))
		if h.Original != nil {
			out = append(out, Runes(h.Original.Content))
		}
	}
	return out
}

// Ranking is one page of a ranking: the hits from Offset, and whether the
// ranking goes on after them.
type Ranking struct {
	Hits   []Hit
	Offset int
	// IDs are the chunk IDs of the ranking up to the end of the page: a
	// pager hashes IDs[:Offset] to tell that the ranking has not changed.
	IDs     []int64
	HasMore bool
	// Mode is the retrieval mode used.
	Mode search.Mode
	Took time.Duration
}

// rank runs a search for one page of k results from offset.
func (t *Toolset) rank(ctx context.Context, req search.Request, offset, k int) (Ranking, error) {
	if offset < 0 {
		return Ranking{}, badArg("offset", offset, "0 or more")
	}
	if offset+k > search.MaxK || offset > 0 && offset+k+1 > search.MaxK {
		return Ranking{}, fmt.Errorf("the ranking ends at %d results: there is no page after offset %d", search.MaxK, offset)
	}
	// One more than the page tells whether the ranking goes on; a first
	// page of search.MaxK results cannot tell.
	req.K = min(offset+k+1, search.MaxK)
	resp, err := t.engine.Search(ctx, req)
	if err != nil {
		return Ranking{}, err
	}
	p := Ranking{Offset: offset, Mode: resp.Mode, Took: resp.Took}
	for _, h := range resp.Hits {
		p.IDs = append(p.IDs, h.Chunk.ID)
	}
	end := min(offset+k, len(resp.Hits))
	rel := Relevances(resp.Hits)
	for i := offset; i < end; i++ {
		p.Hits = append(p.Hits, Hit{Hit: resp.Hits[i], Rank: i + 1, Relevance: rel[i]})
	}
	p.HasMore = len(resp.Hits) > end
	return p, nil
}

// maxEcho bounds how much of an agent's own text (a goal, a query) a
// response repeats back.
const maxEcho = 1000

// echo shortens an agent's text for repeating it back.
func echo(s string) string {
	t, _ := budget.Truncate(s, maxEcho)
	return t
}

// Runes counts the runes of s.
func Runes(s string) int { return utf8.RuneCountInString(s) }

// ChunkURI is the resource URI of a chunk.
func ChunkURI(id int64) string { return fmt.Sprintf("sagasu://chunk/%d", id) }

// SourceURI is the resource URI of a source.
func SourceURI(id string) string { return "sagasu://source/" + id }

// round2 keeps a fraction readable: 2 decimals.
func round2(f float64) float64 { return math.Round(f*100) / 100 }

// Relevances are the hits' scores over the best of them, in 0..1: what a
// reader can compare, where raw scores (BM25, cosine, a fused rank) mean
// nothing outside their own search. Hits of one search only.
func Relevances(hs []doc.Hit) []float64 {
	out := make([]float64, len(hs))
	top := 0.0
	for _, h := range hs {
		top = max(top, h.Score)
	}
	for i, h := range hs {
		if top > 0 {
			out[i] = min(1, max(0, h.Score/top))
		}
	}
	return out
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
