// Package watch keeps the index in step with folders as they change: it
// follows file events (fsnotify, one watch per folder, since inotify is
// not recursive), gathers a burst of them (a git checkout, a formatter
// run) and writes it as one sync, one transaction; it catches up by
// content hash when it starts, and rescans when events were lost at the
// operating system's limits, saying so.
package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sagasu-dev/sagasu/internal/ignore"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Target is what a watch writes to: the toolset's Sync, under its roots
// and rules, and its Freshness, which sagasu_list and the page report.
type Target interface {
	Sync(ctx context.Context, in tools.SyncInput) (index.Report, error)
	Freshness() *tools.Freshness
}

// Defaults.
const (
	// DefaultDebounce is how long the events of a folder must be quiet
	// before they are written: long enough that a git checkout or a
	// formatter's run, whose writes follow each other within milliseconds,
	// is one batch.
	DefaultDebounce = 300 * time.Millisecond
	// DefaultMaxDelay bounds how long a steady stream of events is held.
	DefaultMaxDelay = 5 * time.Second
	// DefaultRetry is the wait before writing again after the index was
	// busy (another run held its writer lock) or a sync failed.
	DefaultRetry = time.Second
	// DefaultPoll is how often folders that could not all be watched (the
	// operating system's limit of watches was reached) are rescanned.
	DefaultPoll = time.Minute
)

// Options configure a watch.
type Options struct {
	// Roots are the folders to watch (absolute paths).
	Roots []string
	// AnyPath lets the roots lie anywhere (the command line); otherwise
	// the target refuses folders outside its roots.
	AnyPath bool
	// NoIgnore watches the folders ignore files leave out too;
	// GlobalExcludes is the user's global git excludes file. Both follow
	// the index options, so that what is watched is what is indexed.
	NoIgnore       bool
	GlobalExcludes string
	// Index is the index's own file when it lies on this machine (a SQLite
	// database): events of it and of the files beside it that share its
	// name (-wal, -shm, .lock) are not changes to index, or every write
	// would start another sync.
	Index string
	// Debounce, MaxDelay, Retry and Poll: see the defaults; 0 takes them.
	Debounce, MaxDelay, Retry, Poll time.Duration
	// Logger receives what the user should know (a lost event healed, a
	// limit reached) at warn, each sync at info; nil discards it.
	Logger *slog.Logger
	// OnSync, when set, hears about every sync (for the command line's
	// report and for tests).
	OnSync func(Synced)
	// newWatcher makes the event source; tests replace it.
	newWatcher func() (events, error)
	// beforeRead, when set (by tests), runs before each event is taken.
	beforeRead func()
}

// Synced reports one sync.
type Synced struct {
	Root string
	// Paths are the changed paths written; nil for a whole folder.
	Paths []string
	// Why says what started it: "start", "events", "overflow", "poll".
	Why    string
	Report index.Report
	Err    error
	Took   time.Duration
}

// events is what a watch reads file events from: fsnotify's Watcher.
type events interface {
	Add(name string) error
	Remove(name string) error
	WatchList() []string
	Events() <-chan fsnotify.Event
	Errors() <-chan error
	Close() error
}

type fsWatcher struct{ *fsnotify.Watcher }

func (w fsWatcher) Events() <-chan fsnotify.Event { return w.Watcher.Events }
func (w fsWatcher) Errors() <-chan error          { return w.Watcher.Errors }

// root is one watched folder and what changed in it since its last sync.
type root struct {
	path      string // absolute, as given
	canon     string // canonical, as the freshness is keyed
	pending   map[string]bool
	full      bool   // the whole folder is to be synced
	why       string // what the next sync is for
	first     time.Time
	last      time.Time
	notBefore time.Time // a failed or busy sync waits until then
	syncing   bool
	rules     *ignore.Tree // the ignore rules, read again when an ignore file changes; nil with NoIgnore
	fails     int          // syncs failed in a row: each waits twice as long, up to Poll
}

func (r *root) dirty() bool { return r.full || len(r.pending) > 0 }

// Run watches the folders and keeps the index in step with them until ctx
// is done: it first catches up with what changed since the last sync (by
// content hash), then writes each burst of events as one sync. It returns
// nil when ctx ends, or an error when it cannot start.
func Run(ctx context.Context, t Target, opt Options) error {
	w, err := newWatch(t, opt)
	if err != nil {
		return err
	}
	defer w.ev.Close()
	return w.loop(ctx)
}

type watch struct {
	t     Target
	opt   Options
	log   *slog.Logger
	ev    events
	roots []*root
	dirs  map[string]bool // folders with a watch
	limit bool            // the watch limit was reached: poll
	done  chan syncDone
	timer *time.Timer
	index string // Options.Index with the links of its folders resolved
}

type syncDone struct {
	r     *root
	paths []string
	full  bool
	why   string
	err   error
}

func newWatch(t Target, opt Options) (*watch, error) {
	if len(opt.Roots) == 0 {
		return nil, errors.New("watch: no folders to watch")
	}
	if opt.Debounce <= 0 {
		opt.Debounce = DefaultDebounce
	}
	if opt.MaxDelay <= 0 {
		opt.MaxDelay = DefaultMaxDelay
	}
	if opt.Retry <= 0 {
		opt.Retry = DefaultRetry
	}
	if opt.Poll <= 0 {
		opt.Poll = DefaultPoll
	}
	if opt.newWatcher == nil {
		opt.newWatcher = func() (events, error) {
			w, err := fsnotify.NewWatcher()
			if err != nil {
				return nil, err
			}
			return fsWatcher{w}, nil
		}
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &watch{t: t, opt: opt, log: log, dirs: map[string]bool{}, done: make(chan syncDone, 1)}
	for _, p := range opt.Roots {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("watch %q: give an absolute path", p)
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("watch %q: not a folder; give a folder to watch", p)
		}
		c, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, fmt.Errorf("watch %q: %w", p, err)
		}
		w.roots = append(w.roots, &root{path: filepath.Clean(p), canon: c, pending: map[string]bool{}})
	}
	if opt.Index != "" {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(opt.Index)); err == nil {
			w.index = filepath.Join(dir, filepath.Base(opt.Index))
		}
	}
	ev, err := opt.newWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: start following file events: %w", err)
	}
	w.ev = ev
	return w, nil
}

// loop is the watch: one goroutine takes events and decides when to
// sync; syncs run one at a time on another, so events keep being taken
// (and the kernel's queue kept short) while one is written.
func (w *watch) loop(ctx context.Context) error {
	for _, r := range w.roots {
		w.readRules(r)
		w.addTree(r, r.path)
		r.full, r.why = true, "start"
		w.t.Freshness().Update(r.canon, func(s *tools.RootState) { s.Watching = true })
	}
	defer func() {
		for _, r := range w.roots {
			w.t.Freshness().Update(r.canon, func(s *tools.RootState) { s.Watching, s.Syncing = false, false })
		}
	}()
	w.timer = time.NewTimer(0)
	defer w.timer.Stop()
	var poll <-chan time.Time
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	busy := false
	jobs := make(chan syncDone)
	defer close(jobs)
	go w.worker(ctx, jobs)
	for {
		if w.opt.beforeRead != nil {
			w.opt.beforeRead()
		}
		if w.limit && ticker == nil {
			ticker = time.NewTicker(w.opt.Poll)
			poll = ticker.C
		}
		select {
		case <-ctx.Done():
			if busy {
				<-w.done
			}
			return nil
		case e, ok := <-w.ev.Events():
			if !ok {
				return errors.New("watch: the file event source closed")
			}
			w.event(e)
		case err, ok := <-w.ev.Errors():
			if !ok {
				return errors.New("watch: the file event source closed")
			}
			w.eventError(err)
		case <-poll:
			for _, r := range w.roots {
				w.mark(r, "", "poll")
			}
		case d := <-w.done:
			busy = false
			w.finished(d)
		case <-w.timer.C:
			// Events already waiting mean the burst goes on: take them
			// before deciding that a folder has been quiet.
			if err := w.drain(); err != nil {
				return err
			}
		}
		if !busy {
			if job, ok := w.due(time.Now()); ok {
				busy = true
				jobs <- job
			}
		}
		w.schedule(time.Now(), busy)
	}
}

// drain takes the events that are waiting, without blocking.
func (w *watch) drain() error {
	for {
		select {
		case e, ok := <-w.ev.Events():
			if !ok {
				return errors.New("watch: the file event source closed")
			}
			w.event(e)
		default:
			return nil
		}
	}
}

// worker runs the syncs it is given, one at a time.
func (w *watch) worker(ctx context.Context, jobs <-chan syncDone) {
	for job := range jobs {
		r := job.r
		w.t.Freshness().Update(r.canon, func(s *tools.RootState) { s.Syncing = true })
		start := time.Now()
		var paths []string
		if !job.full {
			paths = job.paths
		}
		rep, err := w.t.Sync(ctx, tools.SyncInput{Root: r.path, Paths: paths, AnyPath: w.opt.AnyPath})
		took := time.Since(start)
		if ctx.Err() != nil && err != nil {
			err = ctx.Err()
		}
		w.t.Freshness().Update(r.canon, func(s *tools.RootState) {
			s.Syncing = false
			if err != nil {
				s.Error = err.Error()
				return
			}
			s.Error = ""
			s.SyncedAt = time.Now().UTC().Format(time.RFC3339Nano)
		})
		switch {
		case err == nil:
			w.log.Info("watch: synced", "folder", r.path, "why", job.why, "paths", len(job.paths), "full", job.full,
				"added", rep.Added, "updated", rep.Updated, "removed", rep.Removed, "embedded", rep.Embedded, "took", took.Round(time.Millisecond))
		case errors.Is(err, tools.ErrIndexBusy):
			w.log.Info("watch: the index is busy; writing the changes once it is free", "folder", r.path)
		case ctx.Err() == nil:
			w.log.Warn("watch: sync failed; trying again", "folder", r.path, "err", err)
		}
		if w.opt.OnSync != nil && ctx.Err() == nil {
			s := Synced{Root: r.path, Why: job.why, Report: rep, Err: err, Took: took}
			if !job.full {
				s.Paths = job.paths
			}
			w.opt.OnSync(s)
		}
		if job.full {
			// A rescan reads every file once; an idle watch need not keep
			// the memory it took.
			debug.FreeOSMemory()
		}
		job.err = err
		w.done <- job
	}
}

// finished takes a sync's outcome: what it did not write is pending again.
func (w *watch) finished(d syncDone) {
	r := d.r
	r.syncing = false
	if d.err == nil {
		r.fails = 0
		w.updatePending(r)
		return
	}
	if d.full {
		r.full = true
	}
	for _, p := range d.paths {
		r.pending[p] = true
	}
	if r.why == "" {
		r.why = d.why
	}
	wait := w.opt.Retry
	if !errors.Is(d.err, tools.ErrIndexBusy) {
		// A folder that is gone or a disk that is full is not asked again
		// every second.
		r.fails++
		wait = min(w.opt.Retry<<min(r.fails-1, 16), w.opt.Poll)
	}
	r.notBefore = time.Now().Add(wait)
	w.updatePending(r)
}

// due returns the next sync to run: a folder whose events have been quiet
// for Debounce, or held for MaxDelay.
func (w *watch) due(now time.Time) (syncDone, bool) {
	for _, r := range w.roots {
		if !r.dirty() || r.syncing || now.Before(r.notBefore) {
			continue
		}
		if r.full && r.why != "events" || now.Sub(r.last) >= w.opt.Debounce || now.Sub(r.first) >= w.opt.MaxDelay {
			job := syncDone{r: r, full: r.full, why: r.why}
			if !r.full {
				job.paths = slices.Sorted(maps.Keys(r.pending))
			}
			r.pending, r.full, r.why = map[string]bool{}, false, ""
			r.syncing = true
			w.updatePending(r)
			return job, true
		}
	}
	return syncDone{}, false
}

// schedule sets the timer for the next folder that will be due.
func (w *watch) schedule(now time.Time, busy bool) {
	next := time.Duration(-1)
	if !busy {
		for _, r := range w.roots {
			if !r.dirty() || r.syncing {
				continue
			}
			at := r.last.Add(w.opt.Debounce)
			if held := r.first.Add(w.opt.MaxDelay); held.Before(at) {
				at = held
			}
			if r.full && r.why != "events" {
				at = now
			}
			if at.Before(r.notBefore) {
				at = r.notBefore
			}
			if d := at.Sub(now); next < 0 || d < next {
				next = max(d, 0)
			}
		}
	}
	if !w.timer.Stop() {
		select {
		case <-w.timer.C:
		default:
		}
	}
	if next >= 0 {
		w.timer.Reset(next)
	}
}

// event takes one file event.
func (w *watch) event(e fsnotify.Event) {
	if e.Op == fsnotify.Chmod || e.Name == "" {
		return
	}
	r := w.rootOf(e.Name)
	if r == nil {
		return
	}
	name := filepath.Clean(e.Name)
	base := filepath.Base(name)
	if w.ownFile(name, base) {
		return // the index writing itself
	}
	if base == ignore.GitIgnore || base == ignore.Ignore || base == ignore.SagasuIgnore {
		// New rules for the folder: read it all again, and watch the
		// folders they no longer leave out.
		w.readRules(r)
		dir := filepath.Dir(name)
		w.addTree(r, dir)
		w.mark(r, dir, "events")
		return
	}
	var isDir bool
	switch {
	case e.Has(fsnotify.Create):
		if fi, err := os.Lstat(name); err == nil && fi.IsDir() {
			// A new folder (or one moved in): watch it and what it holds
			// before reading it, so nothing created in it is missed.
			isDir = true
			w.addTree(r, name)
		}
	case e.Has(fsnotify.Remove) || e.Has(fsnotify.Rename):
		// A folder moved away keeps its watches under its old name:
		// drop them; its new name, if in a watched folder, comes as a
		// Create.
		isDir = w.dirs[name]
		w.dropTree(name)
	}
	if w.leftOut(r, name, isDir) {
		return // a log file written by the hour, a build output: no sync
	}
	w.mark(r, name, "events")
}

// ownFile reports the index's own files (see Options.Index), however the
// folders on their way are spelled.
func (w *watch) ownFile(name, base string) bool {
	if w.index == "" || !strings.HasPrefix(base, filepath.Base(w.index)) {
		return false
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(name))
	return err == nil && strings.HasPrefix(filepath.Join(dir, base), w.index)
}

// mark notes that path (a whole folder when "") changed in r.
func (w *watch) mark(r *root, path, why string) {
	now := time.Now()
	if !r.dirty() {
		r.first = now
	}
	r.last = now
	if path == "" || path == r.path {
		r.full = true
		if r.why == "" || why != "events" {
			r.why = why
		}
	} else {
		r.pending[path] = true
		if r.why == "" {
			r.why = why
		}
	}
	w.updatePending(r)
}

func (w *watch) updatePending(r *root) {
	n := len(r.pending)
	if r.full {
		n++
	}
	w.t.Freshness().Update(r.canon, func(s *tools.RootState) { s.Pending = n })
}

// eventError takes an error from the event source: a lost event is healed
// by a rescan of every folder, and the user is told.
func (w *watch) eventError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		const msg = "file events were lost (the operating system's event queue overflowed, fs.inotify.max_queued_events on Linux): every watched folder is read again to catch up"
		w.log.Warn("watch: " + msg)
		at := time.Now().UTC().Format(time.RFC3339)
		for _, r := range w.roots {
			w.addTree(r, r.path) // folders created meanwhile were missed too
			w.mark(r, "", "overflow")
			w.t.Freshness().Update(r.canon, func(s *tools.RootState) { s.Notice = msg + " (" + at + ")" })
		}
		return
	}
	w.log.Warn("watch: error from the file events", "err", err)
}

// rootOf returns the watched folder path lies in (the deepest), or nil.
func (w *watch) rootOf(path string) *root {
	var best *root
	for _, r := range w.roots {
		if under(r.path, path) && (best == nil || len(r.path) > len(best.path)) {
			best = r
		}
	}
	return best
}

// readRules reads r's ignore rules again.
func (w *watch) readRules(r *root) {
	r.rules = nil
	if w.opt.NoIgnore {
		return
	}
	t, err := ignore.New(r.canon, ignore.Options{GlobalExcludes: w.opt.GlobalExcludes})
	if err != nil {
		w.log.Warn("watch: cannot read the ignore rules; watching every folder", "folder", r.path, "err", err)
		return
	}
	r.rules = t
}

// leftOut reports a path under r that no walk reads: in a hidden folder,
// .git, node_modules, or left out by the ignore files. Its events need no
// sync, and a folder needs no watch.
func (w *watch) leftOut(r *root, p string, isDir bool) bool {
	rel, err := filepath.Rel(r.path, p)
	if err != nil || rel == "." {
		return false
	}
	rel = filepath.ToSlash(rel)
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		if (!last || isDir) && (strings.HasPrefix(seg, ".") || seg == "node_modules") {
			return true
		}
	}
	return r.rules != nil && r.rules.Match(rel, isDir).Ignored
}

// addTree watches the folder dir of r and the folders below it that a
// walk would enter (see leftOut); symbolic links are not followed.
func (w *watch) addTree(r *root, dir string) {
	var walk func(d string)
	walk = func(d string) {
		if w.leftOut(r, d, true) || !w.add(d) {
			return
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.IsDir() {
				walk(filepath.Join(d, e.Name()))
			}
		}
	}
	walk(dir)
}

// add watches one folder; false when it cannot be.
func (w *watch) add(dir string) bool {
	if w.dirs[dir] {
		return true
	}
	err := w.ev.Add(dir)
	switch {
	case err == nil:
		w.dirs[dir] = true
		return true
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE):
		if !w.limit {
			w.limit = true
			msg := fmt.Sprintf("the operating system's limit of watched folders is reached (fs.inotify.max_user_watches on Linux; %d folders watched): folders not watched are caught up by a rescan every %s; raise the limit (sudo sysctl fs.inotify.max_user_watches=524288) to follow every change at once", len(w.dirs), w.opt.Poll)
			w.log.Warn("watch: " + msg)
			for _, r := range w.roots {
				w.t.Freshness().Update(r.canon, func(s *tools.RootState) { s.Notice = msg })
			}
		}
		return false
	default:
		if !errors.Is(err, os.ErrNotExist) {
			w.log.Warn("watch: cannot watch a folder", "folder", dir, "err", err)
		}
		return false
	}
}

// dropTree forgets the watches of the folder dir and those below it.
func (w *watch) dropTree(dir string) {
	if !w.dirs[dir] {
		return
	}
	for d := range w.dirs {
		if under(dir, d) {
			delete(w.dirs, d)
			_ = w.ev.Remove(d) // gone already, mostly
		}
	}
}

// under reports whether p is dir or lies below it.
func under(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
