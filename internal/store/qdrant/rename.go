package qdrant

import (
	"context"
	"fmt"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// RenameSource implements store.Driver. A source's point ID derives from
// its ID, so the record moves to a new point; its chunks and vectors keep
// their point IDs (the chunk IDs) and only their sid and uri payload
// fields change. Qdrant has no transactions, so the rename is journaled as
// a write is: the new record is written first, then the chunks and vectors
// are relabelled and the old record deleted; a crash in between is
// finished forward by the next write (recover).
func (s *Store) RenameSource(ctx context.Context, id, uri string) (doc.Source, error) {
	newID := doc.SourceID(uri)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.recover(ctx); err != nil {
		return doc.Source{}, err
	}
	pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleSources), Ids: []*qdrant.PointId{sourcePID(id)}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return doc.Source{}, s.wrap("rename source "+id, err)
	}
	if len(pts) == 0 {
		return doc.Source{}, fmt.Errorf("rename source %q: %w", id, store.ErrNotFound)
	}
	old := pts[0].GetPayload()
	oldURI := pstr(old, "uri")
	taken, err := s.count(ctx, s.coll(roleSources), &qdrant.Filter{
		Should:  []*qdrant.Condition{qdrant.NewMatch("uri", uri), qdrant.NewHasID(sourcePID(newID))},
		MustNot: []*qdrant.Condition{qdrant.NewHasID(sourcePID(id))},
	})
	if err != nil {
		return doc.Source{}, err
	}
	if taken > 0 {
		return doc.Source{}, fmt.Errorf("rename source %q to %q: %w", oldURI, uri, store.ErrExists)
	}
	if err := s.writeJournal(ctx, "rename", "", []string{id, newID}); err != nil {
		return doc.Source{}, err
	}
	rec := make(map[string]*qdrant.Value, len(old))
	for k, v := range old {
		rec[k] = v
	}
	rec["id"], rec["uri"] = vstr(newID), vstr(uri)
	if err := s.upsert(ctx, s.coll(roleSources), []*qdrant.PointStruct{{
		Id: sourcePID(newID), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}), Payload: rec,
	}}); err != nil {
		return doc.Source{}, err
	}
	if s.crashAt == "renamed" {
		return doc.Source{}, errCrash
	}
	// The new record is the commit: finish even if ctx ends.
	ctx = context.WithoutCancel(ctx)
	if err := s.finishRename(ctx, id, newID, uri); err != nil {
		return doc.Source{}, err
	}
	if err := s.clearJournal(ctx); err != nil {
		return doc.Source{}, err
	}
	return sourceOf(rec), nil
}

// finishRename points the chunks and vectors of source from at the source
// to (whose URI is uri) and deletes from's record.
func (s *Store) finishRename(ctx context.Context, from, to, uri string) error {
	wait := true
	relabel := func(coll string) error {
		_, err := s.c.SetPayload(ctx, &qdrant.SetPayloadPoints{
			CollectionName: coll, Wait: &wait,
			Payload:        map[string]*qdrant.Value{"sid": vstr(to), "uri": vstr(uri)},
			PointsSelector: qdrant.NewPointsSelectorFilter(sourceFilter([]string{from})),
		})
		return s.wrap("rename source "+from+": relabel "+coll, err)
	}
	if err := relabel(s.coll(roleChunks)); err != nil {
		return err
	}
	if d, err := s.vectorDim(ctx); err != nil {
		return err
	} else if d > 0 {
		if err := relabel(s.coll(roleVectors)); err != nil {
			return err
		}
	}
	_, err := s.c.Delete(ctx, &qdrant.DeletePoints{CollectionName: s.coll(roleSources), Wait: &wait, Points: qdrant.NewPointsSelector(sourcePID(from))})
	return s.wrap("rename source "+from+": delete the old record", err)
}

// recoverRename finishes a rename a crash interrupted: once the new record
// is written the rename is committed and is completed; before, nothing
// was changed.
func (s *Store) recoverRename(ctx context.Context, ids []string) error {
	if len(ids) != 2 {
		return nil
	}
	recs, err := s.sourcePayloads(ctx, ids[1:], "uri")
	if err != nil {
		return err
	}
	rec, ok := recs[ids[1]]
	if !ok {
		return nil
	}
	return s.finishRename(ctx, ids[0], ids[1], pstr(rec, "uri"))
}
