package mcpserver

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// properties lists a schema's property names, nested ones as "a.b", from
// its JSON form (so a listed tool and a derived schema compare alike).
func properties(t *testing.T, schema any) []string {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		out = append(out, name)
		for _, sub := range properties(t, s.Properties[name]) {
			out = append(out, name+"."+sub)
		}
	}
	return out
}

func derived[T any](t *testing.T) []string {
	t.Helper()
	s, err := jsonschema.For[T](nil)
	if err != nil {
		t.Fatal(err)
	}
	return properties(t, s)
}

// TestSchemasDerivedFromTools checks that every tool's input and output
// schemas are those of the tools package's structs: the MCP server writes
// none by hand, and fields a face sets itself (offsets) stay out of them.
// An output schema is listed only for the operations that keep it
// (tools.Op.Typed); the others' outputs are checked against it all the
// same (the tools package's TestRepliesMatchTheirSchemas).
func TestSchemasDerivedFromTools(t *testing.T) {
	f := newFixture(t, Options{})
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2][]string{
		ToolIndex:        {derived[tools.IndexInput](t), derived[tools.IndexOutput](t)},
		ToolDelete:       {derived[tools.DeleteInput](t), derived[tools.DeleteOutput](t)},
		ToolQuery:        {derived[tools.QueryInput](t), derived[tools.QueryOutput](t)},
		ToolSearch:       {derived[tools.SearchInput](t), derived[tools.SearchOutput](t)},
		ToolGet:          {derived[tools.GetInput](t), derived[tools.GetOutput](t)},
		ToolList:         {derived[tools.ListInput](t), derived[tools.ListOutput](t)},
		ToolEvaluate:     {derived[tools.EvaluateInput](t), derived[tools.EvaluateOutput](t)},
		ToolRefine:       {derived[tools.RefineInput](t), derived[tools.RefineOutput](t)},
		ToolExecuteStage: {derived[tools.StageInput](t), derived[tools.StageOutput](t)},
		ToolLoop:         {derived[tools.LoopInput](t), derived[tools.LoopOutput](t)},
		ToolReadCache:    {derived[tools.ReadCacheInput](t), derived[tools.ReadCacheOutput](t)},
		runs.NameList:    {derived[runs.ListInput](t), derived[RunsList](t)},
		runs.NameDelete:  {derived[runs.DeleteInput](t), derived[RunsDeleted](t)},
		runs.NamePrune:   {derived[runs.PruneInput](t), derived[RunsPruned](t)},
		runs.NameExport:  {derived[runs.ExportInput](t), derived[RunExport](t)},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools listed, want %d", len(res.Tools), len(want))
	}
	for _, tl := range res.Tools {
		w, ok := want[tl.Name]
		if !ok {
			t.Errorf("tool %s has no struct in the tools package", tl.Name)
			continue
		}
		if got := properties(t, tl.InputSchema); !slices.Equal(got, w[0]) {
			t.Errorf("%s input properties\n got %v\nwant %v", tl.Name, got, w[0])
		}
		op, _ := f.srv.Ops().Find(tl.Name)
		if got := properties(t, op.Output); !slices.Equal(got, w[1]) {
			t.Errorf("%s output properties\n got %v\nwant %v", tl.Name, got, w[1])
		}
		if tl.OutputSchema != nil && !slices.Equal(properties(t, tl.OutputSchema), w[1]) {
			t.Errorf("%s lists another output schema than its operation's", tl.Name)
		}
		for _, p := range properties(t, tl.InputSchema) {
			if p == "offset" || p == "maxK" || p == "unbounded" || p == "insideRoots" {
				t.Errorf("%s input schema shows %q, which only a face sets", tl.Name, p)
			}
		}
	}
}
