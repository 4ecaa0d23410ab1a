package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/loop/loopeval"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// measureIndex is the index that eval and bench measure: --db when the user
// gave one (reused across runs), else a temporary one removed on close. It
// is opened for many queries and pinned to the configured embedder.
type measureIndex struct {
	store    store.Store
	embedder embed.Embedder
	path     string // where the index is (a file path or a DSN)
	close    func()
}

func openMeasureIndex(ctx context.Context, cmd *cobra.Command, a *app.App, name string) (*measureIndex, error) {
	path := a.Config.DB
	cleanup := func() {}
	if !cmd.Flags().Changed("db") {
		dir, err := os.MkdirTemp("", "sagasu-"+name+"-")
		if err != nil {
			return nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		path = filepath.Join(dir, name+".db")
	}
	opt := a.StoreOptions(true, true)
	opt.ApproxVectors = 0 // as before: the bench's vector section times the graph itself
	st, err := app.OpenStoreWith(ctx, path, opt)
	if err != nil {
		cleanup()
		return nil, err
	}
	emb, err := a.Embedder(ctx, st, true)
	if err != nil {
		st.Close()
		cleanup()
		return nil, err
	}
	return &measureIndex{store: st, embedder: emb, path: path, close: func() { st.Close(); cleanup() }}, nil
}

// openCorpusIndex opens the index a measurement uses (openMeasureIndex) and
// indexes the labelled corpus in docs into it, with URIs relative to docs
// as the labels name pages; it says what it indexed unless --json.
func openCorpusIndex(ctx context.Context, cmd *cobra.Command, g *globals, a *app.App, name, docs string) (*measureIndex, error) {
	mi, err := openMeasureIndex(ctx, cmd, a, name)
	if err != nil {
		return nil, err
	}
	opt := a.IndexOptions()
	opt.Embedder = mi.embedder
	rep, err := loopeval.IndexCorpus(ctx, index.New(mi.store, opt), docs, opt.Source)
	if err != nil {
		mi.close()
		return nil, err
	}
	if !a.Config.JSON {
		fmt.Fprintf(g.stderr, "indexed %d documents (%d chunks) from %s\n", rep.Added+rep.Updated+rep.Unchanged, rep.Chunks, docs)
	}
	return mi, nil
}
