package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/mcpserver"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// toolView is one operation as `sagasu tools` lists it.
type toolView struct {
	Name        string          `json:"name"`
	Group       string          `json:"group" jsonschema:"the group sagasu mcp --tools offers it in"`
	Default     bool            `json:"default" jsonschema:"sagasu mcp offers it by default"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	ReadOnly    bool            `json:"readOnly"`
	Destructive bool            `json:"destructive"`
	Idempotent  bool            `json:"idempotent"`
	Agents      bool            `json:"agents"` // the agents offer it to their models
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is what its answers are (sagasu X --json, MCP's
	// structuredContent, the page's API).
	OutputSchema json.RawMessage `json:"outputSchema"`
	args         []string        // its arguments in order, required ones marked *
}

func newToolsCmd(g *globals) *cobra.Command {
	var agents bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List sagasu's operations with their input schemas (as MCP clients and the agents' models see them)",
		Long: `Tools lists every operation of sagasu's registry: its name, its group, what it
does and the JSON Schemas of its input and output. The MCP server (sagasu mcp)
lists exactly these input schemas for the groups it offers (--tools; by
default search and loop), and the agents (ask, chat, agent run) offer their
models sagasu_query, sagasu_get and sagasu_evaluate with the same schemas,
checked by the same argument check. --agents lists only those.`,
		Example: `  sagasu tools
  sagasu tools --agents --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			var out []toolView
			for _, d := range mcpserver.Registry(nil, mcpserver.RegistryOptions{}) {
				offered := slices.Contains(tools.AgentFunctions, d.Name)
				if agents && !offered {
					continue
				}
				raw, err := json.Marshal(d.Input)
				if err != nil {
					return err
				}
				outRaw, err := json.Marshal(d.Output)
				if err != nil {
					return err
				}
				v := toolView{Name: d.Name, Group: d.Group, Default: slices.Contains(tools.DefaultGroups, d.Group), Title: d.Title,
					Description: d.Description, ReadOnly: d.ReadOnly, Destructive: d.Destructive, Idempotent: d.Idempotent,
					Agents: offered, InputSchema: raw, OutputSchema: outRaw}
				for _, k := range d.Input.PropertyOrder {
					if slices.Contains(d.Input.Required, k) {
						k += "*"
					}
					v.args = append(v.args, k)
				}
				out = append(out, v)
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, out)
			}
			for _, t := range out {
				effect := "writes"
				switch {
				case t.ReadOnly:
					effect = "reads"
				case t.Destructive:
					effect = "removes"
				}
				who := t.Group
				if t.Default {
					who += "*"
				}
				if t.Agents {
					who += ", agents"
				}
				fmt.Fprintf(g.stdout, "%-26s %-7s %-14s %s\n", t.Name, effect, who, snippet(t.Description, 100))
				fmt.Fprintf(g.stdout, "%-26s (%s)\n", "", strings.Join(t.args, ", "))
			}
			fmt.Fprintf(g.stdout, "\n* offered by sagasu mcp by default; --tools GROUP,... (or all) offers the others\n")
			return nil
		},
	}
	cmd.Flags().BoolVar(&agents, "agents", false, "list only the operations the agents offer their models")
	return cmd
}
