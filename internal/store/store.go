// Package store defines the storage contract every index backend implements:
// sources with their original content, chunks, keyword (BM25) postings and,
// when an embedder is pinned, vectors. Callers never name a driver; only
// internal/app does. Every driver passes the conformance suite in storetest.
package store

import (
	"context"
	"errors"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/glob"
)

// Errors drivers return; callers test them with errors.Is.
var (
	// ErrNotFound means the requested source or chunk is not in the index.
	ErrNotFound = errors.New("not found")
	// ErrLocked means another process is writing to the index.
	ErrLocked = errors.New("index is locked by another writer")
	// ErrForeign means the database exists but is not a sagasu index.
	ErrForeign = errors.New("not a sagasu index")
	// ErrTooNew means the index was written by a newer sagasu.
	ErrTooNew = errors.New("index schema is newer than this sagasu")
)

// SourceData is a source with its chunks, ready to be written.
type SourceData struct {
	Source  doc.Source // ID, URI, Type, Format, Title, ContentHash are used
	Content string     // the original content, kept for `get`
	Chunks  []doc.Chunk
	// Vectors holds one embedding per chunk when the index has an embedder;
	// nil otherwise. A zero vector (a text the model knows no word of) is
	// not stored.
	Vectors [][]float32
}

// Filter narrows a search to some sources. The zero Filter matches everything.
type Filter struct {
	Types     []doc.SourceType // source types to keep; empty keeps all
	PathGlob  string           // glob over source URIs ("docs/**/*.md"); empty keeps all
	SourceIDs []string         // sources to keep; empty keeps all
	// ExcludeChunks are chunk IDs never to return (results an agent has already seen).
	ExcludeChunks []int64
}

// IsZero reports whether f matches everything.
func (f Filter) IsZero() bool {
	return len(f.Types) == 0 && f.PathGlob == "" && len(f.SourceIDs) == 0 && len(f.ExcludeChunks) == 0
}

// NarrowsSources reports whether f keeps only some sources.
func (f Filter) NarrowsSources() bool {
	return len(f.Types) > 0 || f.PathGlob != "" || len(f.SourceIDs) > 0
}

// SourceMatcher returns a predicate telling whether f keeps a source with
// this ID, URI and type: the one rule every store matches sources by (a
// store may also narrow its query with it first).
func (f Filter) SourceMatcher() func(id, uri string, typ doc.SourceType) bool {
	types := make(map[doc.SourceType]bool, len(f.Types))
	for _, t := range f.Types {
		types[t] = true
	}
	ids := make(map[string]bool, len(f.SourceIDs))
	for _, id := range f.SourceIDs {
		ids[id] = true
	}
	return func(id, uri string, typ doc.SourceType) bool {
		return (len(types) == 0 || types[typ]) && (len(ids) == 0 || ids[id]) &&
			(f.PathGlob == "" || glob.Match(f.PathGlob, uri))
	}
}

// Allow turns f into a chunk predicate; nil allows every chunk. When f
// narrows sources, kept is called once for the IDs of the chunks of the
// sources f keeps (a driver matches those its own way).
func (f Filter) Allow(kept func() (map[int64]bool, error)) (func(id int64) bool, error) {
	if f.IsZero() {
		return nil, nil
	}
	excluded := make(map[int64]bool, len(f.ExcludeChunks))
	for _, id := range f.ExcludeChunks {
		excluded[id] = true
	}
	if !f.NarrowsSources() {
		return func(id int64) bool { return !excluded[id] }, nil
	}
	allowed, err := kept()
	if err != nil {
		return nil, err
	}
	return func(id int64) bool { return allowed[id] && !excluded[id] }, nil
}

// Scored is a chunk ID with its score from one retrieval method.
type Scored struct {
	ChunkID int64
	Score   float64
}

// Stats describes an index.
type Stats struct {
	Sources   int
	Chunks    int
	Terms     int   // distinct keyword terms
	Bytes     int64 // original content bytes
	Vectors   int   // chunks with an embedding
	SizeBytes int64 // on-disk size when the driver knows it, else 0
}

// ListOptions pages through sources.
type ListOptions struct {
	Type     doc.SourceType // empty for all
	PathGlob string         // empty for all
	Limit    int            // 0 for no limit
	Offset   int
}

// Documents holds sources, their original content and their chunks.
type Documents interface {
	// Replace writes sources in one transaction: each source's old chunks,
	// postings and vectors are removed and the new ones written. Either every
	// source in the batch is written or none is.
	Replace(ctx context.Context, batch []SourceData) error
	// Delete removes sources and everything derived from them; unknown IDs are
	// ignored. It returns how many sources were removed.
	Delete(ctx context.Context, ids []string) (int, error)

	// Source returns one source record by ID.
	Source(ctx context.Context, id string) (doc.Source, error)
	// SourceByURI returns one source record by its URI.
	SourceByURI(ctx context.Context, uri string) (doc.Source, error)
	// Sources lists source records ordered by URI.
	Sources(ctx context.Context, opt ListOptions) ([]doc.Source, error)
	// Content returns a source's original content.
	Content(ctx context.Context, id string) (string, error)
	// Chunks returns a source's chunks in order.
	Chunks(ctx context.Context, sourceID string) ([]doc.Chunk, error)
	// Hits loads chunks with their sources, in the order of ids; unknown IDs are skipped.
	Hits(ctx context.Context, ids []int64) ([]doc.Hit, error)
	// Hashes returns the content hash of every source, by URI; the indexer uses
	// it to skip unchanged sources and to find vanished ones.
	Hashes(ctx context.Context) (map[string]string, error)
	// EachChunk calls fn for every chunk, in ID order, with its source's title.
	EachChunk(ctx context.Context, fn func(c doc.Chunk, title string) error) error
}

// Keyword is the BM25 keyword index. It takes terms already analysed by the
// caller (analyze.Analyzer.QueryTerms), so a store never parses text to
// answer a query.
type Keyword interface {
	// KeywordSearch ranks chunks by BM25 over terms and returns at most k of
	// them, best first (SortScored order).
	KeywordSearch(ctx context.Context, terms []string, k int, f Filter) ([]Scored, error)
	// DocFreq returns how many chunks contain each of terms (0 for those
	// none does), and the number of chunks in the index.
	DocFreq(ctx context.Context, terms []string) (map[string]int, int, error)
}

// Vectors is the vector index, present when an embedder is pinned.
type Vectors interface {
	// InitVectors prepares the index to hold dim-dimensional embeddings; it
	// fails if the index already holds vectors of another dimension.
	InitVectors(ctx context.Context, dim int) error
	// ClearVectors drops every embedding (before re-embedding with another model).
	ClearVectors(ctx context.Context) error
	// VectorSearch ranks chunks by cosine similarity to q (scores in [-1, 1])
	// and returns at most k of them, best first (SortScored order).
	VectorSearch(ctx context.Context, q []float32, k int, f Filter) ([]Scored, error)
	// VectorsByHash returns stored embeddings keyed by the content hash of the
	// chunk's context text (doc.ContextText), so unchanged chunks are never
	// embedded twice.
	VectorsByHash(ctx context.Context, hashes []string) (map[string][]float32, error)
	// VectorsByID returns the stored embeddings of chunks.
	VectorsByID(ctx context.Context, ids []int64) (map[int64][]float32, error)
	// SetVectors stores embeddings for existing chunks.
	SetVectors(ctx context.Context, vecs map[int64][]float32) error
}

// Meta holds the index's pinned settings and its writer lock.
type Meta interface {
	// Meta reads a setting pinned in the index ("" if unset); SetMeta writes one.
	Meta(ctx context.Context, key string) (string, error)
	SetMeta(ctx context.Context, key, value string) error
	// Lock takes the index's writer lock for a long run (a whole `sagasu
	// index`), so that a second writer is refused with ErrLocked instead of
	// interleaving with it. Call the returned function to release it.
	Lock(ctx context.Context) (unlock func(), err error)
}

// Store is a whole index backend: every part above, the run log, its
// statistics and Close. Methods are safe for concurrent use; writes from
// several goroutines are serialised by the driver.
type Store interface {
	Documents
	Applier
	Renamer
	Keyword
	Vectors
	Meta
	Runs
	RunRemover
	Leases
	// Stats describes the index.
	Stats(ctx context.Context) (Stats, error)
	// Close releases the store.
	Close() error
}

// IsZeroVector reports a zero vector: a text the model knows no word of. It
// has no direction to compare, so stores do not keep it.
func IsZeroVector(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}
