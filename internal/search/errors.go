package search

import (
	"errors"
	"fmt"
)

// Kinds of failure a face answers differently (errors.Is): a request that
// cannot be answered as given, a meaning search of an index without
// embeddings, an embedder that failed, a source reference that names
// several sources. A source or section that is not there is
// store.ErrNotFound.
var (
	ErrBadRequest = errors.New("the search cannot be run as asked")
	ErrNoEmbedder = errors.New("the index has no embeddings")
	ErrEmbedder   = errors.New("the embedder failed")
	ErrAmbiguous  = errors.New("the reference names several sources")
)

// kinded is an error with its own message that is also one of the kinds.
type kinded struct {
	err  error
	kind error
}

func (e *kinded) Error() string   { return e.err.Error() }
func (e *kinded) Unwrap() []error { return []error{e.err, e.kind} }

// kindf formats an error (with %w as fmt.Errorf) that is also kind.
func kindf(kind error, format string, a ...any) error {
	return &kinded{err: fmt.Errorf(format, a...), kind: kind}
}
