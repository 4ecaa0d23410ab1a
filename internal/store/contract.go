package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
)

// New returns the Store over d: every call is checked and normalised here,
// once for all drivers, and handed down only when there is something for
// the driver to do (see Driver). Closing the Store closes d.
func New(d Driver) Store { return &contract{d: d} }

// Opened is New(d) for a driver just opened, or err if opening it failed:
// a driver's Open is return store.Opened(openDriver(...)).
func Opened[D Driver](d D, err error) (Store, error) {
	if err != nil {
		return nil, err
	}
	return New(d), nil
}

// contract is the Store every driver is reached through.
type contract struct{ d Driver }

var (
	_ Warmer  = (*contract)(nil)
	_ Settler = (*contract)(nil)
)

// Replace implements Documents. An empty batch writes nothing; a source
// given twice is written once, as its last entry; every source is checked
// before anything is written.
func (c *contract) Replace(ctx context.Context, batch []SourceData) error {
	if len(batch) == 0 {
		return nil
	}
	batch, err := c.checkBatch(ctx, batch)
	if err != nil {
		return err
	}
	return c.d.Replace(ctx, batch)
}

// checkBatch checks a batch to write and keeps the last entry of each
// source.
func (c *contract) checkBatch(ctx context.Context, batch []SourceData) ([]SourceData, error) {
	batch = slices.Clone(batch)
	withVectors := false
	for i := range batch {
		if err := checkSource(&batch[i]); err != nil {
			return nil, err
		}
		withVectors = withVectors || batch[i].Vectors != nil
	}
	batch = lastOfEach(batch)
	if withVectors {
		dim, err := c.d.VectorDim(ctx)
		if err != nil {
			return nil, err
		}
		for _, sd := range batch {
			if err := checkVectors("replace "+quote(sd.Source.URI), dim, sd.Vectors); err != nil {
				return nil, err
			}
		}
	}
	return batch, nil
}

// lastOfEach keeps the last entry of each source, in the order of first
// appearance.
func lastOfEach(batch []SourceData) []SourceData {
	at := make(map[string]int, len(batch))
	out := batch[:0]
	for _, sd := range batch {
		key := sd.Source.ID
		if i, ok := at[key]; ok {
			out[i] = sd
			continue
		}
		at[key] = len(out)
		out = append(out, sd)
	}
	return out
}

// checkSource checks one source of a batch and fills in its ID from its
// URI.
func checkSource(sd *SourceData) error {
	src := &sd.Source
	if src.URI == "" {
		return fmt.Errorf("replace: a source without a URI (ID %q): every source needs one", src.ID)
	}
	want := doc.SourceID(src.URI)
	if src.ID == "" {
		src.ID = want
	}
	if src.ID != want {
		return fmt.Errorf("replace %q: source ID %q is not the ID of its URI (%s)", src.URI, src.ID, want)
	}
	if sd.Vectors != nil && len(sd.Vectors) != len(sd.Chunks) {
		return fmt.Errorf("replace %q: %d vectors for %d chunks", src.URI, len(sd.Vectors), len(sd.Chunks))
	}
	return nil
}

// checkVectors checks vectors (zero ones are allowed: they are not stored)
// against the index's dimension.
func checkVectors(what string, dim int, vecs [][]float32) error {
	for j, v := range vecs {
		if IsZeroVector(v) {
			continue
		}
		if dim == 0 {
			return fmt.Errorf("%s: the index has no vectors yet: pin an embedder first (InitVectors)", what)
		}
		if len(v) != dim {
			return fmt.Errorf("%s: vector %d has %d dimensions, the index holds %d", what, j, len(v), dim)
		}
	}
	return nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// Delete implements Documents.
func (c *contract) Delete(ctx context.Context, ids []string) (int, error) {
	ids = distinct(ids)
	if len(ids) == 0 {
		return 0, nil
	}
	return c.d.Delete(ctx, ids)
}

// RenameSource implements Renamer.
func (c *contract) RenameSource(ctx context.Context, id, uri string) (doc.Source, error) {
	if uri == "" {
		return doc.Source{}, fmt.Errorf("rename source %q: the new URI is empty", id)
	}
	src, err := c.d.Source(ctx, id)
	if err != nil {
		return doc.Source{}, fmt.Errorf("rename source: %w", err)
	}
	if src.URI == uri {
		return src, nil
	}
	return c.d.RenameSource(ctx, id, uri)
}

// Source implements Documents.
func (c *contract) Source(ctx context.Context, id string) (doc.Source, error) {
	return c.d.Source(ctx, id)
}

// SourceByURI implements Documents: a source's ID is made from its URI.
func (c *contract) SourceByURI(ctx context.Context, uri string) (doc.Source, error) {
	src, err := c.d.Source(ctx, doc.SourceID(uri))
	if err == nil && src.URI != uri {
		err = ErrNotFound // another URI with the same 64-bit ID
	}
	if errors.Is(err, ErrNotFound) {
		return doc.Source{}, fmt.Errorf("source %q: %w", uri, ErrNotFound)
	}
	return src, err
}

// Sources implements Documents.
func (c *contract) Sources(ctx context.Context, opt ListOptions) ([]doc.Source, error) {
	if err := validGlob(opt.PathGlob); err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	if opt.Limit < 0 || opt.Offset < 0 {
		return nil, fmt.Errorf("list sources: limit %d and offset %d must not be negative", opt.Limit, opt.Offset)
	}
	return c.d.Sources(ctx, opt)
}

func validGlob(p string) error {
	if p == "" {
		return nil
	}
	if err := glob.Valid(p); err != nil {
		return fmt.Errorf("glob %q: %w", p, err)
	}
	return nil
}

// Content implements Documents.
func (c *contract) Content(ctx context.Context, id string) (string, error) {
	return c.d.Content(ctx, id)
}

// Chunks implements Documents.
func (c *contract) Chunks(ctx context.Context, sourceID string) ([]doc.Chunk, error) {
	return c.d.Chunks(ctx, sourceID)
}

// Hits implements Documents.
func (c *contract) Hits(ctx context.Context, ids []int64) ([]doc.Hit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return c.d.Hits(ctx, ids)
}

// Hashes implements Documents, from the source records.
func (c *contract) Hashes(ctx context.Context) (map[string]string, error) {
	srcs, err := c.d.Sources(ctx, ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(srcs))
	for _, s := range srcs {
		out[s.URI] = s.ContentHash
	}
	return out, nil
}

// EachChunk implements Documents.
func (c *contract) EachChunk(ctx context.Context, fn func(c doc.Chunk, title string) error) error {
	return c.d.EachChunk(ctx, fn)
}

// KeywordSearch implements Keyword.
func (c *contract) KeywordSearch(ctx context.Context, terms []string, k int, f Filter) ([]Scored, error) {
	terms = distinct(terms)
	if len(terms) == 0 || k <= 0 {
		return nil, nil
	}
	if err := validGlob(f.PathGlob); err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return c.d.KeywordSearch(ctx, terms, k, f)
}

// DocFreq implements Keyword.
func (c *contract) DocFreq(ctx context.Context, terms []string) (map[string]int, int, error) {
	return c.d.DocFreq(ctx, distinct(terms))
}

// InitVectors implements Vectors.
func (c *contract) InitVectors(ctx context.Context, dim int) error {
	if dim <= 0 {
		return fmt.Errorf("init vectors: dimension %d is not positive", dim)
	}
	return c.d.InitVectors(ctx, dim)
}

// ClearVectors implements Vectors.
func (c *contract) ClearVectors(ctx context.Context) error { return c.d.ClearVectors(ctx) }

// VectorSearch implements Vectors. An index without vectors and a zero
// query (a text the model knows no word of) find nothing.
func (c *contract) VectorSearch(ctx context.Context, q []float32, k int, f Filter) ([]Scored, error) {
	if k <= 0 || IsZeroVector(q) {
		return nil, nil
	}
	if err := validGlob(f.PathGlob); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	dim, err := c.d.VectorDim(ctx)
	if err != nil || dim == 0 {
		return nil, err
	}
	if len(q) != dim {
		return nil, fmt.Errorf("vector search: the query vector has %d dimensions, the index holds %d", len(q), dim)
	}
	return c.d.VectorSearch(ctx, q, k, f)
}

// VectorsByHash implements Vectors.
func (c *contract) VectorsByHash(ctx context.Context, hashes []string) (map[string][]float32, error) {
	return vectorsBy(ctx, c.d, hashes, c.d.VectorsByHash)
}

// VectorsByID implements Vectors.
func (c *contract) VectorsByID(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	return vectorsBy(ctx, c.d, ids, c.d.VectorsByID)
}

// vectorsBy asks get for the vectors of keys, each once, when there are
// keys and the index has vectors.
func vectorsBy[K comparable](ctx context.Context, d Driver, keys []K, get func(context.Context, []K) (map[K][]float32, error)) (map[K][]float32, error) {
	keys = distinct(keys)
	if len(keys) == 0 {
		return map[K][]float32{}, nil
	}
	if dim, err := d.VectorDim(ctx); err != nil || dim == 0 {
		return map[K][]float32{}, err
	}
	return get(ctx, keys)
}

// SetVectors implements Vectors. Zero vectors are not stored.
func (c *contract) SetVectors(ctx context.Context, vecs map[int64][]float32) error {
	keep := make(map[int64][]float32, len(vecs))
	for id, v := range vecs {
		if !IsZeroVector(v) {
			keep[id] = v
		}
	}
	if len(keep) == 0 {
		return nil
	}
	dim, err := c.d.VectorDim(ctx)
	if err != nil {
		return err
	}
	for id, v := range keep {
		if err := checkVectors(fmt.Sprintf("set vectors: chunk %d", id), dim, [][]float32{v}); err != nil {
			return err
		}
	}
	return c.d.SetVectors(ctx, keep)
}

// Meta implements Meta.
func (c *contract) Meta(ctx context.Context, key string) (string, error) {
	if key == "" {
		return "", errors.New("read meta: empty key")
	}
	return c.d.Meta(ctx, key)
}

// SetMeta implements Meta.
func (c *contract) SetMeta(ctx context.Context, key, value string) error {
	if key == "" {
		return errors.New("write meta: empty key")
	}
	return c.d.SetMeta(ctx, key, value)
}

// Lock implements Meta.
func (c *contract) Lock(ctx context.Context) (func(), error) { return c.d.Lock(ctx) }

// Stats implements Store.
func (c *contract) Stats(ctx context.Context) (Stats, error) { return c.d.Stats(ctx) }

// Close implements Store.
func (c *contract) Close() error { return c.d.Close() }

// Warm implements Warmer for a driver that keeps caches; for one that
// does not it does nothing.
func (c *contract) Warm(ctx context.Context) error {
	if w, ok := c.d.(Warmer); ok {
		return w.Warm(ctx)
	}
	return nil
}

// KeywordCacheBytes reports the memory of the driver's keyword cache (0
// for a driver without one), which the bench prints.
func (c *contract) KeywordCacheBytes() int64 {
	if k, ok := c.d.(interface{ KeywordCacheBytes() int64 }); ok {
		return k.KeywordCacheBytes()
	}
	return 0
}

// Settle implements Settler for a driver that tidies up after writes; for
// one that does not it does nothing.
func (c *contract) Settle(ctx context.Context) {
	if s, ok := c.d.(Settler); ok {
		s.Settle(ctx)
	}
}

// Analyzer returns the analyzer the driver's keyword index is read with
// (the one it is pinned to, which may be older than this build's), or nil
// when the driver does not say.
func (c *contract) Analyzer() *analyze.Analyzer {
	if a, ok := c.d.(interface{ Analyzer() *analyze.Analyzer }); ok {
		return a.Analyzer()
	}
	return nil
}

// distinct returns s without repeats, in first-seen order (s itself when
// it has none).
func distinct[T comparable](s []T) []T {
	if len(s) < 2 {
		return s
	}
	seen := make(map[T]bool, len(s))
	out := s[:0:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	if len(out) == len(s) {
		return s
	}
	return slices.Clip(out)
}
