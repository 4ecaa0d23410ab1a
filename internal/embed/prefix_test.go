package embed_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

// recorder is an Embedder that remembers the texts it was given.
type recorder struct {
	embed.Embedder
	mu      sync.Mutex
	docs    []string
	queries []string
}

func (r *recorder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.docs = append(r.docs, texts...)
	r.mu.Unlock()
	return r.Embedder.EmbedDocuments(ctx, texts)
}

func (r *recorder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	r.mu.Lock()
	r.queries = append(r.queries, text)
	r.mu.Unlock()
	return r.Embedder.EmbedQuery(ctx, text)
}

func TestWithPrefixesSendsEachSideItsPrefix(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		p         embed.Prefixes
		wantDoc   string
		wantQuery string
	}{
		{"e5", embed.Prefixes{Query: "query: ", Document: "passage: "}, "passage: a cat sat", "query: where is the cat"},
		{"query only", embed.Prefixes{Query: embed.BGEQueryPrefix}, "a cat sat", embed.BGEQueryPrefix + "where is the cat"},
		{"none", embed.Prefixes{}, "a cat sat", "where is the cat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{Embedder: embedtest.New(16)}
			e := embed.WithPrefixes(rec, tc.p)
			vecs, err := e.EmbedDocuments(ctx, []string{"a cat sat"})
			if err != nil || len(vecs) != 1 || len(vecs[0]) != 16 {
				t.Fatalf("EmbedDocuments = %d vectors, %v", len(vecs), err)
			}
			if _, err := e.EmbedQuery(ctx, "where is the cat"); err != nil {
				t.Fatal(err)
			}
			if len(rec.docs) != 1 || rec.docs[0] != tc.wantDoc {
				t.Errorf("model saw documents %q, want %q", rec.docs, tc.wantDoc)
			}
			if len(rec.queries) != 1 || rec.queries[0] != tc.wantQuery {
				t.Errorf("model saw queries %q, want %q", rec.queries, tc.wantQuery)
			}
			if e.Info() != rec.Info() {
				t.Errorf("Info changed by the wrapper: %+v, want %+v", e.Info(), rec.Info())
			}
		})
	}
}

func TestWithPrefixesChangesTheVector(t *testing.T) {
	// The point of a prefix: the model embeds a different text.
	ctx := context.Background()
	base := embedtest.New(32)
	plain, err := base.EmbedQuery(ctx, "protein per day")
	if err != nil {
		t.Fatal(err)
	}
	pre, err := embed.WithPrefixes(base, embed.Prefixes{Query: "query: "}).EmbedQuery(ctx, "protein per day")
	if err != nil {
		t.Fatal(err)
	}
	same := true
	for i := range plain {
		if plain[i] != pre[i] {
			same = false
		}
	}
	if same {
		t.Error("a prefixed query embeds to the same vector as the bare one")
	}
}

func TestWithPrefixesKeepsBlankTextsAnError(t *testing.T) {
	// A prefix must not turn an empty chunk into a valid-looking "passage: ".
	e := embed.WithPrefixes(embedtest.New(8), embed.Prefixes{Query: "query: ", Document: "passage: "})
	if _, err := e.EmbedDocuments(context.Background(), []string{"fine", "  "}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("blank document: %v, want an error about an empty text", err)
	}
	if _, err := e.EmbedQuery(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("blank query: %v, want an error about an empty text", err)
	}
}

func TestKnownPrefixes(t *testing.T) {
	e5 := embed.Prefixes{Query: embed.E5QueryPrefix, Document: embed.E5DocumentPrefix}
	bge := embed.Prefixes{Query: embed.BGEQueryPrefix}
	for _, tc := range []struct {
		model string
		want  embed.Prefixes
	}{
		{"multilingual-e5-small-q4", e5},
		{"intfloat/e5-base-v2", e5},
		{"E5-Large-V2", e5},
		{"intfloat/multilingual-e5-large", e5},
		{"e5", e5},
		{"intfloat/e5-mistral-7b-instruct", embed.Prefixes{}},
		{"multilingual-e5-large-instruct", embed.Prefixes{}},
		{"BAAI/bge-small-en-v1.5", bge},
		{"bge-base-en-v1.5", bge},
		{"bge-m3", embed.Prefixes{}},
		{"bge-small-en", embed.Prefixes{}},
		{"text-embedding-3-small", embed.Prefixes{}},
		{"nomic-embed-text", embed.Prefixes{}},
		{"glove-subset", embed.Prefixes{}},
		{"some-e55-model", embed.Prefixes{}},
		{"", embed.Prefixes{}},
	} {
		if got := embed.KnownPrefixes(tc.model); got != tc.want {
			t.Errorf("KnownPrefixes(%q) = %+v, want %+v", tc.model, got, tc.want)
		}
	}
}
