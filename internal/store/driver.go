package store

import (
	"context"
	"time"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Driver is what an index backend implements: narrow primitives that
// trust their arguments, as database/sql's driver package is to
// database/sql. New puts the Store contract over a Driver: it checks and
// normalises every argument once, answers what needs no storage (an empty
// batch, k <= 0, a store without vectors), implements once what every
// backend did alike (SourceByURI, Hashes, the run log's rules) and hands
// the rest down. Optional capabilities stay optional: a Driver that is also
// a Warmer or a Settler is asked to warm or settle through the Store.
//
// The comment on each method says what New has made sure of before it is
// called; the driver need not check it again.
type Driver interface {
	// Replace writes a batch in one transaction (or, for a store without
	// transactions, recoverably; see the Qdrant driver). The batch is not
	// empty; each source appears once, has a URI and the ID
	// doc.SourceID(URI); Vectors is nil or holds one vector per chunk, each
	// zero or of the index's dimension, and the index has vectors when any
	// source carries them. The driver refuses what it cannot store.
	Replace(ctx context.Context, batch []SourceData) error
	// Delete removes the sources of ids (not empty, each once) that exist
	// and everything derived from them, and returns how many it removed.
	Delete(ctx context.Context, ids []string) (int, error)
	// RenameSource renames source id to uri (not empty, not its current
	// URI), as Renamer says.
	RenameSource(ctx context.Context, id, uri string) (doc.Source, error)

	// Source returns one source record; ErrNotFound when there is none.
	Source(ctx context.Context, id string) (doc.Source, error)
	// Sources lists source records ordered by URI (opt's glob is valid).
	Sources(ctx context.Context, opt ListOptions) ([]doc.Source, error)
	// Content, Chunks, Hits (ids not empty) and EachChunk are as in
	// Documents.
	Content(ctx context.Context, id string) (string, error)
	Chunks(ctx context.Context, sourceID string) ([]doc.Chunk, error)
	Hits(ctx context.Context, ids []int64) ([]doc.Hit, error)
	EachChunk(ctx context.Context, fn func(c doc.Chunk, title string) error) error

	// Keyword, Vectors and Meta are as the Store's, with these made sure
	// of: KeywordSearch gets terms (not empty, each once) and k > 0;
	// DocFreq its terms each once; InitVectors dim > 0; VectorSearch a
	// query of the index's dimension that is not zero, and k > 0;
	// VectorsByHash and VectorsByID keys (not empty, each once) of an index
	// that has vectors; SetVectors vectors (not empty, none zero, each of
	// the index's dimension). Meta and SetMeta get a key.
	Keyword
	Vectors
	Meta
	// VectorDim is the dimension of the index's vectors, 0 when it has none.
	VectorDim(ctx context.Context) (int, error)

	RunLog
	RunDropper
	LeaseLog

	Stats(ctx context.Context) (Stats, error)
	Close() error
}

// RunLog is a driver's run log. New checks every run and event, fills
// their defaults (times in UTC to the microsecond), orders what the driver
// lists, and turns stored JSON "" back into nil.
type RunLog interface {
	// InsertRun stores a new run, complete and checked; ErrExists when its
	// ID is taken.
	InsertRun(ctx context.Context, r Run) error
	// UpdateRun sets the non-empty fields of u on run id and its Updated to
	// at; ErrNotFound when there is no such run.
	UpdateRun(ctx context.Context, id string, u RunUpdate, at time.Time) error
	// Run returns one run; ErrNotFound when there is none.
	Run(ctx context.Context, id string) (Run, error)
	// RunsOfKind returns every run of kind ("" for all), in any order.
	RunsOfKind(ctx context.Context, kind string) ([]Run, error)
	// AppendEvents appends events (not empty, checked, Seq 1..n) to run
	// runID in one transaction, each stored at Seq plus the run's last Seq,
	// which it reserves so that concurrent appenders get consecutive
	// ranges; it raises the run's Updated to latest if that is later, and
	// returns the last Seq before the append. ErrNotFound when there is no
	// such run.
	AppendEvents(ctx context.Context, runID string, events []Event, latest time.Time) (int64, error)
	// Events returns the events of an existing run with Seq above afterSeq,
	// in any order.
	Events(ctx context.Context, runID string, afterSeq int64) ([]Event, error)
}
