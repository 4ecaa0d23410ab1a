package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

func TestRunFindsWhatOneQueryMisses(t *testing.T) {
	e := testEngine(t, corpus, Options{})
	ctx := context.Background()
	res, err := e.Run(ctx, RunOptions{Goal: deployGoal, Query: "deploy", K: 4})
	if err != nil {
		t.Fatal(err)
	}
	first := res.Iterations[0]
	if first.Query != "deploy" || len(first.Evaluation.MissingAspects) == 0 {
		t.Fatalf("first iteration %q found everything (%q); the test needs a query that misses", first.Query, first.Evaluation.FoundAspects)
	}
	last := res.Iterations[len(res.Iterations)-1]
	if len(res.Iterations) < 2 || last.Evaluation.Coverage != 1 || last.Evaluation.ShouldContinue || last.Refinement != nil {
		t.Fatalf("%d iterations, last %+v", len(res.Iterations), last.Evaluation)
	}
	if res.FinalQuery != last.Query || !strings.HasPrefix(res.Stopped, ActionUseResults) {
		t.Fatalf("final query %q, stopped %q", res.FinalQuery, res.Stopped)
	}
	seen := map[string]bool{}
	for i, it := range res.Iterations {
		key := newQuerySet(e).key(it.Query)
		if seen[key] {
			t.Errorf("iteration %d repeats query %q", i+1, it.Query)
		}
		seen[key] = true
		if i < len(res.Iterations)-1 && (it.Refinement == nil || it.Refinement.RefinedQuery != res.Iterations[i+1].Query) {
			t.Errorf("iteration %d: refinement %+v does not lead to the next query", i+1, it.Refinement)
		}
	}
	if len(res.Results) == 0 || len(res.Results) > 4 {
		t.Fatalf("%d results; want 1 to 4", len(res.Results))
	}
	ids, uris := map[int64]bool{}, map[string]bool{}
	for _, r := range res.Results {
		if ids[r.ChunkID] {
			t.Errorf("chunk %d twice in the results", r.ChunkID)
		}
		ids[r.ChunkID] = true
		uris[r.Source.URI] = true
	}
	if !uris["guide/sitemap-generation.md"] && !uris["ja/guide/sitemap.md"] {
		t.Errorf("results %v lack the sitemap page the first query missed", uris)
	}
}

func TestRunFromTheGoalAlone(t *testing.T) {
	e := testEngine(t, corpus, Options{})
	res, err := e.Run(context.Background(), RunOptions{Goal: "最終更新日時とサイトマップを表示する"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations[0].Query != "最終更新日時とサイトマップ" {
		t.Fatalf("first query %q; want the goal's core", res.Iterations[0].Query)
	}
	ev := res.Iterations[len(res.Iterations)-1].Evaluation
	if ev.Coverage != 1 {
		t.Fatalf("coverage %v, missing %q", ev.Coverage, ev.MissingAspects)
	}
}

func TestRunJSONShape(t *testing.T) {
	e := testEngine(t, corpus, Options{})
	res, err := e.Run(context.Background(), RunOptions{Goal: deployGoal, Query: "deploy", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Goal       string `json:"goal"`
		Iterations []struct {
			Query      string         `json:"query"`
			Evaluation map[string]any `json:"evaluation"`
			Refinement map[string]any `json:"refinement"`
		} `json:"iterations"`
		FinalQuery string           `json:"finalQuery"`
		Results    []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if v.Goal != deployGoal || v.FinalQuery == "" || len(v.Iterations) == 0 || len(v.Results) == 0 {
		t.Fatalf("JSON %s", data)
	}
	for _, key := range []string{"confidence", "coverage", "relevance", "foundAspects", "missingAspects", "shouldContinue", "recommendation"} {
		if _, ok := v.Iterations[0].Evaluation[key]; !ok {
			t.Errorf("evaluation lacks %q", key)
		}
	}
	if r := v.Iterations[0].Refinement; r != nil {
		for _, key := range []string{"refinedQuery", "reasoning", "alternatives", "strategy"} {
			if _, ok := r[key]; !ok {
				t.Errorf("refinement lacks %q", key)
			}
		}
	}
	// The results are in the shape of `sagasu query --json`.
	for _, key := range []string{"chunkId", "score", "heading", "lines", "text", "source"} {
		if _, ok := v.Results[0][key]; !ok {
			t.Errorf("result lacks %q", key)
		}
	}
}

func TestRunBadInput(t *testing.T) {
	e := testEngine(t, corpus, Options{})
	ctx := context.Background()
	if _, err := e.Run(ctx, RunOptions{Goal: " "}); !errors.Is(err, ErrEmptyGoal) {
		t.Errorf("empty goal: %v", err)
	}
	for _, opt := range []RunOptions{{Goal: "g", K: -1}, {Goal: "g", K: 5000}, {Goal: "g", MaxIterations: -2}} {
		if _, err := e.Run(ctx, opt); err == nil {
			t.Errorf("%+v was accepted", opt)
		}
	}
	if _, err := New(nil, Options{}).Run(ctx, RunOptions{Goal: "g"}); err == nil {
		t.Error("a loop without an index ran")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Run(cctx, RunOptions{Goal: deployGoal}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// Nothing found for a goal the index has no words of: stop at once.
	res, err := e.Run(ctx, RunOptions{Goal: "Kubernetes operators and Terraform modules"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Iterations) != 1 || !strings.HasPrefix(res.Stopped, ActionIndexMore) {
		t.Errorf("%d iterations, stopped %q; want index_more at once", len(res.Iterations), res.Stopped)
	}
}

func TestRunRecordsAndLearns(t *testing.T) {
	dir := t.TempDir()
	cache, err := agentcache.Open(dir, agentcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := testEngine(t, corpus, Options{Cache: cache})
	ctx := context.Background()
	res, err := e.Run(ctx, RunOptions{Goal: deployGoal, Query: "deploy", K: 4})
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Iterations)
	count := func(k agentcache.Kind) int {
		recs, err := cache.List(agentcache.ListOptions{Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}
	if count(agentcache.Sessions) != 1 || count(agentcache.Evaluations) != n || count(agentcache.Refinements) != n-1 {
		t.Fatalf("records: %d sessions, %d evaluations, %d refinements for %d iterations",
			count(agentcache.Sessions), count(agentcache.Evaluations), count(agentcache.Refinements), n)
	}
	if _, err := os.Stat(filepath.Join(dir, agentcache.SummaryFile)); err != nil {
		t.Fatal(err)
	}
	// A similar goal later starts from what worked.
	res2, err := e.Run(ctx, RunOptions{Goal: "Deploy to GitHub Pages and generate a sitemap", Query: "deploy", K: 4})
	if err != nil {
		t.Fatal(err)
	}
	reused := false
	for _, it := range res2.Iterations {
		if it.Refinement != nil && it.Refinement.Origin == OriginCache {
			reused = true
		}
	}
	if !reused {
		t.Errorf("the second loop reused no refinement: %+v", res2.Iterations)
	}
}

// TestRunWithAnUnreadableCache: a cache that cannot be written costs a
// warning, not the loop, and loses nothing already cached. The folders are
// made unusable two ways: as files (which stops root too) and by permissions.
func TestRunWithAnUnreadableCache(t *testing.T) {
	for _, how := range []string{"file", "permissions"} {
		t.Run(how, func(t *testing.T) {
			if how == "permissions" && os.Geteuid() == 0 {
				testenv.Platform(t, false, "permissions do not apply to root; scripts/unprivileged-tests.sh runs this test as nobody")
			}
			dir := t.TempDir()
			cache, err := agentcache.Open(dir, agentcache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			old, err := cache.Save(agentcache.Record{Kind: agentcache.Stages, Goal: "earlier"})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []agentcache.Kind{agentcache.Evaluations, agentcache.Refinements, agentcache.Sessions} {
				p := filepath.Join(dir, string(k))
				if how == "file" {
					err = os.WriteFile(p, []byte("not a folder"), 0o644)
				} else if err = os.MkdirAll(p, 0o755); err == nil {
					err = os.Chmod(p, 0o500)
					t.Cleanup(func() { os.Chmod(p, 0o755) })
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			e := testEngine(t, corpus, Options{Cache: cache, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			res, err := e.Run(context.Background(), RunOptions{Goal: deployGoal, Query: "deploy", K: 4})
			if err != nil || len(res.Results) == 0 {
				t.Fatalf("the loop failed for want of a cache: %v", err)
			}
			if !strings.Contains(logs.String(), "agent cache") {
				t.Fatalf("no warning about the cache; log:\n%s", logs.String())
			}
			got, err := cache.Get(old.ID)
			if err != nil || got.Goal != "earlier" {
				t.Fatalf("the earlier record: %+v, %v", got, err)
			}
		})
	}
}

// TestRunSavesItsSessionEveryIteration: the loop's session record exists
// from the end of its first iteration on, holding the iterations done so
// far (not done yet), and ends as one record, done, under the loop's
// session ID; a loop given a session ID updates that session's record.
func TestRunSavesItsSessionEveryIteration(t *testing.T) {
	cache, err := agentcache.Open(t.TempDir(), agentcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type saved struct {
		SessionID  string            `json:"sessionId"`
		Iterations []json.RawMessage `json:"iterations"`
		Done       bool              `json:"done"`
	}
	read := func() (agentcache.Record, saved) {
		t.Helper()
		recs, err := cache.List(agentcache.ListOptions{Kind: agentcache.Sessions})
		if err != nil || len(recs) != 1 {
			t.Fatalf("sessions: %d records, %v; want one", len(recs), err)
		}
		var s saved
		if err := json.Unmarshal(recs[0].Data, &s); err != nil {
			t.Fatal(err)
		}
		return recs[0], s
	}
	e := testEngine(t, corpus, Options{Cache: cache})
	seen := 0
	res, err := e.Run(context.Background(), RunOptions{Goal: deployGoal, Query: "deploy", K: 4, OnEvent: func(ev Event) {
		if ev.Kind == EventSearch && ev.Iteration > 1 {
			_, s := read()
			if len(s.Iterations) != ev.Iteration-1 || s.Done {
				t.Errorf("before iteration %d the session holds %d iterations, done %t", ev.Iteration, len(s.Iterations), s.Done)
			}
			seen++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Iterations) < 2 || seen != len(res.Iterations)-1 {
		t.Fatalf("%d iterations, %d checked in flight: the corpus should take the loop past one iteration", len(res.Iterations), seen)
	}
	rec, s := read()
	if !s.Done || len(s.Iterations) != len(res.Iterations) || s.SessionID != res.SessionID || rec.ID != res.SessionRecord ||
		!strings.HasPrefix(res.SessionID, "loop-") {
		t.Fatalf("final session: done %t, %d iterations, id %q record %q; result %q %q", s.Done, len(s.Iterations), s.SessionID, rec.ID, res.SessionID, res.SessionRecord)
	}
	again, err := e.Run(context.Background(), RunOptions{Goal: deployGoal, Query: "deploy", K: 4, Session: res.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if rec2, _ := read(); again.SessionRecord != rec.ID || rec2.ID != rec.ID {
		t.Fatalf("a loop given session %q wrote record %q, want %q", res.SessionID, again.SessionRecord, rec.ID)
	}
}
