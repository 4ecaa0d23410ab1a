package storetest

import (
	"context"
	"strconv"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// AnalyzerOpener opens the driver's index at one place, with the given
// analyzer (nil: the default one); create makes it when it is not there.
type AnalyzerOpener func(t *testing.T, an *analyze.Analyzer, create bool) store.Store

// analyzed is a store that says which analyzer its keyword index is read
// with (the drivers' Analyzer method).
type analyzed interface {
	Analyzer() *analyze.Analyzer
}

// AnalyzerUpgrade checks that an index built by analyzer version 1 (every
// CJK run as bigrams) is upgraded in place the first time this build opens
// it: its keyword index is rebuilt with the current analyzer (Japanese as
// words), the new analyzer is pinned, the keyword write counter moves (so
// long-lived processes drop their caches), and nothing else changes.
func AnalyzerUpgrade(t *testing.T, open AnalyzerOpener) {
	t.Helper()
	ctx := context.Background()
	v1 := analyze.New(analyze.Options{Version: 1})
	cur := analyze.New(analyze.Options{})
	ja := Source("ja/config.md", "file", "設定", "設定ファイルを作成する方法を説明します。")
	other := Source("ja/theme.md", "file", "テーマ", "テーマを作成してください。方法はいくつかあります。")
	en := Source("en/cats.md", "file", "Cats", "Cats purr when they are content.")

	old := open(t, v1, true)
	mustReplace(t, old, ja, other, en)
	if got := search(t, old, v1.QueryTerms("ファイル")); len(got) != 1 {
		t.Fatalf("the version 1 index finds %d chunks for its bigrams of ファイル, want 1", len(got))
	}
	before := meta(t, old, bm25.VersionKey)
	wantContent, err := old.Content(ctx, ja.Source.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := open(t, nil, false)
	if got := meta(t, s, "analyzer.version"); got != cur.Signature() {
		t.Errorf("analyzer pinned after the upgrade = %q, want %q", got, cur.Signature())
	}
	if a, ok := s.(analyzed); ok && a.Analyzer().Signature() != cur.Signature() {
		t.Errorf("the upgraded index is read with %q, want %q", a.Analyzer().Signature(), cur.Signature())
	}
	after := meta(t, s, bm25.VersionKey)
	if n, m := atoi(before), atoi(after); m <= n {
		t.Errorf("keyword write counter %q → %q: the upgrade must move it", before, after)
	}
	// Japanese is read as words now: ファイル is a term, its bigrams are not.
	res := search(t, s, cur.QueryTerms("設定ファイル"))
	if len(res) != 1 {
		t.Errorf("after the upgrade 設定ファイル finds %d chunks, want only the config page", len(res))
	} else if u := uris(t, s, res); u[0] != "ja/config.md" {
		t.Errorf("after the upgrade 設定ファイル finds %v", u)
	}
	if got := search(t, s, []string{"ァイ"}); len(got) != 0 {
		t.Errorf("a bigram of version 1 is still indexed after the upgrade: %d chunks", len(got))
	}
	if got := uris(t, s, search(t, s, cur.QueryTerms("purr"))); len(got) != 1 || got[0] != "en/cats.md" {
		t.Errorf("English after the upgrade: %v", got)
	}
	if st, err := s.Stats(ctx); err != nil || st.Sources != 3 || st.Chunks != 3 {
		t.Errorf("stats after the upgrade = %+v, %v; want 3 sources, 3 chunks", st, err)
	}
	if c, err := s.Content(ctx, ja.Source.ID); err != nil || c != wantContent {
		t.Errorf("content after the upgrade = %q, %v; want %q", c, err, wantContent)
	}
	// It takes writes with the new analyzer.
	mustReplace(t, s, Source("ja/deploy.md", "file", "デプロイ", "サイトをデプロイする手順"))
	if got := uris(t, s, search(t, s, cur.QueryTerms("デプロイしたい"))); len(got) != 1 || got[0] != "ja/deploy.md" {
		t.Errorf("a page written after the upgrade is found as %v", got)
	}
	again := meta(t, s, bm25.VersionKey)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Opening it again changes nothing.
	s = open(t, nil, false)
	defer s.Close()
	if got := meta(t, s, bm25.VersionKey); got != again {
		t.Errorf("reopening an upgraded index moved the keyword counter %q → %q", again, got)
	}
}

func search(t *testing.T, s store.Store, terms []string) []store.Scored {
	t.Helper()
	res, err := s.KeywordSearch(context.Background(), terms, 10, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func meta(t *testing.T, s store.Store, key string) string {
	t.Helper()
	v, err := s.Meta(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
