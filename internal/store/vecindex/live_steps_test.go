package vecindex

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The tests here drive a Live index's background work by hand (newLive
// starts no goroutine; step, startBuild/endBuild run it) so that a change
// lands at a chosen point of a build or a repair, without timing.

// checkLive fails t unless l's rows, queue, free list and graph agree:
// every free row is deleted and unlinked, every row that is neither live
// nor linked is queued or free (none leaks), and every link of a linked
// node, live or tombstone, points to a linked node that has the layer.
// A walk that follows a link to a freed node panics or returns another
// chunk's row.
func checkLive(t *testing.T, l *Live) {
	t.Helper()
	l.mu.RLock()
	defer l.mu.RUnlock()
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	defer func() {
		t.Helper()
		if len(bad) > 0 {
			t.Fatalf("%d inconsistencies, first: %s", len(bad), strings.Join(bad[:min(len(bad), 5)], "; "))
		}
	}()
	g := l.g
	state := func(r int32) uint8 {
		if g == nil {
			return unlinked
		}
		return g.state[r]
	}
	inFree := map[int32]bool{}
	for _, r := range l.free {
		switch {
		case inFree[r]:
			fail("row %d is free twice", r)
		case !l.gone[r]:
			fail("row %d is free but holds a live vector", r)
		case state(r) != unlinked:
			fail("row %d is free but still a node of the graph (state %d)", r, state(r))
		}
		inFree[r] = true
	}
	inQueue := map[int32]bool{}
	for _, r := range l.queue {
		switch {
		case inQueue[r] || inFree[r]:
			fail("row %d is queued twice or queued and free", r)
		case state(r) != unlinked:
			fail("row %d is queued but already linked (state %d)", r, state(r))
		}
		inQueue[r] = true
	}
	if g == nil {
		return
	}
	for r, gone := range l.gone {
		st := g.state[r]
		switch {
		case !gone && st != live && !inQueue[int32(r)]:
			fail("row %d holds a live vector but is neither linked nor queued (state %d)", r, st)
		case gone && st == live:
			fail("row %d was deleted but the graph still returns it", r)
		case gone && st == unlinked && !inFree[int32(r)] && !inQueue[int32(r)]:
			fail("row %d was deleted and is unlinked but never freed", r)
		}
	}
	lives, deads, top := 0, 0, -1
	for nd, st := range g.state {
		lv := int(g.levels[nd])
		switch st {
		case unlinked:
			if lv != 0 || g.count0[nd] != 0 || g.upper[nd] != nil {
				fail("freed node %d keeps a level or links", nd)
			}
			continue
		case live:
			lives++
		case dead:
			deads++
		}
		top = max(top, lv)
		if len(g.upper[nd]) != lv*(g.m+1) {
			fail("node %d at level %d has %d upper slots", nd, lv, len(g.upper[nd]))
			continue
		}
		for ly := 0; ly <= lv; ly++ {
			for _, nb := range g.neighbours(int32(nd), ly) {
				switch {
				case g.state[nb] == unlinked:
					fail("node %d (state %d) links on layer %d to freed node %d", nd, st, ly, nb)
				case int(g.levels[nb]) < ly:
					fail("node %d links on layer %d to node %d of level %d", nd, ly, nb, g.levels[nb])
				}
			}
		}
	}
	if lives != g.live || deads != g.dead {
		fail("graph counts %d live, %d dead; the states say %d, %d", g.live, g.dead, lives, deads)
	}
	if top >= 0 && (g.entry < 0 || g.state[g.entry] == unlinked || int(g.levels[g.entry]) != g.top || g.top != top) {
		fail("entry %d at top %d, the highest node is at %d", g.entry, g.top, top)
	}
}

// TestLiveRepairRelinksRowsDeletedDuringIt deletes rows after a repair
// has begun and before it relinks them. Such a row stays a tombstone that
// searches and inserts walk through, so its links must not keep pointing
// to the nodes the repair frees: once freed, a node has no upper layers
// (a walk there panicked: index out of range), and once reused it is
// another chunk's row.
func TestLiveRepairRelinksRowsDeletedDuringIt(t *testing.T) {
	const n, more, dim = 800, 300, 16
	ctx := context.Background()
	rows := Clustered(n+more, dim, 51)
	// M 4: many nodes on upper layers, where a link to a freed node panics.
	l := newLive(dim, 0, LiveOptions{Approx: n / 2, Graph: HNSWOptions{M: 4, Seed: 2, Workers: 1}, RepairAt: 0.08})
	for i := range n {
		l.Add(int64(i+1), rows[i])
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	g := l.g
	if g == nil || len(l.queue) != 0 {
		t.Fatalf("no graph, or rows left queued, after %d rows and a flush", n)
	}
	for i := 0; i < n; i += 10 {
		l.Delete(int64(i + 1)) // 10% tombstones: due for a repair
	}
	if !l.step(ctx) || l.rep == nil {
		t.Fatal("the step did not begin a repair of 10% tombstones")
	}
	doomed := map[int32]bool{}
	for _, nd := range l.rep.doomed {
		doomed[nd] = true
	}
	// Rows linked to a doomed tombstone on an upper layer die now, before
	// the repair reaches them.
	late := 0
	for nd := range g.state {
		if late == 30 {
			break
		}
		if g.state[nd] != live {
			continue
		}
	layers:
		for ly := 1; ly <= int(g.levels[nd]); ly++ {
			for _, nb := range g.neighbours(int32(nd), ly) {
				if doomed[nb] {
					l.Delete(l.f.ids[nd])
					late++
					break layers
				}
			}
		}
	}
	if late < 10 {
		t.Fatalf("only %d live nodes link to a tombstone on an upper layer; the test needs more", late)
	}
	for l.rep != nil {
		l.step(ctx)
	}
	if s := l.Stats(); s.Dead != late || s.Free != len(doomed) {
		t.Fatalf("after the repair: %+v, want the %d late rows as tombstones and the %d doomed rows free", s, late, len(doomed))
	}
	checkLive(t, l)
	// New rows take the freed rows and are linked by walks that pass the
	// late tombstones.
	for i := n; i < n+more; i++ {
		l.Add(int64(i+1), rows[i])
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	checkLive(t, l)
	for i := n; i < n+more; i += 7 {
		if got := l.Search(rows[i], 1, nil); len(got) != 1 || got[0].ChunkID != int64(i+1) {
			t.Fatalf("row of chunk %d: nearest %v, want itself", i+1, got)
		}
	}
}

// TestLiveBuildTakesOverFreeRows builds the first graph over rows some of
// which were deleted before it (their rows free for reuse) and while it
// ran. The graph links every row of its view, so a row freed before the
// build is a tombstone afterwards and must leave the free list (reused,
// it was linked a second time over its old links); a row added and
// deleted during the build is not in the graph and must be freed (it
// leaked).
func TestLiveBuildTakesOverFreeRows(t *testing.T) {
	const n, dim = 300, 16
	ctx := context.Background()
	rows := Clustered(n+100, dim, 61)
	l := newLive(dim, 0, LiveOptions{Approx: n / 2, Graph: HNSWOptions{M: 4, Seed: 5, Workers: 1}})
	for i := range n {
		l.Add(int64(i+1), rows[i])
	}
	for id := int64(1); id <= 20; id++ {
		l.Delete(id) // no graph yet: the rows are free at once
	}
	if s := l.Stats(); s.Free != 20 {
		t.Fatalf("before the build: %+v, want 20 free rows", s)
	}
	viewRows, view := l.startBuild()
	for i := n; i < n+30; i++ {
		l.Add(int64(i+1), rows[i]) // a new row each: none is reused while the build runs
	}
	for id := int64(21); id <= 25; id++ {
		l.Delete(id) // in the view: a tombstone once installed
	}
	for id := int64(n + 1); id <= n+5; id++ {
		l.Delete(id) // added during the build: not in the graph
	}
	g, err := BuildHNSW(ctx, view, l.opt.Graph)
	if err != nil {
		t.Fatal(err)
	}
	l.endBuild(g, viewRows)
	s := l.Stats()
	if s.Dead != 25 || s.Free != 5 || s.Queued != 25 {
		t.Errorf("after the build: %+v, want 25 tombstones, 5 free rows and 25 queued", s)
	}
	checkLive(t, l)
	for i := n + 30; i < n+100; i++ {
		l.Add(int64(i+1), rows[i])
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	checkLive(t, l)
	for i := n + 5; i < n+100; i += 3 {
		if got := l.Search(rows[i], 1, nil); len(got) != 1 || got[0].ChunkID != int64(i+1) {
			t.Fatalf("row of chunk %d: nearest %v, want itself", i+1, got)
		}
	}
}
