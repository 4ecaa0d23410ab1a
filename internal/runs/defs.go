package runs

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Names of the lifecycle tools.
const (
	NameList   = "sagasu_runs_list"
	NameDelete = "sagasu_runs_delete"
	NamePrune  = "sagasu_runs_prune"
	NameExport = "sagasu_runs_export"
)

// Defs are the lifecycle operations as the MCP server offers them, their
// schemas derived from the same input structs the CLI and the web page
// fill.
func Defs() []tools.Def {
	kind := func(in *jsonschema.Schema) { tools.OneOf(tools.Prop(in, "kind"), store.RunAgent, store.RunChat) }
	return []tools.Def{
		tools.Define[ListInput](tools.Def{Name: NameList, Title: "List agent runs and chat threads", ReadOnly: true, Idempotent: true,
			Description: "List agent runs and chat threads (ID, kind, title, status, times), the most recently updated first."},
			func(in *jsonschema.Schema) {
				kind(in)
				tools.Between(tools.Prop(in, "limit"), 1, 1000)
			}),
		tools.Define[DeleteInput](tools.Def{Name: NameDelete, Title: "Delete agent runs or chat threads", Destructive: true, Idempotent: true,
			Description: "Delete agent runs or chat threads with their whole logs. Every ID is checked first: an unknown one, or a run still running (unless force), deletes none. " +
				"A run this server drives now is never deleted: stop it first."},
			func(in *jsonschema.Schema) {
				kind(in)
				p := tools.Prop(in, "ids")
				p.MinItems = new(1)
				p.Items.MinLength = new(1)
			}),
		tools.Define[PruneInput](tools.Def{Name: NamePrune, Title: "Prune old agent runs and chat threads", Destructive: true,
			Description: "Delete the runs and threads a retention rule selects: not updated for longer than olderThan (30d, 12h), or beyond the newest keep of each kind; " +
				"without either, the configured runs.keep_days and runs.keep. Running runs are kept. dryRun: true lists what would go and deletes nothing."},
			func(in *jsonschema.Schema) {
				kind(in)
				tools.Between(tools.Prop(in, "keep"), 1, 1e6)
			}),
		tools.Define[ExportInput](tools.Def{Name: NameExport, Title: "Export an agent run or chat thread", ReadOnly: true, Idempotent: true,
			Description: "Export one agent run or chat thread: json is its header, recorded settings and every event; md is a readable transcript " +
				"(a thread's questions and cited answers; a run's plan, steps, answer, sources and outcome). No secret is exported."},
			func(in *jsonschema.Schema) {
				kind(in)
				tools.NotEmpty(tools.Prop(in, "id"))
				tools.OneOf(tools.Prop(in, "format"), FormatJSON, FormatMarkdown)
			}),
	}
}
