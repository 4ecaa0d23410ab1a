package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
)

func newTrustCmd(g *globals) *cobra.Command {
	var list, revoke bool
	var index string
	cmd := &cobra.Command{
		Use:   "trust [FILE] | --index DB",
		Short: "Let a project's sagasu.yaml start programs, send keys elsewhere or lower guards",
		Long: `A sagasu.yaml that sagasu finds in the working directory came with the project,
perhaps with a repository you cloned, so until you trust it sagasu ignores the
settings in it that could act for you: mcp_servers (starts programs), embedder.url
and llm.url (send your API keys, documents and questions to that address), a
db that names a server, index.allow_private (lets fetched URLs reach this machine
and private networks), cache_dir and runs.keep_days/runs.keep (what a prune
deletes). Everything else in it applies, and each run
says what was ignored.

Read the file, then run sagasu trust in the project's folder (or name the file).
Trust is recorded by the file's SHA-256 in your own config folder
(~/.config/sagasu/trusted.json): any change to the file asks again. A file you
name with --config, and your user-level config (~/.config/sagasu/config.yaml),
are your own choice and need no trust.

API keys follow the same rule: a key goes to its vendor's own host, or to an
address you named (a flag, a SAGASU_* variable, your user config, or a file you
named or trusted), never to one that only the index records.

An index records its embedder, which may name an address (embedder.url) or a
file (embedder.path). An index can come with a repository too, so sagasu sends
documents and queries to such an address, or reads such a file, only when you
name it or made the index yourself (sagasu index --embedder ... remembers that
you did), or once you trust the index with --index: trust holds for exactly
what it records now.`,
		Example: `  sagasu trust                 # trust ./sagasu.yaml as it is now
  sagasu trust path/to/sagasu.yaml
  sagasu trust --index .sagasu/sagasu.db   # use the address this index records
  sagasu trust --list
  sagasu trust --revoke`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if list && (revoke || len(args) > 0 || index != "") {
				return usagef("--list takes no file, no --index and no --revoke")
			}
			if index != "" {
				if len(args) > 0 {
					return usagef("--index takes the index; give no config file with it")
				}
				return trustIndex(cmd, g, a, index, revoke)
			}
			if list {
				files, err := app.TrustedFiles(a.Getenv)
				if err != nil {
					return err
				}
				indexes, err := app.TrustedIndexes(a.Getenv)
				if err != nil {
					return err
				}
				if a.Config.JSON {
					return writeJSON(g.stdout, map[string]any{"files": files, "indexes": indexes})
				}
				if len(files) == 0 {
					fmt.Fprintln(g.stdout, "no project config is trusted")
				}
				for _, f := range files {
					fmt.Fprintf(g.stdout, "%-8s %s  %s  (sha256 %s…)\n", f.State, f.Trusted.Local().Format("2006-01-02"), f.File, f.SHA256[:12])
				}
				for _, f := range indexes {
					fmt.Fprintf(g.stdout, "index    %s  %s  (pins sha256 %s…)\n", f.Trusted.Local().Format("2006-01-02"), f.File, f.SHA256[:12])
				}
				return nil
			}
			file := app.DefaultConfigFile
			if len(args) == 1 {
				file = args[0]
			}
			if revoke {
				had, err := app.RevokeTrust(a.Getenv, file)
				if err != nil {
					return err
				}
				if a.Config.JSON {
					return writeJSON(g.stdout, map[string]any{"file": file, "revoked": had})
				}
				if !had {
					fmt.Fprintf(g.stdout, "%s was not trusted\n", file)
				} else {
					fmt.Fprintf(g.stdout, "%s is no longer trusted\n", file)
				}
				return nil
			}
			r, err := app.TrustProjectFile(a.Getenv, file, time.Now())
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, r)
			}
			fmt.Fprintf(g.stdout, "trusted %s (sha256 %s…)\n", r.File, r.SHA256[:12])
			if len(r.Allows) == 0 {
				fmt.Fprintln(g.stdout, "nothing in it needed trust")
				return nil
			}
			fmt.Fprintln(g.stdout, "these settings in it now apply:")
			for _, s := range r.Allows {
				fmt.Fprintf(g.stdout, "  %-24s %s (%s)\n", s.Key, s.Value, s.Why)
			}
			fmt.Fprintln(g.stdout, "Any change to the file asks again.")
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the trusted project configs and whether they changed")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "stop trusting the file (or, with --index, the index)")
	cmd.Flags().StringVar(&index, "index", "", "trust the embedder address or file that the index DB records, as it is now")
	return cmd
}

// trustIndex trusts (or with revoke forgets) what the index at db pins.
func trustIndex(cmd *cobra.Command, g *globals, a *app.App, db string, revoke bool) error {
	if revoke {
		had, err := app.RevokeIndex(a.Getenv, db)
		if err != nil {
			return err
		}
		if a.Config.JSON {
			return writeJSON(g.stdout, map[string]any{"index": db, "revoked": had})
		}
		if !had {
			fmt.Fprintf(g.stdout, "the index %s was not trusted\n", app.Redact(db))
		} else {
			fmt.Fprintf(g.stdout, "the index %s is no longer trusted\n", app.Redact(db))
		}
		return nil
	}
	a.Config.DB = db
	st, err := a.OpenStore(cmd.Context(), false)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := a.TrustIndex(cmd.Context(), st, time.Now())
	if err != nil {
		return err
	}
	if a.Config.JSON {
		return writeJSON(g.stdout, r)
	}
	switch {
	case r.Embedder == "":
		fmt.Fprintf(g.stdout, "the index %s records no embedder: nothing to trust\n", app.Redact(db))
	case r.Reaches == "":
		fmt.Fprintf(g.stdout, "trusted the index %s: its embedder %s reaches only its vendor\n", app.Redact(db), r.Embedder)
	default:
		fmt.Fprintf(g.stdout, "trusted the index %s: its embedder %s at the %s is used from now on (without your API key unless you name the address); any change to what the index records asks again\n", app.Redact(db), r.Embedder, r.Reaches)
	}
	return nil
}
