package main

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/httpguard"
	"github.com/sagasu-dev/sagasu/internal/web"
)

func newServeCmd(g *globals) *cobra.Command {
	var (
		listen, token          string
		roots                  []string
		noToken, allowDotfiles bool
		watchRoots             bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the web page: chat with the agent's steps shown, search, agent runs, the agent cache and the index",
		Long: `Serve runs the browser face of sagasu: one page, embedded in the binary, and
the JSON API it calls. Chat with the index and watch the agent's thoughts,
actions, observations and reflection as they happen; open the passage each
[n] cites; try searches and evaluate results against a goal; start, watch and
resume Plan-and-Act runs; browse the agent cache; add folders and URLs.

It listens on 127.0.0.1 and prints a link with a fresh random token
(#token=...): open it and the page keeps the token in its own storage and
sends it as Authorization: Bearer TOKEN, as scripts do; no cookie carries it,
since a browser sends cookies for 127.0.0.1 to every port. Every API request
needs the token, even on loopback, so that other users and programs on this
machine cannot read or index your files through the page. --token or SAGASU_SERVE_TOKEN fixes the
token (needed for any address but loopback); --no-token serves without one,
which is unsafe on a machine others use. Requests from other sites are
refused. The page neither indexes nor shows dotfiles and dot-folders (.env,
.ssh/, .git/) unless --allow-dotfiles. The API is described at
/api/openapi.json.

--watch indexes the roots (--root) and keeps the index in step with their
changes while the page is served; the Index tab shows when each root was last
in step and whether a sync is running.`,
		Example: `  sagasu serve
  sagasu serve --listen 127.0.0.1:8080 --root ~/notes
  sagasu serve --watch --root ~/project
  SAGASU_SERVE_TOKEN=$(openssl rand -hex 32) sagasu serve --listen 0.0.0.0:7373`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if token == "" {
				token = a.Getenv("SAGASU_SERVE_TOKEN")
			}
			if noToken && token != "" {
				return usagef("--no-token and a token (--token or SAGASU_SERVE_TOKEN) were both given: give one")
			}
			if host, _, err := net.SplitHostPort(listen); err == nil && httpguard.IsLoopback(host) && token == "" && !noToken {
				// Off loopback the user must choose the token (web.New says so).
				token = httpguard.NewToken()
			}
			opt := web.Options{Listen: listen, Token: token, NoToken: noToken, AllowDotfiles: allowDotfiles, Logger: a.Log}
			ctx := cmd.Context()
			rt, err := a.Open(ctx, app.OpenOptions{Create: true, LongLived: true, PinEmpty: true, Roots: roots})
			if err != nil {
				return err
			}
			defer rt.Close()
			defer startWatch(ctx, a, rt, allowDotfiles, watchRoots)()
			tasks, stopTasks := context.WithCancel(context.WithoutCancel(ctx))
			defer stopTasks()
			srv, err := web.New(tasks, a, rt, opt)
			if err != nil {
				return usageError{err}
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", listen, err)
			}
			// The link is what the command gives its user: on stdout, alone
			// on its line (warnings and logs go to stderr).
			url := "http://" + ln.Addr().String() + "/"
			if noToken {
				fmt.Fprintf(g.stdout, "%s\n", url)
				fmt.Fprintf(g.stderr, "sagasu serve: no token (--no-token): any user or program on this machine can read and index files under the roots through this page\n")
			} else {
				fmt.Fprintf(g.stdout, "%s#token=%s\n", url, token)
			}
			err = srv.Serve(ctx, ln)
			stopTasks()
			return err
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7373", "address to serve on; off loopback a fixed token is required")
	cmd.Flags().StringVar(&token, "token", "", "token every request must carry (default $SAGASU_SERVE_TOKEN, else a new random one printed in the link)")
	cmd.Flags().BoolVar(&noToken, "no-token", false, "serve without a token on loopback: unsafe on a machine others use, since any local user or program can then read and index your files")
	cmd.Flags().BoolVar(&allowDotfiles, "allow-dotfiles", false, "let the page index and show dotfiles and dot-folders (.env, .ssh/, .git/), which often hold secrets")
	cmd.Flags().StringArrayVar(&roots, "root", nil, "folder the Index tab may add files from (repeatable; default the working directory)")
	cmd.Flags().BoolVar(&watchRoots, "watch", false, "index the roots and keep the index in step with their changes while serving")
	cmd.Flags().Bool("no-ignore", false, "also index what .gitignore, .ignore and .sagasuignore files and the global git excludes leave out")
	addLLMFlags(cmd.Flags())
	addAgentFlags(cmd.Flags(), true)
	return cmd
}
