package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/app"
)

func newChatCmd(g *globals) *cobra.Command {
	var (
		f      askFlags
		thread string
		list   bool
	)
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk with the index: multi-turn questions and cited answers, saved as a thread",
		Long: `Chat asks questions one after another, each answered as ` + "`sagasu ask`" + ` does
but with the conversation so far. Every turn is saved as a thread in the
index, so a conversation can be resumed with --thread ID (see --list) here or
in the web page (sagasu serve). Type a question and press Enter; /new starts
a new thread, /quit (or end of input) leaves.`,
		Example: `  sagasu chat
  sagasu chat --list
  sagasu chat --thread chat-20261124-101500.123456`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			opt, err := f.options(g, a)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			rt, err := a.Open(ctx, app.OpenOptions{NoCache: true, LongLived: true})
			if err != nil {
				return err
			}
			defer rt.Close()
			threads := react.NewThreads(rt.Store)
			if list {
				runs, err := threads.List(ctx, 50)
				if err != nil {
					return err
				}
				if a.Config.JSON {
					return writeJSON(g.stdout, runs)
				}
				for _, r := range runs {
					fmt.Fprintf(g.stdout, "%s  %s  %s\n", r.ID, r.Updated.Local().Format("2006-01-02 15:04"), r.Title)
				}
				return nil
			}
			if thread != "" {
				if _, err := threads.Get(ctx, thread); err != nil {
					return usageError{err}
				}
			}
			interactive := isTerminal(g.stdout)
			if interactive {
				fmt.Fprintf(g.stderr, "sagasu chat (%s); /new for a new thread, /quit to leave\n", rt.Asker(opt).Mode())
			}
			in := bufio.NewScanner(g.stdin)
			in.Buffer(make([]byte, 64<<10), 1<<20)
			for {
				if interactive {
					fmt.Fprint(g.stdout, "> ")
				}
				if !in.Scan() {
					return in.Err()
				}
				q := strings.TrimSpace(in.Text())
				switch q {
				case "":
					continue
				case "/quit", "/exit":
					return nil
				case "/new":
					thread = ""
					fmt.Fprintln(g.stderr, "(a new thread starts with the next question)")
					continue
				}
				if thread == "" {
					if thread, err = threads.Start(ctx, q); err != nil {
						return err
					}
					fmt.Fprintf(g.stderr, "(thread %s)\n", thread)
				}
				res, err := threads.Turn(ctx, thread, rt.Asker(opt), q, react.TurnOptions{})
				f.live.end()
				if err != nil {
					if ctx.Err() != nil {
						return err
					}
					// One failed turn does not end the conversation.
					fmt.Fprintf(g.stderr, "sagasu: %v\n", err)
					continue
				}
				if a.Config.JSON {
					if err := writeJSON(g.stdout, res); err != nil {
						return err
					}
					continue
				}
				f.live.answer(g.stdout, res)
				fmt.Fprintln(g.stdout)
			}
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&thread, "thread", "", "resume this thread (an ID from --list)")
	cmd.Flags().BoolVar(&list, "list", false, "list the saved threads")
	return cmd
}
