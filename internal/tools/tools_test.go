package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
)

var docs = map[string]string{
	"deploy.md": "# Deploy Your Site\n\nBuild the site and upload the dist folder.\n\n## HTTP Cache Headers\n\nServe assets with Cache-Control: max-age=31536000, immutable.\n\n" +
		"## GitHub Pages\n\nCreate a workflow file that builds the site and publishes it with the pages action.\n",
	"sitemap.md": "# Sitemap Generation\n\nSet sitemap.hostname in the config to generate a sitemap.xml file when the site is built.\n",
	"routing.md": "# Routing\n\nPages map to files. The site uses file-based routing.\n\n## Clean URLs\n\nSet cleanUrls to serve pages of the site without .html.\n",
	"theme.md":   "# Theme\n\nThe theme decides how pages of the site look.\n",
}

// newToolset indexes docs (written to a folder, the only root) and returns
// a toolset over them.
func newToolset(t *testing.T) (*Toolset, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "sagasu.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cache, err := agentcache.Open(filepath.Join(dir, "cache"), agentcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "docs")
	for name, content := range docs {
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := New(Options{Engine: search.New(st), Cache: cache, Roots: []string{root},
		Index: index.Options{Chunk: chunk.Options{MaxTokens: 512, Overlap: 64}}})
	if err != nil {
		t.Fatal(err)
	}
	var progress []IndexProgress
	res, err := ts.Index(ctx, IndexInput{File: root}, func(p IndexProgress) { progress = append(progress, p) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != len(docs) || res.Index.Sources != len(docs) {
		t.Fatalf("indexed %d sources (index holds %d), want %d", res.Added, res.Index.Sources, len(docs))
	}
	if len(progress) == 0 || !progress[len(progress)-1].Final || progress[len(progress)-1].Read != len(docs) {
		t.Fatalf("progress reports %+v: want a final one after %d sources", progress, len(docs))
	}
	return ts, dir
}

func TestIndexStaysInsideRoots(t *testing.T) {
	ts, dir := newToolset(t)
	root := filepath.Join(dir, "docs")
	outside := filepath.Join(dir, "secret.md")
	if err := os.WriteFile(outside, []byte("# Secret\n\ntop secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	outsideMsg := func(p string) string {
		return `path "` + p + `" is not inside the allowed roots (` + ts.roots.String() + `)`
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"existing file outside", outside, outsideMsg(outside)},
		{"missing file outside", filepath.Join(dir, "nothere.md"), outsideMsg(filepath.Join(dir, "nothere.md"))},
		{"missing folder outside", "/nonexistent/zz/a.md", outsideMsg("/nonexistent/zz/a.md")},
		{"relative climb to an existing file", "../secret.md", outsideMsg("../secret.md")},
		{"relative climb to a missing file", "../nothere.md", outsideMsg("../nothere.md")},
		{"through a link out, existing", "up/secret.md", outsideMsg("up/secret.md")},
		{"through a link out, missing", "up/nothere.md", outsideMsg("up/nothere.md")},
		{"missing file inside", "nothere.md", `path "nothere.md" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ts.Index(context.Background(), IndexInput{File: tc.file}, nil)
			if err == nil || !strings.HasPrefix(err.Error(), "file: "+tc.want) {
				t.Fatalf("index %q: %v\nwant the answer to start %q", tc.file, err, "file: "+tc.want)
			}
		})
	}
	// The two answers outside the roots are the same text but for the path.
	_, errA := ts.Index(context.Background(), IndexInput{Files: []string{"x", outside}}, nil)
	_, errB := ts.Index(context.Background(), IndexInput{Files: []string{"x", filepath.Join(dir, "nothere.md")}}, nil)
	if errA == nil || errB == nil || strings.Replace(errA.Error(), "secret.md", "nothere.md", 1) != errB.Error() {
		t.Errorf("outside the roots, existing and missing paths are answered differently:\n%v\n%v", errA, errB)
	}
}

func TestDeleteStaysInsideRootsAndDryRuns(t *testing.T) {
	ts, dir := newToolset(t)
	ctx := context.Background()
	// A source indexed from outside the roots (as `sagasu index` may).
	outside := filepath.Join(dir, "secret.md")
	if err := os.WriteFile(outside, []byte("# Secret\n\ntop secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := index.New(ts.store, index.Options{Chunk: chunk.Options{MaxTokens: 512}})
	if _, err := ix.Run(ctx, []string{outside}); err != nil {
		t.Fatal(err)
	}
	before, _ := ts.stats(ctx)

	_, err := ts.Delete(ctx, DeleteInput{Sources: []string{"secret.md"}, InsideRoots: true})
	if err == nil || !strings.Contains(err.Error(), "is not inside the allowed roots") {
		t.Errorf("deleting a source outside the roots: %v", err)
	}
	_, err = ts.Delete(ctx, DeleteInput{Glob: "**/*.md", InsideRoots: true})
	if err == nil || !strings.Contains(err.Error(), "nothing was deleted") {
		t.Errorf("a glob that reaches outside the roots: %v", err)
	}
	dry, err := ts.Delete(ctx, DeleteInput{Glob: "**/docs/*.md", DryRun: true, InsideRoots: true})
	if err != nil || !dry.DryRun || dry.Deleted != 0 || len(dry.Sources) != len(docs) {
		t.Fatalf("dry run: %+v, %v; want the %d docs listed, none deleted", dry, err, len(docs))
	}
	if after, _ := ts.stats(ctx); after != before {
		t.Fatalf("a refused delete or a dry run changed the index: %+v, then %+v", before, after)
	}
	res, err := ts.Delete(ctx, DeleteInput{Sources: []string{"routing.md"}, Glob: "**/docs/*.md", InsideRoots: true})
	if err != nil || res.Deleted != len(docs) || res.Index.Sources != before.Sources-len(docs) {
		t.Fatalf("delete: %+v, %v; want %d deleted once each", res, err, len(docs))
	}
	// Without the roots (the CLI), the outside source can go.
	if res, err := ts.Delete(ctx, DeleteInput{Sources: []string{"secret.md"}}); err != nil || res.Deleted != 1 {
		t.Fatalf("CLI delete: %+v, %v", res, err)
	}
}

func TestQueryPagesThroughOneRanking(t *testing.T) {
	ts, _ := newToolset(t)
	ctx := context.Background()
	all, err := ts.Query(ctx, QueryInput{Query: "site pages", K: 6})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Hits) < 4 {
		t.Fatalf("%d hits for a query every page matches", len(all.Hits))
	}
	first, err := ts.Query(ctx, QueryInput{Query: "site pages", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	second, err := ts.Query(ctx, QueryInput{Query: "site pages", K: 2, Offset: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !first.HasMore || second.Offset != 2 || len(second.Hits) != 2 {
		t.Fatalf("pages: first has more %v; second at %d with %d hits", first.HasMore, second.Offset, len(second.Hits))
	}
	for i, h := range append(first.Hits, second.Hits...) {
		if h.Chunk.ID != all.Hits[i].Chunk.ID || h.Rank != i+1 {
			t.Errorf("paged hit %d is chunk %d (rank %d), the whole ranking has %d there", i+1, h.Chunk.ID, h.Rank, all.Hits[i].Chunk.ID)
		}
	}
	whole, err := ts.Query(ctx, QueryInput{Query: "Cache-Control", K: 1, WholeSource: true})
	if err != nil || len(whole.Hits) != 1 || whole.Hits[0].Original == nil || whole.Hits[0].Scope != "source" ||
		!strings.Contains(whole.Hits[0].Original.Content, "GitHub Pages") {
		t.Fatalf("wholeSource: %+v %v", whole.Hits, err)
	}
	op, _ := ts.Registry(DefOptions{}).Find(NameQuery)
	if _, err := op.CallWith(ctx, nil, QueryInput{Query: "x", K: MaxQueryK + 1}); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "k") {
		t.Errorf("k above the bound: %v, want an invalid argument naming k", err)
	}
}

func TestStageGuidanceNamesTools(t *testing.T) {
	ts, _ := newToolset(t)
	ctx := context.Background()
	p := loop.Plan{ID: "plan-t", Goal: "deploy and sitemap", Stages: []loop.Stage{
		{StageNumber: 1, Description: "deploy", Query: "deploy", ExpectedResults: loop.Expected{Keywords: []string{"deploy"}, MinConfidence: 0.7}},
		{StageNumber: 2, Description: "sitemap", Query: "sitemap", ExpectedResults: loop.Expected{Keywords: []string{"sitemap", "Kubernetes"}, MinConfidence: 0.9}},
		{StageNumber: 3, Description: "routing", Query: "routing", ExpectedResults: loop.Expected{Keywords: []string{"routing"}, MinConfidence: 0.7}},
	}}
	cases := []struct {
		index     int
		tool      string
		mentioned string
	}{
		{0, NameExecuteStage, "stage 2: sitemap"},
		{1, NameRefine, `"Kubernetes"`},
		{2, "", "all stages are done"},
	}
	for _, c := range cases {
		r, err := ts.RunStage(ctx, p, c.index, loop.QueryOptions{K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if r.Next.Tool != c.tool || !strings.Contains(r.Next.Reason, c.mentioned) {
			t.Errorf("stage %d next %+v: want tool %q and %q", c.index, r.Next, c.tool, c.mentioned)
		}
	}
	// An agent's stage call gets the same guidance.
	out, err := ts.PlanStage(ctx, StageInput{Plan: &PlanSpec{ID: p.ID, Goal: p.Goal, Stages: []StageSpec{{StageNumber: 1, Query: "deploy"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if g := out.Output(len(out.Results), NoLimit).Next; g.Action != loop.ActionUseResults {
		t.Errorf("the one stage of a plan leads to %+v, want use_results", g)
	}
}

func TestSearchDecidesTheNextTool(t *testing.T) {
	ts, _ := newToolset(t)
	ctx := context.Background()
	res, err := ts.Search(ctx, SearchInput{Goal: "generate a sitemap", Query: "sitemap hostname"})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Output(len(res.Hits), NoLimit, "")
	if out.Next.Action != loop.ActionUseResults || out.Next.Tool != NameGet ||
		out.Next.Arguments["source"] != res.Hits[0].Source.ID {
		t.Errorf("next %+v: want use_results with sagasu_get of the top source", out.Next)
	}
	if len(out.Results) == 0 || out.Results[0].Source.URI != res.Hits[0].Source.URI || out.Detail != ModeSummary || out.Results[0].Text != "" {
		t.Errorf("summary output %+v", out)
	}
	// Results off the goal: the next step is a refined query, ready to pass
	// back to sagasu_search.
	off, err := ts.Search(ctx, SearchInput{Goal: "generate a sitemap and deploy to GitHub Pages", Query: "theme look"})
	if err != nil {
		t.Fatal(err)
	}
	act := off.Output(len(off.Hits), NoLimit, "").Next
	ref := off.Refinement()
	if ref == nil || act.Tool != NameSearch || act.Arguments["query"] != ref.RefinedQuery || off.Evaluation().Confidence >= loop.DefaultMinConfidence {
		t.Errorf("off-goal search: action %+v, refinement %+v, confidence %v", act, ref, off.Evaluation().Confidence)
	}
	// No goal: the query is the goal.
	if r, err := ts.Search(ctx, SearchInput{Goal: " ", Query: "sitemap"}); err != nil || r.Input.Goal != "sitemap" {
		t.Errorf("a search without a goal: goal %q, %v; want the query as the goal", r.Input.Goal, err)
	}
}
