package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// MaxDefaultListTokens is what the default tools may cost a client before
// its first call: tools/list as it is sent, counted with o200k_base.
const MaxDefaultListTokens = 5000

// TestDefaultSurfaceIsLean holds the cost of the default tools: every
// client pays tools/list in context on every turn.
func TestDefaultSurfaceIsLean(t *testing.T) {
	counter, err := budget.New(budget.Options{Encoding: budget.O200k})
	if err != nil {
		t.Fatal(err)
	}
	cost := func(groups []string) (int, []string) {
		f := newFixture(t, Options{Groups: groups})
		res, err := f.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		var names []string
		for _, tl := range res.Tools {
			one, _ := json.Marshal(tl)
			t.Logf("%v %s: %d tokens", groups, tl.Name, counter.Count(string(one)))
			names = append(names, tl.Name)
		}
		return counter.Count(string(raw)), names
	}
	n, names := cost(tools.DefaultGroups)
	t.Logf("default tools/list: %d tools, %d tokens", len(names), n)
	if n > MaxDefaultListTokens {
		t.Errorf("the default tools cost %d tokens in tools/list, over %d", n, MaxDefaultListTokens)
	}
	for _, want := range []string{ToolSearch, ToolGet, ToolEvaluate, ToolRefine} {
		if !slices.Contains(names, want) {
			t.Errorf("the default tools lack %s: %v", want, names)
		}
	}
	all, allNames := cost(tools.Groups)
	if all <= n || len(allNames) <= len(names) || !slices.Contains(allNames, ToolIndex) {
		t.Errorf("--tools all lists %d tools (%d tokens), the default %d (%d)", len(allNames), all, len(names), n)
	}
}
