package search

import "github.com/sagasu-dev/sagasu/internal/doc"

// ResultView is the JSON shape of one hit, shared by the CLI and the MCP server.
type ResultView struct {
	ChunkID int64      `json:"chunkId"`
	Score   float64    `json:"score"`
	Heading string     `json:"heading"`
	Lines   [2]int     `json:"lines"`
	Text    string     `json:"text"`
	Source  SourceView `json:"source"`
}

// SourceView is the JSON shape of a source reference.
type SourceView struct {
	ID    string `json:"id"`
	URI   string `json:"uri"`
	Title string `json:"title"`
	Type  string `json:"type"`
}

// ResponseView is the JSON shape of a query's answer.
type ResponseView struct {
	Query   string       `json:"query"`
	Mode    string       `json:"mode"`
	TookMs  float64      `json:"tookMs"`
	Results []ResultView `json:"results"`
}

// View renders a hit.
func View(h doc.Hit) ResultView {
	return ResultView{
		ChunkID: h.Chunk.ID,
		Score:   h.Score,
		Heading: h.Chunk.HeadingPath(),
		Lines:   [2]int{h.Chunk.StartLine, h.Chunk.EndLine},
		Text:    h.Chunk.Text,
		Source:  ViewSource(h.Source),
	}
}

// ViewSource renders a source reference.
func ViewSource(s doc.Source) SourceView {
	return SourceView{ID: s.ID, URI: s.URI, Title: s.Title, Type: string(s.Type)}
}

// View renders the response.
func (r Response) View() ResponseView {
	v := ResponseView{Query: r.Query, Mode: string(r.Mode), TookMs: float64(r.Took.Microseconds()) / 1000, Results: make([]ResultView, 0, len(r.Hits))}
	for _, h := range r.Hits {
		v.Results = append(v.Results, View(h))
	}
	return v
}
