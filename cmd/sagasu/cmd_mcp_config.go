package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/mcpconfig"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func newMCPConfigCmd(g *globals) *cobra.Command {
	var (
		write               bool
		file, name, command string
		project, toolGroups string
		roots               []string
	)
	cmd := &cobra.Command{
		Use:   "config CLIENT",
		Short: "Print (or --write) the configuration that connects an MCP client to this index",
		Long: `Config prints the entry that makes an MCP client start sagasu over stdio with
this index: the absolute path of this sagasu binary, the index (--db) and the
folders sagasu_index may read (--root, default the project folder), and the
groups of tools it offers when --tools is given (default: search,loop; add
index to let the agent index and delete, or say all). With --write it merges the entry into the client's configuration file, keeping
every other server and setting there.

Clients and the file --write changes (--file names another):
  claude-code     .mcp.json in the project folder (project scope)
  claude-desktop  claude_desktop_config.json (macOS: ~/Library/Application Support/Claude,
                  Windows: %APPDATA%\Claude, Linux: ~/.config/Claude)
  vscode          .vscode/mcp.json in the project folder
  cursor          .cursor/mcp.json in the project folder
  codex           ~/.codex/config.toml ($CODEX_HOME), a [mcp_servers.NAME] table

The file is replaced atomically with its own permissions; a symbolic link is
followed. A file that does not parse is left alone (nothing is written); a
JSON file with comments is copied to FILE.sagasu-backup-TIME first, since the
rewritten file has none. A trusted project sagasu.yaml is passed with
--config; an untrusted one is left out (run sagasu trust first).`,
		Example: `  sagasu mcp config claude-code            # print .mcp.json for this project
  sagasu mcp config vscode --write         # merge into .vscode/mcp.json
  sagasu --db ~/notes.db mcp config claude-desktop --name notes --root ~/notes --write
  sagasu mcp config codex --write          # [mcp_servers.sagasu] in ~/.codex/config.toml
  sagasu mcp config claude-code --tools default,index --write   # let the agent index too`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: mcpconfig.IDs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			client, err := mcpconfig.Lookup(args[0])
			if err != nil {
				return usageError{err}
			}
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if project == "" {
				if project, err = os.Getwd(); err != nil {
					return err
				}
			}
			if project, err = filepath.Abs(project); err != nil {
				return err
			}
			srv := mcpconfig.Server{Name: name, Command: command}
			if srv.Command == "" {
				if srv.Command, err = executable(); err != nil {
					return err
				}
				if strings.Contains(srv.Command, string(filepath.Separator)+"go-build") {
					fmt.Fprintf(g.stderr, "sagasu: %s is a temporary `go run` build; install sagasu (go install) or give --command\n", srv.Command)
				}
			} else if srv.Command, err = filepath.Abs(srv.Command); err != nil {
				return err
			}
			db, err := absDB(a.Config.DB, project)
			if err != nil {
				return usageError{err}
			}
			srv.Args = []string{"mcp", "--db", db}
			if o := a.Config.Origin; o.ProjectFile != "" {
				if o.Trusted {
					p, err := filepath.Abs(o.ProjectFile)
					if err != nil {
						return err
					}
					srv.Args = append(srv.Args, "--config", p)
				} else {
					fmt.Fprintf(g.stderr, "sagasu: %s is not trusted, so the client's server will not read it; run `sagasu trust` and this command again to pass it\n", o.ProjectFile)
				}
			}
			if len(roots) == 0 {
				roots = []string{project}
			}
			for _, r := range roots {
				abs, err := filepath.Abs(r)
				if err != nil {
					return err
				}
				srv.Args = append(srv.Args, "--root", abs)
			}
			if toolGroups != "" {
				groups, err := tools.SelectGroups(toolGroups)
				if err != nil {
					return usagef("--tools: %v", err)
				}
				srv.Args = append(srv.Args, "--tools", strings.Join(groups, ","))
			}
			if err := srv.Check(); err != nil {
				return usageError{err}
			}
			path := file
			if path == "" {
				home := envValue(g.environ, "HOME")
				if home == "" {
					home, _ = os.UserHomeDir()
				}
				env := mcpconfig.HostEnv(home, func(k string) string { return envValue(g.environ, k) })
				if path, err = client.DefaultPath(project, env); err != nil {
					return usageError{err}
				}
			} else if path, err = filepath.Abs(path); err != nil {
				return err
			}
			if !write {
				out, err := mcpconfig.Render(client, srv)
				if err != nil {
					return err
				}
				if a.Config.JSON {
					return writeJSON(g.stdout, map[string]any{"client": client.ID, "file": path, "config": string(out)})
				}
				fmt.Fprintf(g.stderr, "# %s: merge this into %s (%s), or run again with --write\n", client.Title, path, client.Scope)
				_, err = g.stdout.Write(out)
				if err == nil && !strings.HasSuffix(string(out), "\n") {
					_, err = fmt.Fprintln(g.stdout)
				}
				return err
			}
			within := ""
			if file == "" && client.InProject {
				// A clone may plant .vscode/mcp.json as a link out of it.
				within = project
			}
			w, err := mcpconfig.WriteFileWithin(path, within, client, srv)
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, map[string]any{"client": client.ID, "file": w.Path, "action": w.Action, "backup": w.Backup})
			}
			switch w.Action {
			case mcpconfig.Unchanged:
				fmt.Fprintf(g.stdout, "%s already has %q as this command would write it (%s)\n", w.Path, name, client.Title)
			default:
				fmt.Fprintf(g.stdout, "%s %q in %s for %s\n", w.Action, name, w.Path, client.Title)
			}
			if w.Backup != "" {
				fmt.Fprintf(g.stdout, "the file had comments, which JSON rewriting drops: the original is kept as %s\n", w.Backup)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&write, "write", false, "merge the entry into the client's configuration file instead of printing it")
	f.StringVar(&file, "file", "", "configuration file to write (default: the client's, see above)")
	f.StringVar(&name, "name", "sagasu", "name of the server entry (letters, digits, - and _)")
	f.StringVar(&command, "command", "", "sagasu binary the client starts (default: this one)")
	f.StringVar(&project, "project", "", "project folder: default root and home of project-scoped files (default: the working directory)")
	f.StringArrayVar(&roots, "root", nil, "folder sagasu_index may read (repeatable; default the project folder)")
	f.StringVar(&toolGroups, "tools", "", "groups of tools the entry offers: search, loop, index, agents, runs, default or all (default: the server's default, search,loop)")
	return cmd
}

// executable is the absolute path of the running binary, links resolved.
func executable() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the sagasu binary (give --command): %w", err)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p, nil
}

// absDB makes a file index absolute (against project) and refuses to copy a
// database password into a client's file.
func absDB(db, project string) (string, error) {
	if u, err := url.Parse(db); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		if _, has := u.User.Password(); has {
			return "", fmt.Errorf("--db %s holds a password, which would be copied into the client's file; leave it out and set PGPASSWORD or a ~/.pgpass for the server instead", u.Redacted())
		}
		if q := u.Query(); q.Get("password") != "" || q.Get("api_key") != "" {
			return "", fmt.Errorf("--db %s holds a secret in its query, which would be copied into the client's file; pass it through the environment instead", u.Redacted())
		}
		return db, nil
	}
	if filepath.IsAbs(db) {
		return db, nil
	}
	return filepath.Join(project, db), nil
}
