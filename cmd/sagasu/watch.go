package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/watch"
)

// watchedFolders returns the folders among the inputs of `index --watch`,
// absolute; it refuses a watch with none.
func watchedFolders(args []string, on bool) ([]string, error) {
	if !on {
		return nil, nil
	}
	var out []string
	for _, in := range args {
		if source.IsRemote(in) || in == "-" {
			continue
		}
		if fi, err := os.Stat(in); err != nil || !fi.IsDir() {
			continue
		}
		abs, err := filepath.Abs(in)
		if err != nil {
			return nil, err
		}
		out = append(out, abs)
	}
	if len(out) == 0 {
		return nil, usagef("--watch follows folders: give at least one folder to index and watch")
	}
	return out, nil
}

// watchIndex follows the folders after `sagasu index` until interrupted,
// printing a line for each sync that changed the index.
func watchIndex(ctx context.Context, g *globals, a *app.App, rt *app.Runtime, folders []string, verbose bool) error {
	opt := a.WatchOptions(folders, true)
	opt.OnSync = func(s watch.Synced) {
		if a.Config.JSON {
			v := reportView(s.Report, s.Err)
			if m, ok := v.(map[string]any); ok {
				m["folder"], m["why"], m["paths"] = s.Root, s.Why, len(s.Paths)
			}
			_ = writeJSON(g.stdout, v)
			return
		}
		if s.Err != nil {
			fmt.Fprintf(g.stderr, "sagasu index --watch: %s: %v\n", s.Root, s.Err)
			return
		}
		rep := s.Report
		if rep.Added+rep.Updated+rep.Removed == 0 && !verbose {
			return
		}
		parts := []string{fmt.Sprintf("%d added", rep.Added), fmt.Sprintf("%d updated", rep.Updated), fmt.Sprintf("%d removed", rep.Removed)}
		if rep.Embedded+rep.Reused > 0 {
			parts = append(parts, fmt.Sprintf("%d chunks embedded, %d vectors reused", rep.Embedded, rep.Reused))
		}
		fmt.Fprintf(g.stdout, "%s synced %s (%s): %s in %s\n", time.Now().Format("15:04:05"), s.Root, s.Why, strings.Join(parts, ", "), s.Took.Round(time.Millisecond))
	}
	fmt.Fprintf(g.stderr, "sagasu index: watching %s (Ctrl-C to stop)\n", strings.Join(folders, ", "))
	err := rt.Watch(ctx, nil, opt)
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}

// startWatch keeps the index in step with the roots of a server (mcp,
// serve) in the background, through t (the toolset with the server's
// dotfile rule), when on; stop ends it and waits.
func startWatch(ctx context.Context, a *app.App, rt *app.Runtime, allowDotfiles, on bool) (stop func()) {
	if !on {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	roots := rt.Tools.Roots()
	a.Log.Info("watching the roots: the index follows their changes", "roots", strings.Join(roots, ", "))
	go func() {
		defer close(done)
		if err := rt.Watch(ctx, rt.Tools.WithDotfiles(allowDotfiles), a.WatchOptions(roots, false)); err != nil && ctx.Err() == nil {
			a.Log.Error("the watch stopped: the index no longer follows the roots", "err", err)
		}
	}()
	return func() { cancel(); <-done }
}
