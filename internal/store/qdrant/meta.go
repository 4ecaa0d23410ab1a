package qdrant

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Meta reads a setting pinned in the index ("" if unset).
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleMeta), Ids: []*qdrant.PointId{uuidOf("setting", key)}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return "", s.wrap("read setting "+key, err)
	}
	if len(pts) == 0 {
		return "", nil
	}
	return pstr(pts[0].GetPayload(), "value"), nil
}

// SetMeta writes a setting.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	return s.upsert(ctx, s.coll(roleMeta), []*qdrant.PointStruct{{
		Id: uuidOf("setting", key), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}),
		Payload: map[string]*qdrant.Value{"kind": vstr("setting"), "key": vstr(key), "value": vstr(value)},
	}})
}

// lockID is the writer lock's point in the meta collection.
var lockID = uuidOf("sys", "lock")

// lockTTL is how long a lock lives without being renewed: a writer that
// crashed frees the index after at most this long.
const lockTTL = 30 * time.Second

// Lock takes the index's writer lock: a point in the meta collection with
// an owner token and an expiry. It is taken with a conditional upsert that
// only overwrites an expired lock (Qdrant's update_filter), then read back:
// whoever's token is there holds it. The holder renews it every third of
// lockTTL until unlock.
func (s *Store) Lock(ctx context.Context) (func(), error) {
	owner := newGen()
	if err := s.putLock(ctx, owner, &qdrant.Filter{Must: []*qdrant.Condition{
		qdrant.NewRange("expires", &qdrant.Range{Lt: qdrant.PtrOf(float64(time.Now().UnixMilli()))}),
	}}); err != nil {
		return nil, err
	}
	pts, err := s.c.Get(ctx, &qdrant.GetPoints{CollectionName: s.coll(roleMeta), Ids: []*qdrant.PointId{lockID}, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return nil, s.wrap("read writer lock", err)
	}
	if len(pts) == 0 || pstr(pts[0].GetPayload(), "owner") != owner {
		holder := "another writer"
		if len(pts) > 0 {
			p := pts[0].GetPayload()
			holder = fmt.Sprintf("%s (pid %d, until %s unless renewed)", pstr(p, "host"), pint(p, "pid"), time.UnixMilli(pint(p, "expires")).UTC().Format(time.RFC3339))
		}
		return nil, fmt.Errorf("%s, prefix %q: held by %s: %w", s.where(), s.set.Prefix, holder, store.ErrLocked)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	mine := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("owner", owner)}}
	go func() {
		defer close(done)
		t := time.NewTicker(lockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				rctx, cancel := context.WithTimeout(context.Background(), lockTTL/3)
				if err := s.putLock(rctx, owner, mine); err != nil {
					slog.Warn("renewing the Qdrant writer lock failed", "err", err)
				}
				cancel()
			}
		}
	}()
	return func() {
		select {
		case <-stop:
			return
		default:
		}
		close(stop)
		<-done
		wait := true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(lockID), qdrant.NewMatch("owner", owner)}}
		if _, err := s.c.Delete(ctx, &qdrant.DeletePoints{CollectionName: s.coll(roleMeta), Wait: &wait, Points: qdrant.NewPointsSelectorFilter(f)}); err != nil {
			slog.Warn("releasing the Qdrant writer lock failed; it expires by itself", "err", err, "ttl", lockTTL)
		}
	}, nil
}

// putLock writes the lock for owner, replacing an existing lock point only
// when cond matches it (a missing lock is always written).
func (s *Store) putLock(ctx context.Context, owner string, cond *qdrant.Filter) error {
	wait := true
	_, err := s.c.Upsert(ctx, &qdrant.UpsertPoints{
		CollectionName: s.coll(roleMeta), Wait: &wait, UpdateFilter: cond,
		Points: []*qdrant.PointStruct{{
			Id: lockID, Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{}),
			Payload: map[string]*qdrant.Value{
				"kind": vstr("lock"), "owner": vstr(owner), "host": vstr(hostname()), "pid": vint(int64(pid())),
				"expires": vint(time.Now().Add(lockTTL).UnixMilli()),
			},
		}},
	})
	return s.wrap("take writer lock", err)
}
