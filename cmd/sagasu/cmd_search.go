package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// searchOptions are `sagasu search`'s flags.
type searchOptions struct {
	goal   string
	k      int
	detail string
	json   bool
}

func newSearchCmd(g *globals) *cobra.Command {
	var opts searchOptions
	cmd := &cobra.Command{
		Use:   "search TEXT",
		Short: "Search toward a goal: the results, how well they cover it, and what to do next",
		Long: `Search is sagasu_search on the command line (and the page's Search tab): it
ranks chunks for the words given, judges them against --goal (default: the
words themselves), and says how well they cover it and the one next step:
read a section, or search again with a better query.

--detail summary (default) lists the results without their text, detailed
adds snippets, full whole chunks. --json prints what sagasu_search answers
over MCP and the page's API. For plain ranked chunks, use sagasu query.`,
		Example: `  sagasu search cors
  sagasu search --goal "configure the sidebar and the nav bar" "sidebar config"
  sagasu search --detail detailed --json "dynamic routes"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			opts.json = a.Config.JSON
			ctx := cmd.Context()
			rt, err := a.Open(ctx, app.OpenOptions{NoCache: true})
			if err != nil {
				return err
			}
			defer rt.Close()
			return runSearch(ctx, g, rt, opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.goal, "goal", "", "what the search should find out (default: the words searched for)")
	f.IntVarP(&opts.k, "k", "k", 5, "results (1 to 10)")
	f.StringVar(&opts.detail, "detail", "", "summary (default), detailed or full")
	addEmbedderFlags(f)
	return cmd
}

// runSearch runs sagasu_search for the words of args and prints its answer.
func runSearch(ctx context.Context, g *globals, rt *app.Runtime, opts searchOptions, args []string) error {
	in := tools.SearchInput{Query: strings.Join(args, " "), Goal: opts.goal, Options: &tools.SearchOptions{Detail: opts.detail}}
	if strings.TrimSpace(in.Query) == "" {
		return usagef("empty search: give the words to search for")
	}
	set := map[string]any{"k": opts.k}
	if opts.detail != "" {
		set["detail"] = opts.detail
	}
	reply, err := callOp(ctx, rt, tools.NameSearch, in, map[string]any{"options": set})
	if err != nil {
		return err
	}
	if opts.json {
		return g.writeReply(reply)
	}
	out := reply.Out.(tools.SearchOutput)
	out.NextCursor = "" // a cursor lives as long as the process that made it
	fmt.Fprint(g.stdout, tools.SearchTextWith(out, nextForPeople))
	return nil
}

// nextForPeople says a next step in plain words, with the command that
// takes it rather than the tool.
func nextForPeople(a tools.Action) string {
	if a.Action == "" {
		return ""
	}
	line := "next: " + strings.ReplaceAll(a.Action, "_", " ")
	if a.Reason != "" {
		line += " — " + a.Reason
	}
	str := func(k string) string { s, _ := a.Arguments[k].(string); return s }
	switch a.Tool {
	case tools.NameGet:
		line += fmt.Sprintf("\n  read it: sagasu get %s", shellQuote(str("source")))
		if sec := str("section"); sec != "" {
			line += " --section " + shellQuote(sec)
		}
	case tools.NameSearch:
		line += fmt.Sprintf("\n  try: sagasu search --goal %s %s", shellQuote(str("goal")), shellQuote(str("query")))
	case tools.NameIndex:
		line += "\n  index more: sagasu index PATH"
	}
	return line + "\n"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
