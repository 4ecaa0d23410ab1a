package app

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// e5Server is an OpenAI-compatible embeddings server that records the texts
// it is asked to embed.
type e5Server struct {
	URL     string
	mu      sync.Mutex
	texts   []string
	batches []int
}

func newE5Server(t *testing.T) *e5Server {
	s := &e5Server{}
	srv := embedtest.NewServer(t, embedtest.OpenAI(t, 8, func(texts []string) {
		s.mu.Lock()
		s.texts = append(s.texts, texts...)
		s.batches = append(s.batches, len(texts))
		s.mu.Unlock()
	}))
	s.URL = srv.URL
	return s
}

func (s *e5Server) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...)
}

func openTestStore(t *testing.T) store.Store {
	t.Helper()
	st, err := OpenStore(context.Background(), filepath.Join(t.TempDir(), "p.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func ptr(s string) *string { return &s }

func TestKnownModelGetsItsPrefixesAndPinsThem(t *testing.T) {
	ctx := context.Background()
	srv := newE5Server(t)
	st := openTestStore(t)
	// One user (one HOME) pins the index with a flag, then searches without it.
	a := &App{Config: Defaults(), Getenv: embedtest.Env(map[string]string{"HOME": t.TempDir()})}
	a.Config.Embedder = EmbedderConfig{Driver: "openai", URL: srv.URL, Model: "multilingual-e5-small"}

	e, err := a.Embedder(ctx, st, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedDocuments(ctx, []string{"cats purr"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedQuery(ctx, "why do cats purr"); err != nil {
		t.Fatal(err)
	}
	seen := srv.seen()
	if !slices.Contains(seen, "passage: cats purr") || !slices.Contains(seen, "query: why do cats purr") {
		t.Errorf("the E5 server saw %q, want prefixed passages and queries", seen)
	}
	pin, err := Pinned(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if pin.QueryPrefix == nil || *pin.QueryPrefix != "query: " || pin.DocumentPrefix == nil || *pin.DocumentPrefix != "passage: " {
		t.Errorf("pin = %+v, want the E5 prefixes recorded", pin)
	}

	// A search with no embedder flags uses the pin, prefixes included.
	q := &App{Config: Defaults(), Getenv: a.Getenv}
	e, err = q.Embedder(ctx, st, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedQuery(ctx, "what is a cat"); err != nil {
		t.Fatal(err)
	}
	if seen := srv.seen(); seen[len(seen)-1] != "query: what is a cat" {
		t.Errorf("query through the pinned embedder reached the model as %q", seen[len(seen)-1])
	}
}

func TestPrefixPinning(t *testing.T) {
	ctx := context.Background()
	srv := newE5Server(t)
	base := EmbedderConfig{Driver: "openai", URL: srv.URL, Model: "multilingual-e5-small"}
	app := func(c EmbedderConfig) *App {
		a := &App{Config: Defaults(), Getenv: embedtest.Env(nil)}
		a.Config.Embedder = c
		return a
	}
	with := func(q, d *string) EmbedderConfig {
		c := base
		c.QueryPrefix, c.DocumentPrefix = q, d
		return c
	}

	for _, tc := range []struct {
		name      string
		legacyPin string          // meta written by a version without prefixes
		build     *EmbedderConfig // the config the index is built with
		use       EmbedderConfig  // the config of the later run
		wantErr   string          // "" for success
		wantQuery string          // what the model then sees for the query "x y"
	}{
		{name: "unset follows the pin", build: ptrCfg(with(ptr("q: "), ptr("d: "))), use: base, wantQuery: "q: x y"},
		{name: "same explicit prefix", build: ptrCfg(with(ptr("q: "), ptr("d: "))), use: with(ptr("q: "), nil), wantQuery: "q: x y"},
		{name: "other query prefix refused", build: ptrCfg(base), use: with(ptr(""), nil), wantErr: `query prefix ""`},
		{name: "other document prefix refused", build: ptrCfg(base), use: with(nil, ptr("doc: ")), wantErr: `document prefix "doc: "`},
		{name: "legacy pin means no prefixes", legacyPin: `{"driver":"openai","model":"multilingual-e5-small","url":"` + srv.URL + `","dim":8}`, use: base, wantQuery: "x y"},
		{name: "legacy pin refuses an explicit prefix", legacyPin: `{"driver":"openai","model":"multilingual-e5-small","url":"` + srv.URL + `","dim":8}`, use: with(ptr("query: "), nil), wantErr: `query prefix ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openTestStore(t)
			if tc.legacyPin != "" {
				if err := st.InitVectors(ctx, 8); err != nil {
					t.Fatal(err)
				}
				if err := st.SetMeta(ctx, metaEmbedder, tc.legacyPin); err != nil {
					t.Fatal(err)
				}
			} else if _, err := app(*tc.build).Embedder(ctx, st, true); err != nil {
				t.Fatalf("building the index: %v", err)
			}
			e, err := app(tc.use).Embedder(ctx, st, false)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "sagasu reindex") {
					t.Errorf("err = %v, want a refusal naming %s and the way out", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.EmbedQuery(ctx, "x y"); err != nil {
				t.Fatal(err)
			}
			if seen := srv.seen(); seen[len(seen)-1] != tc.wantQuery {
				t.Errorf("the model saw the query as %q, want %q", seen[len(seen)-1], tc.wantQuery)
			}
		})
	}
}

func ptrCfg(c EmbedderConfig) *EmbedderConfig { return &c }

func TestEmbedderConfigFromEnvironment(t *testing.T) {
	fs := flags()
	fs.String("embedder-query-prefix", "", "")
	fs.String("embedder-document-prefix", "", "")
	if err := fs.Parse([]string{"--embedder-document-prefix", ""}); err != nil {
		t.Fatal(err)
	}
	c, err := Load("", []string{"SAGASU_EMBEDDER_QUERY_PREFIX=search: ", "SAGASU_EMBEDDER=openai", "SAGASU_EMBEDDER_URL=http://127.0.0.1:9/v1"}, fs)
	if err != nil {
		t.Fatal(err)
	}
	// What `scripts/local-models.sh start` prints: variables named after the flags.
	if c.Embedder.Driver != "openai" || c.Embedder.URL != "http://127.0.0.1:9/v1" {
		t.Errorf("SAGASU_EMBEDDER and SAGASU_EMBEDDER_URL loaded as %+v", c.Embedder)
	}
	got := fmt.Sprintf("%v %v", c.Embedder.QueryPrefix != nil, c.Embedder.DocumentPrefix != nil)
	if got != "true true" || *c.Embedder.QueryPrefix != "search: " || *c.Embedder.DocumentPrefix != "" {
		t.Fatalf("query prefix from the environment and an empty document prefix from a flag: %+v", c.Embedder)
	}
	c, err = Load("", []string{"SAGASU_EMBEDDER_BATCH_SIZE=16"}, nil)
	if err != nil || c.Embedder.BatchSize != 16 {
		t.Errorf("SAGASU_EMBEDDER_BATCH_SIZE=16 loaded as %d, %v", c.Embedder.BatchSize, err)
	}
	// Unset stays unset, so the model's own prefixes apply.
	c, err = Load("", nil, flags())
	if err != nil {
		t.Fatal(err)
	}
	if c.Embedder.QueryPrefix != nil || c.Embedder.DocumentPrefix != nil {
		t.Errorf("unset prefixes loaded as %+v", c.Embedder)
	}
	if p := c.Embedder.Prefixes("intfloat/e5-base-v2"); p.Query != "query: " || p.Document != "passage: " {
		t.Errorf("defaults for an E5 model = %+v", p)
	}
}

func TestEmbedderBatchSize(t *testing.T) {
	srv := newE5Server(t)
	e, err := BuildEmbedder(context.Background(), EmbedderConfig{Driver: "openai", URL: srv.URL, Model: "m", BatchSize: 2}, embedtest.Env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedDocuments(context.Background(), []string{"a", "b", "c", "d", "e"}); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.batches) != 3 || slices.Max(srv.batches) != 2 {
		t.Errorf("5 texts with batch size 2 went in requests of %v", srv.batches)
	}
}
