package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestEveryFaceSearchesHybridWhenAnEmbedderIsPinned: over an index with an
// embedder pinned, every face's searches — query (CLI query, MCP
// sagasu_query), sagasu_search, the loop (CLI loop), a plan stage (CLI plan,
// MCP sagasu_plan_execute_stage), the offline answerer (CLI ask and chat, the
// page's chat, MCP sagasu_ask) and Plan-and-Act's research brain (CLI agent
// --offline, the page's agent runs) — embed their query, that is, search
// hybrid, when no mode is asked for. The page's own search box is
// web.TestPageSearchesHybridWhenAnEmbedderIsPinned. A face asked for keyword
// search does not embed its query (the control that shows the observation
// can fail).
func TestEveryFaceSearchesHybridWhenAnEmbedderIsPinned(t *testing.T) {
	ctx := context.Background()
	srv := newE5Server(t)
	cfg := Defaults()
	dir := t.TempDir()
	cfg.DB = filepath.Join(dir, "index.db")
	cfg.CacheDir = filepath.Join(dir, "cache")
	cfg.LLM.Driver = ""
	cfg.Embedder = EmbedderConfig{Driver: "openai", URL: srv.URL, Model: "multilingual-e5-small"}
	a := &App{Config: cfg, Log: nopLogger(), Getenv: embedtest.Env(nil)}
	rt, err := a.Open(ctx, OpenOptions{Create: true, PinEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for title, body := range map[string]string{
		"Sitemap": "# Sitemap\n\nVitePress can generate a sitemap.xml file for search engines. Set sitemap.hostname in the config.\n",
		"Deploy":  "# Deploy\n\nBuild the site with vitepress build and upload the dist folder to your host.\n",
		"Theme":   "# Theme\n\nThe default theme has a dark mode switch. Set appearance to false to turn it off.\n",
	} {
		if _, err := rt.Tools.Index(ctx, tools.IndexInput{Text: body, Title: title}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if rt.Engine.DefaultMode() != search.ModeHybrid {
		t.Fatalf("the engine's default is %q with an embedder pinned", rt.Engine.DefaultMode())
	}
	const goal = "publish a sitemap for search engines"
	faces := []struct {
		name string
		// run searches through the face, in keyword mode when keyword is
		// set (faces that take no mode leave it out), and returns the
		// queries it searched with (or checks the mode itself).
		run     func(t *testing.T, keyword bool) []string
		keyword bool // the face takes a mode (so the control runs)
	}{
		{"query", func(t *testing.T, kw bool) []string {
			in := tools.QueryInput{Query: "sitemap xml file"}
			if kw {
				in.Mode = string(search.ModeKeyword)
			}
			if _, err := rt.Tools.Query(ctx, in); err != nil {
				t.Fatal(err)
			}
			return []string{in.Query}
		}, true},
		{"sagasu_search", func(t *testing.T, kw bool) []string {
			in := tools.SearchInput{Goal: goal, Query: "sitemap hostname setting"}
			if kw {
				in.Options = &tools.SearchOptions{Mode: string(search.ModeKeyword)}
			}
			if _, err := rt.Tools.Search(ctx, in); err != nil {
				t.Fatal(err)
			}
			return []string{in.Query}
		}, true},
		{"loop", func(t *testing.T, kw bool) []string {
			opt := loop.RunOptions{Goal: goal, Query: "sitemap file generation", K: 3}
			if kw {
				opt.Mode = search.ModeKeyword
			}
			if _, err := rt.Tools.Loop().Run(ctx, opt); err != nil {
				t.Fatal(err)
			}
			return []string{opt.Query}
		}, true},
		{"plan stage", func(t *testing.T, kw bool) []string {
			var mode search.Mode
			if kw {
				mode = search.ModeKeyword
			}
			p, err := rt.Tools.Loop().Plan(ctx, "deploy the site to a host", loop.PlanOptions{Mode: mode})
			if err != nil || len(p.Stages) == 0 {
				t.Fatalf("plan: %+v, %v", p, err)
			}
			if _, err := rt.Tools.RunStage(ctx, p, 0, loop.QueryOptions{K: 3, Mode: mode}); err != nil {
				t.Fatal(err)
			}
			return []string{p.Stages[0].Query}
		}, true},
		{"ask offline", func(t *testing.T, _ bool) []string {
			res, err := rt.Asker(AskOptions{Offline: true}).Answer(ctx, "how do I turn off dark mode?")
			if err != nil {
				t.Fatal(err)
			}
			// The answerer embeds the question to rank sentences by meaning
			// whatever the mode, so its trace says how it searched.
			var modes []string
			for _, ev := range res.Trace {
				var args struct{ Mode string }
				if ev.Tool == react.ToolSearch && len(ev.Arguments) > 0 && json.Unmarshal(ev.Arguments, &args) == nil {
					modes = append(modes, args.Mode)
				}
			}
			if len(modes) == 0 || slices.ContainsFunc(modes, func(m string) bool { return m != string(search.ModeHybrid) }) {
				t.Errorf("ask offline searched in modes %q, want hybrid", modes)
			}
			return nil
		}, false},
		{"agent research", func(t *testing.T, _ bool) []string {
			run, err := rt.NewPlanActRun(ctx, PlanActOptions{Offline: true, Goal: goal})
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			res, err := run.Start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var qs []string
			for _, st := range res.Plan {
				qs = append(qs, st.Tried...)
			}
			if len(qs) == 0 {
				t.Fatal("the research brain searched nothing")
			}
			return qs
		}, false},
	}
	for _, f := range faces {
		for _, kw := range []bool{false, true} {
			if kw && !f.keyword {
				continue
			}
			before := len(srv.seen())
			qs := f.run(t, kw)
			seen := srv.seen()[before:]
			for _, q := range qs {
				embedded := slices.Contains(seen, "query: "+q)
				if !kw && !embedded {
					t.Errorf("%s: the query %q was not embedded (searched by keywords only); the model saw %q", f.name, q, seen)
				}
				if kw && embedded {
					t.Errorf("%s asked for keyword search: the query %q was embedded", f.name, q)
				}
			}
		}
	}
}
