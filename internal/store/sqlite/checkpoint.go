package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"sync"
)

// checkpointAt is the WAL size from which the background checkpointer
// copies it into the database.
const checkpointAt = 16 << 20

// checkpointer copies the WAL into the database on a connection of its
// own, after commits that leave the WAL past checkpointAt. Writers do not
// checkpoint themselves (wal_autocheckpoint is off on their connections),
// so the single writer's transaction no longer pays for it: a PASSIVE
// checkpoint takes no writer lock and runs on another core while the next
// batch is written. If it falls behind, trimWAL still bounds the WAL.
type checkpointer struct {
	db   *sql.DB
	path string
	kick chan struct{}
	stop context.CancelFunc
	done sync.WaitGroup
}

func startCheckpointer(db *sql.DB, path string) *checkpointer {
	ctx, stop := context.WithCancel(context.Background())
	c := &checkpointer{db: db, path: path, kick: make(chan struct{}, 1), stop: stop}
	c.done.Go(func() { c.run(ctx) })
	return c
}

// committed tells the checkpointer a write transaction committed.
func (c *checkpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		c.checkpointIfDue(ctx)
	}
}

// checkpointIfDue checkpoints the WAL when it is past checkpointAt.
func (c *checkpointer) checkpointIfDue(ctx context.Context) {
	if fi, err := os.Stat(c.path + "-wal"); err != nil || fi.Size() < checkpointAt {
		return
	}
	if _, err := c.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil && ctx.Err() == nil {
		slog.Debug("checkpoint the index's WAL", "index", c.path, "err", err)
	}
}

// close stops the checkpointer and waits for it.
func (c *checkpointer) close() {
	c.stop()
	c.done.Wait()
}
