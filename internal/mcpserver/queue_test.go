package mcpserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestQueueServesInArrivalOrder checks that calls waiting for a slot get
// it first come, first served, and that a caller who gives up leaves the
// queue.
func TestQueueServesInArrivalOrder(t *testing.T) {
	q := newQueue(1)
	ctx := context.Background()
	leave, err := q.enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 5)
	for i := range 5 {
		go func() {
			l, err := q.enter(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			l()
		}()
		// Caller i waits before caller i+1 arrives.
		for q.waiting() < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := q.enter(gone); !errors.Is(err, context.Canceled) || q.waiting() != 5 {
		t.Errorf("a cancelled caller: %v, %d waiting; want context.Canceled and it gone from the queue", err, q.waiting())
	}
	leave()
	for want := range 5 {
		if got := <-order; got != want {
			t.Fatalf("slot went to caller %d, want %d (arrival order)", got, want)
		}
	}
}

// TestCallsQueueForSlots checks that a quick call waits while the slots
// are taken and runs when one frees, that a client who cancels while
// waiting gets its answer at once, and that sagasu_index does not queue.
func TestCallsQueueForSlots(t *testing.T) {
	f := newFixture(t, Options{MaxConcurrentCalls: 1})
	f.add(512, english(1, 3, 20))
	ctx := context.Background()
	leave, err := f.srv.queue.enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolQuery, Arguments: map[string]any{"query": "sidebar"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	// The index tool does not wait for the taken slot.
	if sc, _ := f.ok(ToolIndex, map[string]any{"text": "# Note\n\nqueue words"}); num(sc, "added") != 1 {
		t.Errorf("index while the slot is taken: %v", sc)
	}
	// The query is queued: it is seen waiting for the slot, and has not run.
	for f.srv.queue.waiting() == 0 {
		select {
		case res := <-done:
			t.Fatalf("a query ran while the only slot was taken: %v", res)
		case <-time.After(time.Millisecond):
		}
	}
	select {
	case res := <-done:
		t.Fatalf("a query ran while the only slot was taken: %v", res)
	default:
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := f.cs.CallTool(short, &mcp.CallToolParams{Name: ToolList, Arguments: map[string]any{}}); err == nil {
		t.Error("a call whose client gave up while waiting succeeded")
	}
	leave()
	select {
	case res := <-done:
		if res == nil || res.IsError {
			t.Fatalf("the queued query: %v", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the queued query never ran after the slot was freed")
	}
}
