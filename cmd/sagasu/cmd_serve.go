package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/web"
)

func newServeCmd(g *globals) *cobra.Command {
	var (
		listen, token string
		roots         []string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the web page: chat with the agent's steps shown, search, agent runs, the agent cache and the index",
		Long: `Serve runs the browser face of sagasu: one page, embedded in the binary, and
the JSON API it calls. Chat with the index and watch the agent's thoughts,
actions, observations and reflection as they happen; open the passage each
[n] cites; try searches and evaluate results against a goal; start, watch and
resume Plan-and-Act runs; browse the agent cache; add folders and URLs.

It listens on 127.0.0.1 by default. Any other address needs a token (--token
or SAGASU_SERVE_TOKEN): open the printed link once (it sets a cookie) or send
Authorization: Bearer TOKEN. Requests from other sites are refused.`,
		Example: `  sagasu serve
  sagasu serve --listen 127.0.0.1:8080
  SAGASU_SERVE_TOKEN=$(openssl rand -hex 16) sagasu serve --listen 0.0.0.0:7373`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if token == "" {
				token = a.Getenv("SAGASU_SERVE_TOKEN")
			}
			ctx := cmd.Context()
			rt, err := a.Open(ctx, app.OpenOptions{Create: true, LongLived: true, PinEmpty: true, Roots: roots})
			if err != nil {
				return err
			}
			defer rt.Close()
			tasks, stopTasks := context.WithCancel(context.WithoutCancel(ctx))
			defer stopTasks()
			srv, err := web.New(tasks, a, rt, web.Options{Listen: listen, Token: token, Logger: a.Log})
			if err != nil {
				return usageError{err}
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", listen, err)
			}
			hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
			url := "http://" + ln.Addr().String() + "/"
			if token != "" {
				url += "?token=" + token
			}
			fmt.Fprintf(g.stdout, "sagasu serve: %s\n", url)
			errc := make(chan error, 1)
			go func() { errc <- hs.Serve(ln) }()
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			stopTasks()
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Wait(shut)
			if err := hs.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7373", "address to serve on; off loopback a token is required")
	cmd.Flags().StringVar(&token, "token", "", "token every request must carry (default $SAGASU_SERVE_TOKEN)")
	cmd.Flags().StringArrayVar(&roots, "root", nil, "folder the Index tab may add files from (repeatable; default the working directory)")
	addLLMFlags(cmd.Flags())
	addAgentFlags(cmd.Flags(), true)
	return cmd
}
