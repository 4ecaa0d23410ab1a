package planact

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/testcorpus"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestResearchWithoutAModel runs the research brain on the Kumo corpus
// (in the repository, so it runs on every clone).
func TestResearchWithoutAModel(t *testing.T) {
	e := testcorpus.Kumo(t, "en")
	docs := testcorpus.KumoDocs()
	ts, err := tools.New(tools.Options{Engine: e})
	require.NoError(t, err)
	fns, err := ts.Functions()
	require.NoError(t, err)
	a := newAgent(t, Options{Research: NewLoopResearch(e, loop.Options{}), Functions: fns, Log: graph.NewMemLog()})
	ctx := context.Background()

	start := time.Now()
	goal := "Learn how to deploy a Kumo site, customize the sidebar and use frontmatter"
	res, err := a.Run(ctx, RunInput{Goal: goal})
	require.NoError(t, err)
	took := time.Since(start)
	require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
	require.GreaterOrEqual(t, len(res.Plan), 3, "one step per aspect: %+v", res.Plan)
	var covered, missing []string
	for _, st := range res.Plan {
		require.NotEmpty(t, st.Aspect)
		if st.Status == StatusDone {
			covered = append(covered, st.Aspect)
			assert.Contains(t, res.Answer, st.Aspect)
		} else {
			missing = append(missing, st.Aspect)
		}
	}
	assert.GreaterOrEqual(t, len(covered), 3, "covered %v, missing %v", covered, missing)
	require.NotEmpty(t, res.Results)
	uris := map[string]bool{}
	for _, c := range res.Results {
		assert.Positive(t, c.ChunkID)
		_, err := os.Stat(filepath.Join(docs, c.Source.URI))
		assert.NoError(t, err, "a cited chunk's source is a page of the corpus")
		uris[c.Source.URI] = true
	}
	// Each aspect is covered by a section about it.
	for _, st := range res.Plan {
		for _, word := range []string{"deploy", "sidebar", "frontmatter"} {
			if strings.Contains(st.Aspect, word) {
				assert.Contains(t, strings.ToLower(st.Result), word, "the citation for %q is about it", st.Aspect)
			}
		}
	}
	assert.True(t, uris["en/guide/deploy.md"], "the deploy guide is cited: %v", uris)
	for _, s := range res.Steps {
		assert.Equal(t, ToolSearch, s.Tool)
	}
	assert.Zero(t, res.Usage.Total(), "no model, no tokens")
	t.Logf("research without a model: %d of %d aspects covered (%s) in %s, %d searches, %d replans, %d cited chunks",
		len(covered), len(res.Plan), strings.Join(covered, "; "), took.Round(time.Millisecond), len(res.Steps), res.Replans, len(res.Results))
	t.Logf("answer:\n%s", res.Answer)

	// An aspect the first query does not cover gets refined queries, a
	// bounded number of them, each new.
	goal = "Understand how to set up i18n, add a custom 404 page, configure the local search and enable the last updated timestamp"
	res, err = a.Run(ctx, RunInput{Goal: goal})
	require.NoError(t, err)
	require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
	assert.Positive(t, res.Replans, "some aspect needed a refined query")
	refined := 0
	for _, st := range res.Plan {
		assert.LessOrEqual(t, len(st.Tried), 1+DefaultMaxRefines, st.Aspect)
		seen := map[string]bool{}
		for _, q := range st.Tried {
			assert.False(t, seen[q], "%s: query %q repeated", st.Aspect, q)
			seen[q] = true
		}
		refined += max(0, len(st.Tried)-1) // an aspect without indexed words is never searched
	}
	assert.Equal(t, res.Replans, refined)
	t.Logf("with refinements: %s (%d searches, %d replans)", res.Reason, len(res.Steps), res.Replans)

	res, err = a.Run(ctx, RunInput{Goal: "Explain quantum chromodynamics lattice gauge theory"})
	require.NoError(t, err)
	assert.Equal(t, OutcomeFailure, res.Outcome)
	assert.NotEmpty(t, res.Reason)
	assert.Empty(t, res.Results)
	t.Logf("an impossible research goal: %s: %s (%d searches, %d replans)", res.Outcome, res.Reason, len(res.Steps), res.Replans)
}

func TestResearchRefinesMissingAspects(t *testing.T) {
	// The first query finds nothing; the refined one ("kettle 1") does.
	kb := &fakeResearch{}
	kb.onSearch = func(q string) error {
		if q == "kettle 1" {
			kb.passages = []doc.Hit{hit(7, "kitchen.md", "Kettle", "Fill the kettle with fresh water.")}
		}
		return nil
	}
	a := newAgent(t, Options{Research: kb, Functions: kb})
	res, err := a.Run(context.Background(), RunInput{Goal: "kettle"})
	require.NoError(t, err)
	require.Equal(t, OutcomeSuccess, res.Outcome, res.Reason)
	assert.Equal(t, []string{"kettle", "kettle 1"}, kb.searched)
	assert.Equal(t, 1, res.Replans)
	assert.Equal(t, []Cited{{ChunkID: 7, Source: SourceRef{URI: "kitchen.md"}, Heading: "Kettle"}}, res.Results)
	assert.Contains(t, res.Answer, "kitchen.md > Kettle [1]")

	kb = &fakeResearch{}
	a = newAgent(t, Options{Research: kb, Functions: kb})
	res, err = a.Run(context.Background(), RunInput{Goal: "coffee"})
	require.NoError(t, err)
	assert.Equal(t, OutcomeFailure, res.Outcome)
	assert.Equal(t, DefaultMaxRefines, res.Replans, "bounded refinements")
	assert.Equal(t, []string{"coffee", "coffee 1", "coffee 2"}, kb.searched)
	assert.Contains(t, res.Reason, "covers none of the goal's aspects")
	assert.Equal(t, StatusFailed, res.Plan[0].Status)
}

// stuckResearch refines every query into itself.
type stuckResearch struct{ fakeResearch }

func (s *stuckResearch) Refine(_ context.Context, _, _, query string, _ []doc.Hit, _ []string) (string, error) {
	return query, nil
}

func TestResearchStopsWhenRefiningGivesNothingNew(t *testing.T) {
	kb := &stuckResearch{}
	a := newAgent(t, Options{Research: kb, Functions: kb})
	res, err := a.Run(context.Background(), RunInput{Goal: "teapot"})
	require.NoError(t, err)
	assert.Equal(t, OutcomeFailure, res.Outcome)
	assert.Equal(t, []string{"teapot"}, kb.searched, "the same query is not searched again")
	assert.Equal(t, 0, res.Replans)
	assert.Contains(t, res.Plan[0].Result, "refining gave no new query")
	var failed []string
	for _, ev := range eventsOf(res.Trace, graph.TypeThought) {
		if strings.HasPrefix(ev.Text, "Step ") && strings.Contains(ev.Text, "failed") {
			failed = append(failed, ev.Text)
		}
	}
	require.Len(t, failed, 1)
	assert.True(t, strings.HasPrefix(failed[0], "Step 1 failed"), failed[0])
}

// TestLoopResearchCitesTheBestPagesPerAspect: an aspect is judged against
// the whole pool of a run's hits, and its evidence is the best covering
// hits, one per page; an aspect not covered gets the closest leads.
func TestLoopResearchCitesTheBestPagesPerAspect(t *testing.T) {
	e := testcorpus.VitePress(t, "en")
	r := NewLoopResearch(e, loop.Options{})
	ctx := context.Background()
	var pool []doc.Hit
	for _, q := range []string{"sidebar", "collapsible sidebar groups", "deploy GitHub Pages"} {
		resp, err := e.Search(ctx, search.Request{Query: q, K: 8})
		require.NoError(t, err)
		pool = append(pool, resp.Hits...)
	}
	goal := "Set up a sidebar with collapsible groups and deploy to GitHub Pages"
	cov, err := r.Evaluate(ctx, goal, "sidebar with collapsible groups", pool)
	require.NoError(t, err)
	require.True(t, cov.Covered, "%+v", cov)
	require.NotEmpty(t, cov.Evidence)
	assert.LessOrEqual(t, len(cov.Evidence), maxEvidence)
	byID := map[int64]doc.Hit{}
	for _, h := range pool {
		byID[h.Chunk.ID] = h
	}
	pages := map[string]bool{}
	for _, id := range cov.Evidence {
		h := byID[id]
		assert.False(t, pages[h.Source.URI], "two pieces of evidence from %s", h.Source.URI)
		pages[h.Source.URI] = true
	}
	assert.Equal(t, "en/reference/default-theme-sidebar.md", byID[cov.Evidence[0]].Source.URI, "the page devoted to it comes first")
	// The deploy search's hits are in the same pool: an aspect one step
	// searched for is judged on what another step found too.
	cov, err = r.Evaluate(ctx, goal, "GitHub Pages", pool)
	require.NoError(t, err)
	assert.True(t, cov.Covered)

	cov, err = r.Evaluate(ctx, goal, "sidebar groups of lattice gauge theory", pool)
	require.NoError(t, err)
	assert.False(t, cov.Covered)
	assert.LessOrEqual(t, len(cov.Leads), maxLeads)
}
