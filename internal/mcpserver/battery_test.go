package mcpserver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// TestBudgetBattery calls every tool in every mode at its largest on an
// index built to overflow budgets — long sources, very long chunks,
// Japanese text, hundreds of sources with long titles — and measures each
// result as the client received it with the same tokenizer: none may exceed
// its budget, and each must report its own size. It runs under the default
// budgets and under a tight cap. With SAGASU_BATTERY_OUT set it writes the
// largest measured count per tool and mode there as JSON.
func TestBudgetBattery(t *testing.T) {
	tight, err := budget.WithCap(2500)
	if err != nil {
		t.Fatal(err)
	}
	report := map[string]map[string]int{}
	for _, tc := range []struct {
		name   string
		limits budget.Limits
	}{{"default", budget.DefaultLimits()}, {"cap2500", tight}} {
		t.Run(tc.name, func(t *testing.T) {
			report[tc.name] = battery(t, tc.limits)
		})
	}
	if out := os.Getenv("SAGASU_BATTERY_OUT"); out != "" {
		raw, _ := json.MarshalIndent(report, "", "  ")
		if err := os.WriteFile(out, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func battery(t *testing.T, limits budget.Limits) map[string]int {
	f := newFixture(t, Options{Limits: limits})
	// Very long chunks: whole 8,000-token sections.
	var long []doc.Document
	for i := range 6 {
		long = append(long, english(i, 12, 400), japanese(i, 8, 300))
	}
	f.add(8192, long...)
	// Hundreds of small sources with long titles, for sagasu_list.
	var many []doc.Document
	for i := range 260 {
		title := fmt.Sprintf("Sidebar note %d ", i) + strings.Repeat("with a very long title ", 60)
		many = append(many, doc.Document{URI: fmt.Sprintf("notes/n%03d.md", i), Type: doc.TypeFile, Format: doc.FormatMarkdown,
			Title: title, Content: fmt.Sprintf("# %s\n\nsidebar note %d\n", title, i)})
	}
	f.add(512, many...)
	// Files sagasu_index will skip (binary), with long names.
	bin := filepath.Join(f.dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		name := fmt.Sprintf("%03d-%s.dat", i, strings.Repeat("binary", 20))
		if err := os.WriteFile(filepath.Join(bin, name), []byte{0, 1, 2, 0, 3}, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	largest := map[string]int{}
	measure := func(label string, limit int, tool string, args map[string]any) map[string]any {
		t.Helper()
		sc, n := f.ok(tool, args)
		checkBudget(t, label, sc, n, limit)
		largest[label] = max(largest[label], n)
		return sc
	}
	goals := []struct{ goal, query string }{
		{"understand how to configure the sidebar navigation links and theme layout", "sidebar configuration navigation theme layout"},
		{"サイドバーの設定とナビゲーションのリンクを理解する", "サイドバー 設定 ナビゲーション リンク"},
	}
	var ids []any
	for _, g := range goals {
		for _, mode := range []string{ModeSummary, ModeDetailed, ModeFull} {
			sc := measure("sagasu_search/"+mode, limits.Mode(mode), ToolSearch, map[string]any{
				"goal": g.goal, "query": g.query, "options": map[string]any{"k": tools.MaxSearchK, "detail": mode, "includeDebug": true},
				"context": map[string]any{"previousQueries": []string{"sidebar"}}})
			if mode == ModeFull {
				for _, r := range list(sc, "results") {
					ids = append(ids, r.(map[string]any)["chunkId"])
				}
				if num(sc, "omittedResults") == 0 && limits.Cap < budget.DefaultCap {
					t.Errorf("full mode under a %d cap dropped nothing: the battery does not stress it", limits.Cap)
				}
			}
		}
		for _, extra := range []map[string]any{{}, {"wholeSource": true}, {"wholeSection": true}} {
			args := map[string]any{"query": g.query, "k": tools.MaxQueryK}
			for k, v := range extra {
				args[k] = v
			}
			measure("sagasu_query", limits.Cap, ToolQuery, args)
		}
		measure("sagasu_evaluate", limits.Cap, ToolEvaluate, map[string]any{"goal": g.goal, "query": g.query, "chunkIds": ids,
			"results": []map[string]any{{"content": strings.Repeat("サイドバーの設定 sidebar configuration ", 3000), "score": 1,
				"metadata": map[string]any{"uri": "x.md", "heading": "X"}}}})
		measure("sagasu_refine_query", limits.Cap, ToolRefine, map[string]any{"goal": g.goal, "currentQuery": g.query,
			"missingAspects": []string{"theme layout", "テーマ"}, "chunkIds": ids})
		stage := measure("sagasu_plan_execute_stage", limits.Cap, ToolExecuteStage, map[string]any{"goal": g.goal,
			"queryOptions": map[string]any{"k": 20}})
		measure("sagasu_plan_execute_stage", limits.Cap, ToolExecuteStage, map[string]any{"planId": stage["planId"], "stageIndex": 0,
			"queryOptions": map[string]any{"k": 20}})
		measure("sagasu_loop", limits.Cap, ToolLoop, map[string]any{"goal": g.goal, "query": g.query, "k": tools.MaxSearchK,
			"maxIterations": tools.MaxLoopIterations})
	}
	measure("sagasu_get", limits.Cap, ToolGet, map[string]any{"source": "docs/ja0.md"})
	measure("sagasu_get", limits.Cap, ToolGet, map[string]any{"source": "docs/guide0.md"})
	measure("sagasu_list", limits.Cap, ToolList, map[string]any{"limit": tools.MaxListLimit})
	measure("sagasu_read_cache", limits.Cap, ToolReadCache, map[string]any{"limit": 100, "includeData": true, "summary": true})
	measure("sagasu_index", limits.Cap, ToolIndex, map[string]any{"file": bin})

	// Every budgeted tool was measured.
	var labels []string
	for l := range largest {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	if len(labels) != 12 {
		t.Errorf("measured %d tool/mode pairs: %v", len(labels), labels)
	}
	for _, l := range labels {
		t.Logf("%-28s largest %6d tokens", l, largest[l])
	}
	return largest
}
