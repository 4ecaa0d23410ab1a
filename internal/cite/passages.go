package cite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Passages are the chunks a run has retrieved, numbered in the order they
// were first seen: [1] is the first passage the run saw. Both agents keep
// their passages here, so a number means the same thing to the model, the
// answer and the trace, and only passages in the set can be cited.
//
// In a checkpoint Passages are their chunk IDs, not copies of the text:
// the index holds the text, and Restore reads it back when a run resumes.
// The zero value is an empty set.
type Passages struct {
	list []doc.Hit
	byID map[int64]int // chunk ID -> number
}

// NewPassages numbers hits in order, each chunk once.
func NewPassages(hits ...doc.Hit) *Passages {
	p := &Passages{}
	p.Add(hits...)
	return p
}

// Add numbers the hits not seen before and returns the numbers (1-based)
// of all of them, in order.
func (p *Passages) Add(hits ...doc.Hit) []int {
	if p.byID == nil {
		p.byID = map[int64]int{}
	}
	ns := make([]int, 0, len(hits))
	for _, h := range hits {
		n, ok := p.byID[h.Chunk.ID]
		if !ok {
			p.list = append(p.list, h)
			n = len(p.list)
			p.byID[h.Chunk.ID] = n
		}
		ns = append(ns, n)
	}
	return ns
}

// Get returns passage n (1-based).
func (p *Passages) Get(n int) (doc.Hit, bool) {
	if n < 1 || n > len(p.list) {
		return doc.Hit{}, false
	}
	return p.list[n-1], true
}

// Hits returns the passages numbered ns, skipping numbers not in the set.
func (p *Passages) Hits(ns []int) []doc.Hit {
	out := make([]doc.Hit, 0, len(ns))
	for _, n := range ns {
		if h, ok := p.Get(n); ok {
			out = append(out, h)
		}
	}
	return out
}

// Number returns the number of the passage holding chunk id.
func (p *Passages) Number(id int64) (int, bool) {
	n, ok := p.byID[id]
	return n, ok
}

// Len is how many passages there are.
func (p *Passages) Len() int { return len(p.list) }

// All returns the passages in number order; the caller must not change
// the slice.
func (p *Passages) All() []doc.Hit { return p.list }

// IDs returns the passages' chunk IDs in number order.
func (p *Passages) IDs() []int64 {
	out := make([]int64, len(p.list))
	for i, h := range p.list {
		out[i] = h.Chunk.ID
	}
	return out
}

// Clone returns a copy that can grow without changing p (graph.Cloner).
func (p Passages) Clone() Passages {
	p.list = slices.Clone(p.list)
	if p.byID != nil {
		m := make(map[int64]int, len(p.byID))
		for k, v := range p.byID {
			m[k] = v
		}
		p.byID = m
	}
	return p
}

// MarshalJSON writes the chunk IDs in number order.
func (p Passages) MarshalJSON() ([]byte, error) {
	return json.Marshal(p.IDs())
}

// UnmarshalJSON reads the chunk IDs a checkpoint holds; each passage's
// text is missing until Restore reads it. Checkpoints written before
// passages were IDs hold whole passages, as objects: those are read as
// they are, text and all, so an older run still resumes.
func (p *Passages) UnmarshalJSON(data []byte) error {
	*p = Passages{}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("passages: %w", err)
	}
	for i, r := range raw {
		h, err := decodePassage(r)
		if err != nil {
			return fmt.Errorf("passage %d: %w", i+1, err)
		}
		p.Add(h)
	}
	return nil
}

// decodePassage reads one passage of a checkpoint: a chunk ID, or a whole
// passage as an older release wrote it (a doc.Hit, or Plan-and-Act's
// flat form with chunkId, uri, heading, lines and text).
func decodePassage(r json.RawMessage) (doc.Hit, error) {
	r = bytes.TrimSpace(r)
	if len(r) > 0 && r[0] != '{' {
		var id int64
		if err := json.Unmarshal(r, &id); err != nil {
			return doc.Hit{}, err
		}
		return doc.Hit{Chunk: doc.Chunk{ID: id}}, nil
	}
	var legacy struct {
		Chunk   *doc.Chunk  `json:"Chunk"`
		Source  *doc.Source `json:"Source"`
		Score   float64     `json:"Score"`
		ChunkID int64       `json:"chunkId"`
		URI     string      `json:"uri"`
		Title   string      `json:"title"`
		Heading string      `json:"heading"`
		Lines   [2]int      `json:"lines"`
		Text    string      `json:"text"`
	}
	if err := json.Unmarshal(r, &legacy); err != nil {
		return doc.Hit{}, err
	}
	if legacy.Chunk != nil {
		h := doc.Hit{Chunk: *legacy.Chunk, Score: legacy.Score}
		if legacy.Source != nil {
			h.Source = *legacy.Source
		}
		return h, nil
	}
	h := doc.Hit{
		Chunk:  doc.Chunk{ID: legacy.ChunkID, Text: legacy.Text, StartLine: legacy.Lines[0], EndLine: legacy.Lines[1]},
		Source: doc.Source{URI: legacy.URI, Title: legacy.Title},
	}
	if legacy.Heading != "" {
		h.Chunk.Heading = strings.Split(legacy.Heading, " > ")
	}
	return h, nil
}

// Gone is the text of a passage whose chunk the index no longer holds
// when a run resumes: its number stays, so the citations keep pointing
// where they did.
const Gone = "(this passage is no longer in the index: its document changed or was removed after the run read it)"

// Loader reads chunks by ID, as the index holds them now (store.Hits);
// a chunk it does not hold is left out.
type Loader func(ctx context.Context, ids []int64) ([]doc.Hit, error)

// Restore reads the text of the passages a checkpoint named by ID alone.
// A chunk the index no longer holds keeps its number and reads Gone.
func (p *Passages) Restore(ctx context.Context, load Loader) error {
	var ids []int64
	for _, h := range p.list {
		if h.Source.URI == "" {
			ids = append(ids, h.Chunk.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if load == nil {
		return fmt.Errorf("restore %d passages: nothing reads the index", len(ids))
	}
	hits, err := load(ctx, ids)
	if err != nil {
		return fmt.Errorf("restore %d passages from the index: %w", len(ids), err)
	}
	byID := make(map[int64]doc.Hit, len(hits))
	for _, h := range hits {
		byID[h.Chunk.ID] = h
	}
	for i, h := range p.list {
		if h.Source.URI != "" {
			continue
		}
		if got, ok := byID[h.Chunk.ID]; ok {
			p.list[i] = got
			continue
		}
		p.list[i].Chunk.Text = Gone
		p.list[i].Source.URI = fmt.Sprintf("chunk:%d", h.Chunk.ID)
	}
	return nil
}
