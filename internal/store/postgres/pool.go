package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// pool hands out connections to the server, at most max at a time. It is the
// small part of a connection pool the store needs: connections are made on
// demand, reused, checked with a ping after a second of idleness (so a
// server restart costs no failed query), and dropped when broken.
type pool struct {
	cfg   *pgx.ConnConfig
	setup func(context.Context, *pgx.Conn) error // run on every new connection

	slots chan struct{} // one token per open connection
	idle  chan idleConn // capacity max: never blocks a release
	mu    sync.Mutex    // guards closed
	done  chan struct{} // closed by close
	once  sync.Once
}

type idleConn struct {
	c     *pgx.Conn
	since time.Time
}

// idlePing is how long a connection may sit unused before it is pinged.
const idlePing = time.Second

var errPoolClosed = errors.New("the index is closed")

func newPool(cfg *pgx.ConnConfig, max int, setup func(context.Context, *pgx.Conn) error) *pool {
	return &pool{cfg: cfg, setup: setup, slots: make(chan struct{}, max), idle: make(chan idleConn, max), done: make(chan struct{})}
}

// acquire returns an idle connection, or a new one while fewer than max are
// open, or waits for one to be released.
func (p *pool) acquire(ctx context.Context) (*pgx.Conn, error) {
	for {
		var ic idleConn
		select {
		case <-p.done:
			return nil, errPoolClosed
		case ic = <-p.idle:
		default:
			select {
			case <-p.done:
				return nil, errPoolClosed
			case <-ctx.Done():
				return nil, ctx.Err()
			case ic = <-p.idle:
			case p.slots <- struct{}{}:
				c, err := p.connect(ctx)
				if err != nil {
					<-p.slots
					return nil, err
				}
				return c, nil
			}
		}
		if time.Since(ic.since) < idlePing || ic.c.Ping(ctx) == nil {
			return ic.c, nil
		}
		p.discard(ic.c)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

func (p *pool) connect(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return nil, err
	}
	if p.setup != nil {
		if err := p.setup(ctx, c); err != nil {
			c.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return c, nil
}

// release returns c to the pool, or closes it when it is broken, still in a
// transaction or the pool is closed.
func (p *pool) release(c *pgx.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		p.discard(c)
		return
	default:
	}
	if c.IsClosed() || c.PgConn().IsBusy() || c.PgConn().TxStatus() != 'I' {
		p.discard(c)
		return
	}
	p.idle <- idleConn{c, time.Now()}
}

func (p *pool) discard(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.Close(ctx)
	<-p.slots
}

// with runs fn on a pooled connection.
func (p *pool) with(ctx context.Context, fn func(*pgx.Conn) error) error {
	c, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	defer p.release(c)
	return fn(c)
}

// close closes the idle connections; those in use close when released.
func (p *pool) close() {
	p.once.Do(func() {
		p.mu.Lock()
		close(p.done)
		p.mu.Unlock()
		for {
			select {
			case ic := <-p.idle:
				p.discard(ic.c)
			default:
				return
			}
		}
	})
}
