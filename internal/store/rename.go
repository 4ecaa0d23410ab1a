package store

import (
	"context"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Renamer renames sources in place: the indexer uses it to give local
// files written under an older naming their canonical URIs without
// chunking, analysing or embedding anything again.
type Renamer interface {
	// RenameSource gives the source with ID id the URI uri and with it the
	// ID doc.SourceID(uri), in one transaction. Its content, chunks (their
	// IDs included), keyword postings and vectors stay as they are. It
	// fails with ErrNotFound when there is no such source and with
	// ErrExists when another source holds uri already; renaming a source to
	// its own URI changes nothing. It returns the renamed source.
	RenameSource(ctx context.Context, id, uri string) (doc.Source, error)
}
