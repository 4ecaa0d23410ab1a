package index

import (
	"context"
	"testing"
	"time"
)

// TestBudget checks the bound on content in flight to the writers: batches
// share the budget, a batch bigger than all of it goes alone, and a waiting
// producer is let go when the run is cancelled.
func TestBudget(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := newBudget(ctx, 100)
	if got := b.acquire(60); got != 60 {
		t.Fatalf("acquire(60) took %d", got)
	}
	if got := b.acquire(30); got != 30 {
		t.Fatalf("acquire(30) took %d", got)
	}
	took := make(chan int)
	go func() { took <- b.acquire(500) }() // a large file: must wait for the others
	select {
	case n := <-took:
		t.Fatalf("a batch over the budget went in with 90 bytes in flight (took %d)", n)
	case <-time.After(50 * time.Millisecond):
	}
	b.release(60)
	select {
	case n := <-took:
		t.Fatalf("a batch over the budget went in with 30 bytes in flight (took %d)", n)
	case <-time.After(50 * time.Millisecond):
	}
	b.release(30)
	if n := <-took; n != 100 {
		t.Fatalf("the large batch took %d, want the whole budget", n)
	}
	go func() { took <- b.acquire(1) }()
	cancel()
	select {
	case <-took:
	case <-time.After(5 * time.Second):
		t.Fatal("a producer waiting for the budget was not released by cancellation")
	}
}
