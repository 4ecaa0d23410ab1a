package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Lock implements store.Driver with a session-level advisory lock, held on a
// connection of its own for as long as the run lasts. The server releases it
// when that connection ends, so a writer that dies never leaves it behind.
func (s *Store) Lock(ctx context.Context) (func(), error) {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return nil, s.connError(err)
	}
	key := s.lockKey("writer")
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, s.wrap(fmt.Errorf("lock index in %s: %w", s.where, err))
	}
	if !ok {
		// Name the holder when the server lets us see it. A bigint key is
		// kept as classid (high half) and objid (low half).
		holder := ""
		var pid int
		var client, app string
		err := conn.QueryRow(ctx, `SELECT a.pid, COALESCE(host(a.client_addr), 'local'), a.application_name
			FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND l.classid::bigint = ($1::bigint >> 32) & 4294967295 AND l.objid::bigint = $1::bigint & 4294967295 AND l.objsubid = 1
			LIMIT 1`, key).Scan(&pid, &client, &app)
		if err == nil {
			holder = fmt.Sprintf(" (server process %d, client %s %s)", pid, client, app)
		}
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%w%s: another `sagasu index` is writing to the index in %s; wait for it to finish or use another --db",
			store.ErrLocked, holder, s.where)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx := context.Background()
			_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key)
			conn.Close(ctx)
		})
	}, nil
}
