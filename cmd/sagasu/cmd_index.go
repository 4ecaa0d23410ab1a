package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func newIndexCmd(g *globals) *cobra.Command {
	var (
		text, title           string
		prune, force          bool
		watchFolders, verbose bool
	)
	cmd := &cobra.Command{
		Use:   "index [PATH|GLOB|URL|github:OWNER/REPO|gist:ID|-]...",
		Short: "Add files, folders, globs, web pages, GitHub repositories, gists or text to the index (incremental)",
		Long: `Index reads files, folders (recursively), globs such as 'docs/**/*.md', text
given with --text, or stdin ("-"), splits them into chunks and stores them.
It also fetches web pages (http(s) URLs), GitHub repositories
(github:owner/repo[@ref][/path], https://github.com/owner/repo/tree/ref/path;
GITHUB_TOKEN is used when set) and gists (gist:ID); an unchanged repository
costs one API call. Internal addresses are refused unless --allow-private.

It is incremental: a source whose content has not changed is skipped, a changed
one is replaced in one transaction, and running it twice leaves the same index.
--prune removes sources whose files are gone. .git, node_modules, hidden
folders, binary files, files over --max-file-size and symbolic links that
lead out of the folder being indexed or to a dotfile are skipped (name such
a file to index it).

A folder is read as git would: what its .gitignore files (in every folder,
with the repository's .git/info/exclude and your global excludes,
core.excludesFile), .ignore and .sagasuignore files leave out is skipped and
counted (--verbose lists it); --no-ignore reads it all. A file named as an
input is indexed even when ignored.

--watch keeps the index in step with the folders given: after the run it
follows their changes (edits, new, renamed and deleted files and folders) and
writes each burst, such as a git checkout, as one transaction, re-embedding
only the chunks that changed, until interrupted (Ctrl-C). Started again, it
first catches up with what changed while it was stopped.

A local file is stored once however it is named: "docs", "./docs",
"/abs/project/docs", "../project/docs" from another folder and a symlink to
the folder all name the same files. Its URI is its path from the index's
root ("docs/guide/intro.md"; --filter, get and delete use it), or its
absolute path when it lies outside the root. The root is the folder that
holds .sagasu/ for an index at <dir>/.sagasu/sagasu.db (the default);
for any other --db file or a postgres:// index it is the working directory
of the first index run, kept in the index. A symlinked file keeps its own
name. Indexes made by older versions, which stored paths as typed, are
re-keyed on their next index run (duplicates of one file are merged).`,
		Example: `  sagasu index README.md docs/
  sagasu index 'docs/**/*.md' --prune
  sagasu index github:golang/go@go1.22.0/doc https://go.dev/doc/effective_go
  sagasu index --text "Meeting notes: ship on Friday" --title "notes"
  cat notes.txt | sagasu index -
  sagasu index --watch docs/ src/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if text == "" && len(args) == 0 {
				return usagef("nothing to index: give files, folders or globs, or --text")
			}
			if err := source.Check(args); err != nil {
				return err
			}
			folders, err := watchedFolders(args, watchFolders)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var progress func(tools.IndexProgress)
			var display *indexDisplay
			if !a.Config.JSON || !isTerminal(g.stderr) {
				// On a terminal: a bar (not under --json, whose readers
				// want stderr quiet); elsewhere: a line every few seconds.
				display = newIndexDisplay(g.stderr, isTerminal(g.stderr))
				progress = display.show
				if display.terminal {
					// Warnings during the run go above the bar.
					a.Log = app.New(a.Config, display.logs(), g.environ).Log
				}
			}
			rt, err := a.Open(ctx, app.OpenOptions{Create: true, Pin: true, NoCache: true})
			if err != nil {
				return err
			}
			defer rt.Close()
			res, err := rt.Tools.Index(ctx, tools.IndexInput{Text: text, Title: title, Files: args, Force: force,
				Prune: prune, Stdin: g.stdin, AnyPath: true}, progress)
			if display != nil {
				display.finish()
			}
			rep := res.Report
			unreadable := 0
			for _, s := range rep.Skipped {
				if s.Reason == source.SkipUnreadable {
					unreadable++
				}
			}
			if a.Config.JSON {
				if jerr := writeJSON(g.stdout, reportView(rep, err)); jerr != nil {
					return jerr
				}
			} else {
				printReport(g.stdout, rep, verbose)
			}
			if err != nil {
				return err
			}
			if unreadable > 0 && !watchFolders {
				return fmt.Errorf("%d file(s) could not be read (listed above); fix their permissions and index again", unreadable)
			}
			if watchFolders {
				return watchIndex(ctx, g, a, rt, folders, verbose)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&text, "text", "", "index this text as a source")
	f.StringVar(&title, "title", "", "title for --text")
	f.BoolVar(&prune, "prune", false, "remove sources whose files no longer exist")
	f.BoolVar(&force, "force", false, "re-index sources even when unchanged")
	f.BoolVar(&watchFolders, "watch", false, "keep following the folders given and index their changes until interrupted")
	f.BoolVar(&verbose, "verbose", false, "list every file the ignore files left out")
	f.Bool("no-ignore", false, "also index what .gitignore, .ignore and .sagasuignore files and the global git excludes leave out")
	f.Bool("allow-private", false, "let URLs reach loopback, private and link-local addresses")
	f.Int("chunk-size", 0, "maximum tokens per chunk (default 512)")
	f.Int("chunk-overlap", 0, "tokens repeated between pieces of a long section (default 64)")
	f.Int64("max-file-size", 0, "skip files larger than this many bytes (default 10 MiB)")
	f.StringSlice("exclude", nil, "glob patterns to skip (repeatable)")
	addEmbedderFlags(f)
	return cmd
}

type skipView struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Error  string `json:"error,omitempty"`
}

func reportView(rep index.Report, err error) any {
	skips := make([]skipView, 0, len(rep.Skipped))
	for _, s := range rep.Skipped {
		v := skipView{Path: s.Path, Reason: string(s.Reason)}
		if s.Err != nil {
			v.Error = s.Err.Error()
		}
		skips = append(skips, v)
	}
	out := map[string]any{
		"added": rep.Added, "updated": rep.Updated, "unchanged": rep.Unchanged, "removed": rep.Removed,
		"chunks": rep.Chunks, "bytes": rep.Bytes, "embedded": rep.Embedded, "reused": rep.Reused, "tookMs": rep.Took.Milliseconds(), "skipped": skips,
	}
	if rep.Rekeyed+rep.Merged > 0 {
		out["rekeyed"], out["merged"] = rep.Rekeyed, rep.Merged
	}
	if len(rep.PoorFit) > 0 {
		out["poorFit"] = rep.PoorFit
	}
	if err != nil {
		out["error"] = err.Error()
	}
	return out
}

func printReport(w io.Writer, rep index.Report, verbose bool) {
	ignored, links := 0, 0
	for _, s := range rep.Skipped {
		switch s.Reason {
		case source.SkipIgnoreFile:
			ignored++
			if !verbose {
				continue
			}
		case source.SkipLink:
			// A repository may hold many; the count below says how to list them.
			links++
			if !verbose {
				continue
			}
		}
		msg := fmt.Sprintf("skipped %s (%s)", s.Path, s.Reason)
		if s.Err != nil {
			msg += ": " + s.Err.Error()
		}
		fmt.Fprintln(w, msg)
	}
	parts := []string{fmt.Sprintf("%d added", rep.Added), fmt.Sprintf("%d updated", rep.Updated), fmt.Sprintf("%d unchanged", rep.Unchanged)}
	if rep.Removed > 0 {
		parts = append(parts, fmt.Sprintf("%d removed", rep.Removed))
	}
	if ignored > 0 {
		more := " (--verbose lists them)"
		if verbose {
			more = ""
		}
		parts = append(parts, fmt.Sprintf("%d left out by ignore files%s", ignored, more))
	}
	if rep.Rekeyed+rep.Merged > 0 {
		fmt.Fprintf(w, "renamed %d sources to their canonical paths, merged %d duplicate sources\n", rep.Rekeyed, rep.Merged)
	}
	fmt.Fprintf(w, "indexed %d sources (%s), %d chunks written, %.1f MB read in %s\n",
		rep.Added+rep.Updated+rep.Unchanged, strings.Join(parts, ", "), rep.Chunks, float64(rep.Bytes)/1e6, rep.Took.Round(1e6))
	if rep.Embedded+rep.Reused > 0 {
		fmt.Fprintf(w, "embedded %d chunks, reused %d stored vectors\n", rep.Embedded, rep.Reused)
	}
	if links > 0 {
		fmt.Fprintf(w, "%d symbolic link(s) not followed: they lead outside the folder being indexed, to a dotfile, or nowhere; --verbose (or --json) lists them, and naming a file as an input indexes it\n", links)
	}
}
