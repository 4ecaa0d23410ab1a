package tools

import (
	"fmt"
	"reflect"
	"slices"

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
			Description: "Add text, files, folders or globs (docs/**/*.md) inside the server's allowed roots to the index; unchanged sources are skipped. Sends progress; cancelling keeps what was written."},
			func(in *jsonschema.Schema) {
				Between(Prop(in, "chunkSize"), 16, 8192)
				Between(Prop(in, "chunkOverlap"), 0, 4095)
			}),
		Define[DeleteInput](Def{Name: NameDelete, Title: "Delete sources", Destructive: true, Idempotent: true,
			Description: "Remove sources and their chunks from the index, by ID, URI, a unique end of the URI, or a glob. dryRun lists what would go."},
			func(in *jsonschema.Schema) {
				Prop(in, "sources").Items.MinLength = new(1)
			}),
		Define[QueryInput](Def{Name: NameQuery, Title: "Search the index", ReadOnly: true,
			Description: "Ranked chunks with their whole text, source and lines, without judging them. Filters by type, glob and source."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "query"))
				Between(Prop(in, "k"), 1, MaxQueryK)
				Between(Prop(in, "mmr"), 0, 1)
				OneOf(Prop(in, "mode"), retrievalModes...)
				OneOf(Prop(in, "types").Items, sourceTypes...)
			}),
		Define[SearchInput](Def{Name: NameSearch, Title: "Search toward a goal", ReadOnly: true,
			Description: "Start here. Searches, judges the results against your goal and gives one next step (a tool call). " +
				"detail: summary (default, under 5K tokens, no text), detailed (snippets, 15K) or full (whole chunks, 25K)."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "query"))
				Between(Prop(in, "options", "k"), 1, MaxSearchK)
				OneOf(Prop(in, "options", "detail"), ModeSummary, ModeDetailed, ModeFull)
				OneOf(Prop(in, "options", "mode"), retrievalModes...)
			}),
		Define[GetInput](Def{Name: NameGet, Title: "Read a source", ReadOnly: true,
			Description: "Read a source's original content, whole or one section, in pages of maxTokens (default 4,000): follow nextCursor until complete."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "source"))
				Between(Prop(in, "maxTokens"), 500, float64(opt.Cap))
			}),
		Define[ListInput](Def{Name: NameList, Title: "List sources", ReadOnly: true,
			Description: "List the indexed sources (ID, URI, title, chunks) by URI, filtered by type and glob."},
			func(in *jsonschema.Schema) {
				Between(Prop(in, "limit"), 1, MaxListLimit)
				OneOf(Prop(in, "type"), sourceTypes...)
			}),
		Define[EvaluateInput](Def{Name: NameEvaluate, Title: "Evaluate results",
			Description: "Judge results (as a search returned them, or their chunkIds) against a goal: aspects found and missing, confidence, and one next step."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "goal"))
				Between(Prop(in, "iteration"), 0, 100)
				Between(Prop(in, "minConfidence"), 0, 1)
				// A result is taken as a search returned it: the schema
				// names what is read of it and lets the rest through.
				Open(Prop(in, "results").Items, "chunkId", "text", "content", "heading", "uri", "score", "metadata")
			}),
		Define[RefineInput](Def{Name: NameRefine, Title: "Refine a query",
			Description: "Propose a better query for a goal from what is missing, built from the index's own words: the refined query, why, and alternatives."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "goal"))
				NotEmpty(Prop(in, "currentQuery"))
				OneOf(Prop(in, "strategy"), loop.Strategies()...)
			}),
		Define[StageInput](Def{Name: NameExecuteStage, Title: "Run a plan stage",
			Description: "For a goal with several parts: pass goal to have a plan made (one stage per aspect) and its first stage run; then planId and stageIndex for the next stages."},
			func(in *jsonschema.Schema) {
				Between(Prop(in, "stageIndex"), 0, 100)
				Between(Prop(in, "queryOptions", "k"), 1, 20)
				OneOf(Prop(in, "queryOptions", "mode"), retrievalModes...)
			}),
		Define[LoopInput](Def{Name: NameLoop, Title: "Search in a loop toward a goal",
			Description: "The whole loop in one call: search, judge, refine and search again (never a chunk twice) until the results are enough or maxIterations searches ran; returns each search in brief and the merged results."},
			func(in *jsonschema.Schema) {
				NotEmpty(Prop(in, "goal"))
				Between(Prop(in, "k"), 1, MaxSearchK)
				Between(Prop(in, "maxIterations"), 1, MaxLoopIterations)
				Between(Prop(in, "minConfidence"), 0, 1)
				OneOf(Prop(in, "mode"), retrievalModes...)
			}),
		Define[ReadCacheInput](Def{Name: NameReadCache, Title: "Read the agent cache", ReadOnly: true,
			Description: "Read recorded evaluations, refinements, plan stages and sessions (newest first), one record by id, or the Markdown summary."},
			func(in *jsonschema.Schema) {
				OneOf(Prop(in, "kind"), "evaluations", "refinements", "stages", "sessions")
				Between(Prop(in, "limit"), 1, 100)
			}),
	}
}

// retrievalModes are what "mode" means on every operation.
var retrievalModes = []string{string(search.ModeKeyword), string(search.ModeSemantic), string(search.ModeHybrid)}

// sourceTypes are the types of source a filter names.
var sourceTypes = []string{string(doc.TypeFile), string(doc.TypeText), string(doc.TypeURL), string(doc.TypeGitHub), string(doc.TypeGist)}

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

// Open keeps only the named properties in an object's schema and lets any
// other property through (unchecked, and ignored when decoded if the Go
// type has no field for it).
func Open(s *jsonschema.Schema, keep ...string) {
	for k := range s.Properties {
		if !slices.Contains(keep, k) {
			delete(s.Properties, k)
		}
	}
	s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(k string) bool { return !slices.Contains(keep, k) })
	s.AdditionalProperties = &jsonschema.Schema{}
}

// NotEmpty requires a string property to have text.
func NotEmpty(s *jsonschema.Schema) {
	one := 1
	s.MinLength = &one
}
