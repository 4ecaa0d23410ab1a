package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
)

func newDoctorCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the index, the embedder, the language model and the MCP servers",
		Long: `Doctor checks what sagasu is configured to use: the index (opens it and counts
what it holds), the embedder (embeds a probe), the language model (one chat
and one forced call of the agents' own functions, which the agents need) and
each MCP server in mcp_servers: (lists its tools). It prints what is wrong and
what to do, and exits non-zero when something configured does not work. Parts
that are not configured are reported, not failed. With --json stdout is the
report alone, also when a check fails.`,
		Example: `  sagasu doctor
  sagasu doctor --embedder local --embedder-model multilingual-e5-small --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if timeout <= 0 {
				return usagef("--timeout %s: give a positive duration such as 30s", timeout)
			}
			r := a.Doctor(cmd.Context(), timeout)
			if a.Config.JSON {
				if err := writeJSON(g.stdout, r); err != nil {
					return err
				}
			} else {
				printDoctor(g.stdout, r)
			}
			if r.Failed() {
				return reportedError{errors.New("something configured does not work (see above)")}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "how long each check may take")
	addEmbedderFlags(cmd.Flags())
	addLLMFlags(cmd.Flags())
	return cmd
}

func printDoctor(w io.Writer, r app.DoctorReport) {
	mark := func(ok bool) string {
		if ok {
			return "ok  "
		}
		return "FAIL"
	}
	c := r.Config
	files := "defaults only"
	switch {
	case c.ProjectFile != "" && c.UserFile != "":
		files = c.UserFile + ", " + c.ProjectFile
	case c.ProjectFile != "":
		files = c.ProjectFile
	case c.UserFile != "":
		files = c.UserFile
	}
	state := ""
	switch {
	case c.ProjectFile != "" && c.Trusted:
		state = " (trusted)"
	case len(c.Ignored) > 0:
		state = fmt.Sprintf(" (not trusted: %d settings ignored)", len(c.Ignored))
	case c.ProjectFile != "":
		state = " (not trusted; nothing in it needs trust)"
	}
	cmark := "ok  "
	if len(c.Exposed) > 0 || len(c.Ignored) > 0 {
		cmark = "warn"
	}
	fmt.Fprintf(w, "%s config    %s%s; agent cache %s\n", cmark, files, state, c.CacheDir)
	for _, s := range c.Ignored {
		fmt.Fprintf(w, "     ignored: %s: %s (%s)\n", s.Key, s.Value, s.Why)
	}
	problem(w, "", c.Fix)
	fmt.Fprintf(w, "%s index     %s: %d sources, %d chunks, %d vectors\n", mark(r.Index.OK), r.Index.Location, r.Index.Sources, r.Index.Chunks, r.Index.Vectors)
	problem(w, r.Index.Error, r.Index.Fix)
	model := func(name string, m app.DoctorModel) {
		if !m.Configured {
			fmt.Fprintf(w, "--   %-9s not configured\n", name)
			problem(w, "", m.Fix)
			return
		}
		fmt.Fprintf(w, "%s %-9s %s %s", mark(m.OK), name, m.Driver, m.Model)
		if m.Dim > 0 {
			fmt.Fprintf(w, ", %d dimensions", m.Dim)
		}
		if m.ToolCall != nil {
			fmt.Fprintf(w, ", tool call %s", map[bool]string{true: "ok", false: "failed"}[*m.ToolCall])
		}
		if m.LatencyMs > 0 {
			fmt.Fprintf(w, " (%d ms)", m.LatencyMs)
		}
		fmt.Fprintln(w)
		problem(w, m.Error, m.Fix)
	}
	model("embedder", r.Embedder)
	model("llm", r.LLM)
	if len(r.MCPServers) == 0 {
		fmt.Fprintln(w, "--   mcp       no servers configured (mcp_servers: in sagasu.yaml)")
	}
	for _, s := range r.MCPServers {
		fmt.Fprintf(w, "%s mcp       %s: %d tools (%d ms)\n", mark(s.OK), s.Name, s.Tools, s.LatencyMs)
		problem(w, s.Error, s.Fix)
	}
}

func problem(w io.Writer, err, fix string) {
	if err != "" {
		fmt.Fprintf(w, "     error: %s\n", err)
	}
	if fix != "" && err != "" {
		fmt.Fprintf(w, "     fix:   %s\n", fix)
	} else if fix != "" {
		fmt.Fprintf(w, "     note:  %s\n", fix)
	}
}
