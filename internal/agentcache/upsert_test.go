package agentcache

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpsertKeepsOneRecordPerKey: a session updated step by step stays one
// record (same ID, readable by Get, listed once) holding the last update;
// another key is another record; a failed update changes nothing; a key
// with any characters is a safe file name.
func TestUpsertKeepsOneRecordPerKey(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "agent"), Options{})
	step := func(key string, n int) Record {
		t.Helper()
		rec, err := c.Upsert(Sessions, key, func(old Record, found bool) (Record, error) {
			if found != (n > 1) {
				t.Errorf("step %d of %q: found %t", n, key, found)
			}
			var steps []int
			if found {
				if err := json.Unmarshal(old.Data, &steps); err != nil {
					t.Fatal(err)
				}
			}
			steps = append(steps, n)
			raw, _ := json.Marshal(steps)
			return Record{Goal: "g " + key, Data: raw}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	key := "../mcp session/1"
	first := step(key, 1)
	second := step(key, 2)
	third := step(key, 3)
	other := step("another", 1)
	if first.ID != second.ID || second.ID != third.ID || other.ID == first.ID {
		t.Fatalf("ids %s %s %s, other %s: want one ID per key", first.ID, second.ID, third.ID, other.ID)
	}
	if !strings.HasPrefix(first.ID, "session-") || strings.ContainsAny(first.ID, "/ ") {
		t.Fatalf("id %q: want a session record ID that is a plain file name", first.ID)
	}
	steps := func(r Record) string {
		var n []int
		_ = json.Unmarshal(r.Data, &n)
		raw, _ := json.Marshal(n)
		return string(raw)
	}
	got, err := c.Get(first.ID)
	if err != nil || steps(got) != "[1,2,3]" || got.Goal != "g "+key {
		t.Fatalf("Get = %s %q, %v; want the three steps", got.Data, got.Goal, err)
	}
	if recs, _ := c.List(ListOptions{Kind: Sessions}); len(recs) != 2 {
		t.Fatalf("List = %v; want one record per key", ids(recs))
	}
	boom := errors.New("boom")
	if _, err := c.Upsert(Sessions, key, func(Record, bool) (Record, error) { return Record{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("a failing update: %v", err)
	}
	if got, _ := c.Get(first.ID); steps(got) != "[1,2,3]" {
		t.Fatalf("after a failed update the record holds %s", got.Data)
	}
	// A record Save wrote is never taken for a keyed one.
	if _, err := c.Save(Record{Kind: Sessions, Goal: "plain"}); err != nil {
		t.Fatal(err)
	}
	if rec := step("another", 2); rec.ID != other.ID {
		t.Fatalf("after a plain Save the key's record moved: %s, want %s", rec.ID, other.ID)
	}
}
