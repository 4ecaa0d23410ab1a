package tools

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
)

// Def is one operation of the toolset as every face offers it: its name,
// what it does, and its input schema, derived once from the input struct's
// json and jsonschema tags (with the ranges and enums a Go type cannot
// say). The MCP server lists exactly this schema, the agents hand it to
// their models (Functions), and `sagasu tools` prints it.
type Def struct {
	Name        string
	Title       string
	Description string
	Input       *jsonschema.Schema
	// ReadOnly operations change nothing; Destructive ones remove what
	// they name. Idempotent: calling again with the same input changes
	// nothing more.
	ReadOnly, Destructive, Idempotent bool

	in reflect.Type
}

// InputType is the Go type the input schema was derived from.
func (d Def) InputType() reflect.Type { return d.in }

// DefOptions are what some schemas depend on.
type DefOptions struct {
	// Cap is the most tokens a response may take: sagasu_get's maxTokens
	// ranges up to it (default budget.DefaultCap).
	Cap int
}

// Define derives a Def's input schema from In and adjusts it with tweak.
func Define[In any](d Def, tweak func(in *jsonschema.Schema)) Def {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", d.Name, err)) // a programming error, found by any test
	}
	if tweak != nil {
		tweak(in)
	}
	d.Input, d.in = in, reflect.TypeFor[In]()
	return d
}

// Defs returns the definition of every operation, in the order faces list
// them.
func Defs(opt DefOptions) []Def {
	if opt.Cap <= 0 {
		opt.Cap = budget.DefaultCap
	}
	return []Def{
		Define[IndexInput](Def{Name: NameIndex, Title: "Index documents", Idempotent: true,
			Description: "Add text, a file, or files, folders and globs (docs/**/*.md) to the index. Incremental: unchanged sources are skipped. " +
				"Paths must lie inside the server's allowed roots (--root; default its working directory). Sends progress notifications; " +
				"cancelling keeps what was written, and calling again finishes the job."},
			func(in *jsonschema.Schema) {
				Between(Prop(in, "chunkSize"), 16, 8192)
				Between(Prop(in, "chunkOverlap"), 0, 4095)
			}),
		Define[DeleteInput](Def{Name: NameDelete, Title: "Delete sources", Destructive: true, Idempotent: true,
			Description: "Remove sources, with their chunks, from the index: by ID, URI or a unique end of the URI (sources), or every source whose URI matches a glob. " +
				"Local files must lie inside the server's allowed roots. dryRun: true lists what would be removed and removes nothing. " +
				"Refused while an index run writes to the index: call again after it."},
			func(in *jsonschema.Schema) {
				Prop(in, "sources").Items.MinLength = new(1)
			}),
		Define[QueryInput](Def{Name: NameQuery, Title: "Search the index", ReadOnly: true,
			Description: "Search the index and return ranked chunks with their whole text, source and line span. wholeSource or section add the original content around each hit. " +
				"Pages with nextCursor. Use sagasu_search instead to have results judged against a goal."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "query"))
				Between(Prop(in, "k"), 1, MaxQueryK)
				OneOf(Prop(in, "mode"), string(search.ModeKeyword), string(search.ModeSemantic), string(search.ModeHybrid))
			}),
		Define[SearchInput](Def{Name: NameSearch, Title: "Search toward a goal", ReadOnly: true,
			Description: "Goal-aware search for agents: searches, judges the results against your goal and says what to do next. " +
				"Modes: summary (default, <5K tokens: counts, scores, topics, coverage of the goal, the primary next action), " +
				"detailed (<15K: top results with snippets and the analysis), full (whole chunks, up to the 25K cap). " +
				"Start with summary; use detailed when you need the text. k is at most 10; page with nextCursor."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "goal"))
				NotEmpty(Prop(in, "query"))
				Between(Prop(in, "options", "k"), 1, MaxSearchK)
				OneOf(Prop(in, "options", "mode"), ModeSummary, ModeDetailed, ModeFull)
			}),
		Define[GetInput](Def{Name: NameGet, Title: "Read a source", ReadOnly: true,
			Description: "Read a source's original content, whole or one section, as it was indexed. Large content comes in pages: follow nextCursor until complete is true."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "source"))
				Between(Prop(in, "maxTokens"), 500, float64(opt.Cap))
			}),
		Define[ListInput](Def{Name: NameList, Title: "List sources", ReadOnly: true,
			Description: "List the indexed sources (ID, URI, title, type, chunks), ordered by URI, with filters by type and glob. Pages with nextCursor."},
			func(in *jsonschema.Schema) {
				Between(Prop(in, "limit"), 1, MaxListLimit)
				OneOf(Prop(in, "type"), string(doc.TypeFile), string(doc.TypeText), string(doc.TypeURL), string(doc.TypeGitHub), string(doc.TypeGist))
			}),
		Define[EvaluateInput](Def{Name: NameEvaluate, Title: "Evaluate results",
			Description: "Judge search results against a goal: which aspects they cover (foundAspects, missingAspects), confidence and coverage, and whether to go on (shouldContinue, recommendations). " +
				"Pass results as sagasu_query or sagasu_search returned them (or {content, score, metadata}), or the chunkIds of a search; an agent that passes neither judges the passages its run has found. " +
				"Recorded in the agent cache."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "goal"))
				Between(Prop(in, "iteration"), 0, 100)
				Between(Prop(in, "minConfidence"), 0, 1)
			}),
		Define[RefineInput](Def{Name: NameRefine, Title: "Refine a query",
			Description: "Propose a better query for a goal from what is missing: strategies broaden, narrow, pivot, combine. Returns refinedQuery, reasoning and alternatives, built from the index's own words and headings. Recorded in the agent cache."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "goal"))
				OneOf(Prop(in, "strategy"), loop.Strategies()...)
			}),
		Define[StageInput](Def{Name: NameExecuteStage, Title: "Run a plan stage",
			Description: "Run one stage of a search plan and judge its results against the stage's expected keywords. Pass planId, stageIndex and plan; or only goal to have a plan made (returned in plan) and its first stage run; or planId alone to reuse a plan from the agent cache. agentGuidance says what to do next."},
			func(in *jsonschema.Schema) {
				Between(Prop(in, "stageIndex"), 0, 100)
				Between(Prop(in, "queryOptions", "k"), 1, 20)
			}),
		Define[LoopInput](Def{Name: NameLoop, Title: "Search in a loop toward a goal",
			Description: "The whole agent-in-the-loop cycle in one call: search, judge the merged results against the goal's aspects, refine the query toward what is missing, search again (never returning a chunk twice), " +
				"until the results are enough or maxIterations (default 5, at most 10) searches have run. Returns each iteration in brief and the top k merged results, fitted to the 25K cap. " +
				"The loop is recorded as one session in the agent cache (sessionId, sessionRecord), updated after every iteration."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "goal"))
				Between(Prop(in, "k"), 1, MaxSearchK)
				Between(Prop(in, "maxIterations"), 1, MaxLoopIterations)
				Between(Prop(in, "minConfidence"), 0, 1)
			}),
		Define[ReadCacheInput](Def{Name: NameReadCache, Title: "Read the agent cache", ReadOnly: true,
			Description: "Read the agent cache: recorded evaluations, refinements, plan stages and sessions (newest first), one record by id, or the Markdown summary agent-cache.md."},
			func(in *jsonschema.Schema) {
				OneOf(Prop(in, "kind"), "evaluations", "refinements", "stages", "sessions")
				Between(Prop(in, "limit"), 1, 100)
			}),
	}
}

// DefOf returns the definition of the operation called name.
func DefOf(name string, opt DefOptions) (Def, bool) {
	for _, d := range Defs(opt) {
		if d.Name == name {
			return d, true
		}
	}
	return Def{}, false
}

// Prop returns the schema of a (nested) property.
func Prop(s *jsonschema.Schema, path ...string) *jsonschema.Schema {
	for _, p := range path {
		next, ok := s.Properties[p]
		if !ok {
			panic(fmt.Sprintf("schema has no property %q", p))
		}
		s = next
	}
	return s
}

// Between sets a number property's range.
func Between(s *jsonschema.Schema, lo, hi float64) {
	s.Minimum, s.Maximum = &lo, &hi
}

// OneOf restricts a string property to values.
func OneOf(s *jsonschema.Schema, values ...string) {
	s.Enum = nil
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
}

// NotEmpty requires a string property to have text.
func NotEmpty(s *jsonschema.Schema) {
	one := 1
	s.MinLength = &one
}
