package embed

import (
	"context"
	"sync/atomic"
)

// Counter is an Embedder that counts what passes through it to another, so
// a test can tell how much work was really sent to the model (for example
// that re-indexing unchanged text embeds nothing).
type Counter struct {
	e                  Embedder
	docCalls, docTexts atomic.Int64
	queries            atomic.Int64
}

// NewCounter counts the calls made through it to e.
func NewCounter(e Embedder) *Counter { return &Counter{e: e} }

// Info is the wrapped Embedder's Info.
func (c *Counter) Info() Info { return c.e.Info() }

// EmbedDocuments counts one call and len(texts) texts, then passes them on.
func (c *Counter) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.docCalls.Add(1)
	c.docTexts.Add(int64(len(texts)))
	return c.e.EmbedDocuments(ctx, texts)
}

// EmbedQuery counts one query, then passes it on.
func (c *Counter) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	c.queries.Add(1)
	return c.e.EmbedQuery(ctx, text)
}

// Counts is what a Counter has seen.
type Counts struct {
	DocumentCalls int // EmbedDocuments calls
	Documents     int // texts passed to EmbedDocuments
	Queries       int // EmbedQuery calls
}

// Counts returns the numbers so far.
func (c *Counter) Counts() Counts {
	return Counts{
		DocumentCalls: int(c.docCalls.Load()),
		Documents:     int(c.docTexts.Load()),
		Queries:       int(c.queries.Load()),
	}
}

// Reset sets the counts back to zero.
func (c *Counter) Reset() {
	c.docCalls.Store(0)
	c.docTexts.Store(0)
	c.queries.Store(0)
}
