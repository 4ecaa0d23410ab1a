package mcpserver

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool calls from many clients (HTTP sessions) queue, first come first
// served, for a few slots: as many as the machine has processors. Without
// the queue, every call runs at once; at 64 clients the index's connection
// pool, which keeps two idle SQLite connections, opens and closes a new
// connection (schema read, cold page cache) for most queries, throughput
// falls as clients are added and the unlucky calls wait seconds (p99 at 8×
// p50). With it, throughput stays flat and each call waits its turn.
//
// Long calls stay out of the queue: sagasu_index writes for minutes behind
// its own lock and sagasu_ask mostly waits for a model; either would hold
// a slot the quick calls need.

// queue admits tool calls in arrival order, at most a fixed number at
// once.
type queue struct {
	mu      sync.Mutex
	free    int             // slots nobody holds
	waiters []chan struct{} // callers waiting, first come first
}

func newQueue(n int) *queue {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return &queue{free: n}
}

// enter waits for a slot, behind every caller that came before, and
// returns the function that frees it. A caller whose ctx ends while it
// waits leaves the queue with ctx's error.
func (q *queue) enter(ctx context.Context) (func(), error) {
	q.mu.Lock()
	if q.free > 0 && len(q.waiters) == 0 {
		q.free--
		q.mu.Unlock()
		return q.leave, nil
	}
	turn := make(chan struct{})
	q.waiters = append(q.waiters, turn)
	q.mu.Unlock()
	select {
	case <-turn:
		return q.leave, nil
	case <-ctx.Done():
		q.mu.Lock()
		defer q.mu.Unlock()
		if i := slices.Index(q.waiters, turn); i >= 0 {
			q.waiters = slices.Delete(q.waiters, i, i+1)
			return nil, ctx.Err()
		}
		// The slot was handed over as ctx ended: pass it on.
		q.handOn()
		return nil, ctx.Err()
	}
}

// leave frees a slot: the longest waiting caller takes it.
func (q *queue) leave() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.handOn()
}

// handOn gives a freed slot to the first waiter, or keeps it free; q.mu
// is held.
func (q *queue) handOn() {
	if len(q.waiters) == 0 {
		q.free++
		return
	}
	close(q.waiters[0])
	q.waiters = q.waiters[1:]
}

// waiting counts the callers waiting for a slot.
func (q *queue) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters)
}

// unqueued are the tools that do not take a slot.
var unqueued = map[string]bool{ToolIndex: true, ToolAsk: true}

// queueCalls runs each quick tool call in its turn.
func (s *Server) queueCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || r.Params == nil || unqueued[r.Params.Name] {
			return next(ctx, method, req)
		}
		leave, err := s.queue.enter(ctx)
		if err != nil {
			return nil, err
		}
		defer leave()
		return next(ctx, method, req)
	}
}
