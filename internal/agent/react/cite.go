package react

import (
	"github.com/sagasu-dev/sagasu/internal/cite"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

// MaxCitationsPerSentence is how many passages one sentence may cite (a
// claim backed by more is rarely backed by any one of them).
const MaxCitationsPerSentence = 3

// Citation maps an answer's [n] marker to the chunk it cites.
type Citation struct {
	N       int       `json:"n"`
	ChunkID int64     `json:"chunkId"`
	Source  SourceRef `json:"source"`
	Heading string    `json:"heading,omitempty"`
	Lines   [2]int    `json:"lines"`
	// Quote is the part of the passage that best supports the sentences
	// citing it.
	Quote string `json:"quote"`
}

// SourceRef names a cited source.
type SourceRef struct {
	ID    string `json:"id"`
	URI   string `json:"uri"`
	Title string `json:"title,omitempty"`
}

// Passages are the chunks a run has retrieved, numbered in the order they
// were first seen (cite.Passages, the numbering both agents share): only
// passages in the set can be cited, so every citation points to a chunk
// the run actually retrieved.
type Passages = cite.Passages

// citedIn, stripMarkers and marker are the citation grammar both agents
// share (package cite).
var (
	citedIn      = cite.Numbers
	stripMarkers = cite.Strip
	marker       = cite.Render
)

// citation describes passage n, quoting quote.
func citation(n int, h doc.Hit, quote string) Citation {
	return Citation{
		N: n, ChunkID: h.Chunk.ID,
		Source:  SourceRef{ID: h.Source.ID, URI: h.Source.URI, Title: h.Source.Title},
		Heading: h.Chunk.HeadingPath(), Lines: [2]int{h.Chunk.StartLine, h.Chunk.EndLine},
		Quote: quote,
	}
}

// renumber numbers an answer's citations in the order they first appear,
// from [1], and returns the passages in that numbering: the cited ones
// first, then the rest in their run's order. Code is left as it is.
func renumber(answer string, ps *Passages) (string, *Passages) {
	order := citedIn(answer)
	to := map[int]int{}
	var out Passages
	for _, n := range order {
		if h, ok := ps.Get(n); ok {
			to[n] = out.Add(h)[0]
		}
	}
	out.Add(ps.All()...)
	same := true
	for n, m := range to {
		same = same && n == m
	}
	if same {
		return answer, &out
	}
	return cite.Renumber(answer, to), &out
}
