package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// failingStore is an index whose keyword search fails with err.
type failingStore struct {
	store.Store
	err error
}

func (f failingStore) KeywordSearch(context.Context, []string, int, store.Filter) ([]store.Scored, error) {
	return nil, f.err
}

// useEngine makes the fixture search with e.
func (f *fixture) useEngine(t *testing.T, e *search.Engine) {
	t.Helper()
	rt := *f.srv.rt
	rt.Engine = e
	ts, err := tools.New(tools.Options{Engine: e})
	if err != nil {
		t.Fatal(err)
	}
	rt.Tools = ts
	f.srv.rt = &rt
	f.srv.useTools(ts)
}

// withStoreFailing makes the fixture's searches fail with err.
func (f *fixture) withStoreFailing(t *testing.T, err error) {
	t.Helper()
	f.useEngine(t, search.New(failingStore{Store: f.srv.rt.Store, err: err}))
}

// TestSearchErrorsByClass: the page's search answers by the toolset's
// rules and by kind of failure: bad input is 400 and the message names
// the input; an index server that cannot be reached is 503; any other
// failure is 500 saying what was being done and why.
func TestSearchErrorsByClass(t *testing.T) {
	f := newFixture(t, "", docs)
	var e struct{ Error string }
	for _, tc := range []struct {
		body map[string]any
		name string // what the message must name
	}{
		{map[string]any{"query": "  "}, "search is empty"},
		{map[string]any{"query": "x", "k": tools.MaxQueryK + 1}, "51"},
		{map[string]any{"query": "x", "mode": "fuzzy"}, "fuzzy"},
		{map[string]any{"query": "x", "types": []string{"pdf"}}, "pdf"},
		{map[string]any{"query": "x", "glob": "docs/[x"}, "docs/[x"},
	} {
		if code := f.call(t, "POST", "/api/search", tc.body, &e); code != http.StatusBadRequest || !strings.Contains(e.Error, tc.name) {
			t.Errorf("search %v: %d %q, want 400 naming %q", tc.body, code, e.Error, tc.name)
		}
	}
	// k at the toolset's bound is accepted.
	if code := f.call(t, "POST", "/api/search", map[string]any{"query": "rotate keys", "k": tools.MaxQueryK}, nil); code != http.StatusOK {
		t.Errorf("k = MaxQueryK: %d, want 200", code)
	}

	down := store.Unavailable(errors.New("cannot reach PostgreSQL at 127.0.0.1:1: connection refused"))
	f.withStoreFailing(t, down)
	if code := f.call(t, "POST", "/api/search", map[string]any{"query": "rotate keys", "mode": "keyword"}, &e); code != http.StatusServiceUnavailable || !strings.Contains(e.Error, "cannot reach PostgreSQL") {
		t.Errorf("search with the index's server down: %d %q, want 503 naming the cause", code, e.Error)
	}

	f.withStoreFailing(t, errors.New("disk I/O error"))
	if code := f.call(t, "POST", "/api/search", map[string]any{"query": "rotate keys", "mode": "keyword"}, &e); code != http.StatusInternalServerError ||
		!strings.Contains(e.Error, `search "rotate keys"`) || !strings.Contains(e.Error, "disk I/O error") {
		t.Errorf("search with a failing index: %d %q, want 500 saying what failed", code, e.Error)
	}
}
