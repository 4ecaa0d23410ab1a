package app

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/ignore"
	"github.com/sagasu-dev/sagasu/internal/tools"
	"github.com/sagasu-dev/sagasu/internal/watch"
)

// WatchOptions are the settings a watch shares with the index runs: the
// ignore files are followed (or not) alike, so what is watched is what is
// indexed.
func (a *App) WatchOptions(folders []string, anyPath bool) watch.Options {
	opt := watch.Options{Roots: folders, AnyPath: anyPath, NoIgnore: a.Config.Index.NoIgnore,
		GlobalExcludes: ignore.GlobalExcludesFile(a.Getenv), Logger: a.Log}
	// A SQLite index inside a watched folder must not watch itself.
	if db := strings.TrimPrefix(a.Config.DB, "sqlite://"); db != "" && !strings.Contains(db, "://") {
		if abs, err := filepath.Abs(db); err == nil {
			opt.Index = abs
		}
	}
	return opt
}

// Watch keeps the index in step with folders through t (the runtime's
// toolset, or the copy a face serves with its dotfile rule) until ctx is
// done; see package watch. The faces start it; it blocks.
func (r *Runtime) Watch(ctx context.Context, t *tools.Toolset, opt watch.Options) error {
	if t == nil {
		t = r.Tools
	}
	return watch.Run(ctx, t, opt)
}
