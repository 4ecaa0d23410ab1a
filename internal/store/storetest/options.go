package storetest

import (
	"math"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Options relax the suite for a driver that cannot meet a check exactly.
// The zero Options is the full suite every driver is held to by default;
// a driver's test that sets one says why in its own documentation.
type Options struct {
	// RankOnlyKeyword stops comparing keyword scores with the reference
	// BM25 (KeywordMatchesReferenceBM25, Delete, DeleteChunksWithoutTerms,
	// KeywordAfterManyBatches, RenameSource) and, in ReplaceIsIdempotent,
	// compares the sources hit instead of the scores. Every other keyword
	// check still applies: the same number of hits as the reference, hits
	// sorted by score, the expected chunk first, filters, Japanese, k, stopword and empty
	// queries. It is for a store that ranks with a search engine's own
	// BM25, which normalises document length by the average length at the
	// time each chunk was written rather than the current one, and whose
	// IDF may count replaced points not yet purged (the Qdrant driver's
	// keyword=qdrant mode).
	RankOnlyKeyword bool
}

// rankOnly marks a store whose keyword scores are not compared with the
// reference (Options.RankOnlyKeyword).
type rankOnly struct{ store.Store }

func (o Options) wrap(s store.Store) store.Store {
	if o.RankOnlyKeyword {
		return rankOnly{s}
	}
	return s
}

// scoreOK reports whether a keyword score matches the reference score,
// to 1e-4, for a store held to reference scores.
func scoreOK(s store.Store, got, want float64) bool {
	if _, loose := s.(rankOnly); loose {
		return got > 0
	}
	return math.Abs(got-want) <= 1e-4
}
