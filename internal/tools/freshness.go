package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// RootState says how far the index is in step with one folder a watch
// follows (sagasu index --watch, sagasu mcp --watch, sagasu serve --watch).
type RootState struct {
	Root     string `json:"root" jsonschema:"the watched folder"`
	Watching bool   `json:"watching" jsonschema:"this server watches the folder now; false: another process did (see syncedAt)"`
	Syncing  bool   `json:"syncing" jsonschema:"changes are being written now; a query answers from the last state written, never from half of a change"`
	SyncedAt string `json:"syncedAt,omitempty" jsonschema:"when the index was last brought in step with the folder (RFC 3339)"`
	Pending  int    `json:"pending,omitempty" jsonschema:"changed paths seen and not written yet (they are written within a second or so)"`
	Notice   string `json:"notice,omitempty" jsonschema:"something the user should know: events lost and healed by a rescan, a watch limit reached"`
	Error    string `json:"error,omitempty" jsonschema:"why the last sync failed; it is tried again"`
}

// Freshness is the live state of the folders this process watches. A
// watch updates it; List reports it with what other processes recorded
// in the index.
type Freshness struct {
	mu    sync.Mutex
	roots map[string]*RootState
}

// Update changes the state of root (a canonical folder path) with fn.
func (f *Freshness) Update(root string, fn func(*RootState)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.roots == nil {
		f.roots = map[string]*RootState{}
	}
	st, ok := f.roots[root]
	if !ok {
		st = &RootState{Root: root}
		f.roots[root] = st
	}
	fn(st)
}

// States returns the watched folders' states, ordered by folder.
func (f *Freshness) States() []RootState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]RootState, 0, len(f.roots))
	for _, k := range slices.Sorted(maps.Keys(f.roots)) {
		out = append(out, *f.roots[k])
	}
	return out
}

// metaWatchState is the meta key under which syncs record, per folder,
// when the index was last in step with it, so that a process that does
// not watch (a second `sagasu mcp`) can tell.
const metaWatchState = "watch-state"

// recorded is what a sync records of a folder in the index.
type recorded struct {
	SyncedAt string `json:"syncedAt"`
}

// recordSync notes in the index that root is in step as of at. The
// caller holds the writer lock.
func (t *Toolset) recordSync(ctx context.Context, root string, at time.Time) error {
	m, err := t.recordedSyncs(ctx)
	if err != nil {
		return err
	}
	m[root] = recorded{SyncedAt: at.UTC().Format(time.RFC3339Nano)}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return t.store.SetMeta(ctx, metaWatchState, string(data))
}

// recordedSyncs reads what syncs recorded; an unreadable record is empty.
func (t *Toolset) recordedSyncs(ctx context.Context) (map[string]recorded, error) {
	v, err := t.store.Meta(ctx, metaWatchState)
	if err != nil {
		return nil, fmt.Errorf("read the watch state: %w", err)
	}
	m := map[string]recorded{}
	if v != "" {
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			t.log.Warn("unreadable watch state in the index; starting afresh", "err", err)
			m = map[string]recorded{}
		}
	}
	return m, nil
}

// Freshness returns the live state of the folders this process watches.
func (t *Toolset) Freshness() *Freshness { return t.fresh }

// rootStates merges this process's watched folders with the folders other
// processes recorded syncing.
func (t *Toolset) rootStates(ctx context.Context) ([]RootState, error) {
	live := t.fresh.States()
	rec, err := t.recordedSyncs(ctx)
	if err != nil {
		return nil, err
	}
	byRoot := map[string]RootState{}
	for root, r := range rec {
		byRoot[root] = RootState{Root: root, SyncedAt: r.SyncedAt}
	}
	for _, st := range live {
		if st.SyncedAt == "" {
			st.SyncedAt = byRoot[st.Root].SyncedAt
		}
		byRoot[st.Root] = st
	}
	out := make([]RootState, 0, len(byRoot))
	for _, k := range slices.Sorted(maps.Keys(byRoot)) {
		out = append(out, byRoot[k])
	}
	return out, nil
}

// DescribeRoot says a watched folder's state in one line for people and
// models: "watching /p: in step as of 2026-11-28T20:00:00Z; syncing now".
func DescribeRoot(r RootState) string {
	var b strings.Builder
	if r.Watching {
		b.WriteString("watching " + r.Root)
	} else {
		b.WriteString("watched earlier " + r.Root)
	}
	if r.SyncedAt != "" {
		b.WriteString(": in step as of " + r.SyncedAt)
	} else {
		b.WriteString(": not in step yet")
	}
	if r.Syncing {
		b.WriteString("; syncing now (queries answer from the last state written)")
	}
	if r.Pending > 0 {
		fmt.Fprintf(&b, "; %d change(s) waiting", r.Pending)
	}
	if r.Error != "" {
		b.WriteString("; last sync failed: " + r.Error)
	}
	if r.Notice != "" {
		b.WriteString("; " + r.Notice)
	}
	return b.String()
}
