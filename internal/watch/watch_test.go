package watch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/testenv"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// counting counts the index's write transactions of each kind.
type counting struct {
	store.Store
	mu      sync.Mutex
	applies []int // sources written by each Apply
}

func (c *counting) Apply(ctx context.Context, batch []store.SourceData, remove []string) (int, error) {
	c.mu.Lock()
	c.applies = append(c.applies, len(batch)+len(remove))
	c.mu.Unlock()
	return c.Store.Apply(ctx, batch, remove)
}

// harness is a folder, an index and a toolset over them, and a watch that
// can be started and stopped.
type harness struct {
	t      testing.TB
	dir    string // the watched folder, canonical
	db     string
	st     *counting
	ts     *tools.Toolset
	an     *analyze.Analyzer
	mu     sync.Mutex
	syncs  []Synced
	cancel context.CancelFunc
	done   chan error
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dir: dir, db: filepath.Join(t.TempDir(), "sagasu.db"), an: analyze.New(analyze.Options{})}
	h.open()
	t.Cleanup(func() { h.stop(); h.st.Close() })
	return h
}

func (h *harness) open() {
	h.t.Helper()
	st, err := sqlite.Open(context.Background(), h.db, sqlite.Options{Create: true})
	if err != nil {
		h.t.Fatal(err)
	}
	h.st = &counting{Store: st}
	h.ts, err = tools.New(tools.Options{Engine: search.New(h.st), Roots: []string{h.dir},
		Index: index.Options{Source: source.Options{Root: h.dir}}})
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) path(rel string) string { return filepath.Join(h.dir, filepath.FromSlash(rel)) }

func (h *harness) write(rel, content string) {
	h.t.Helper()
	p := h.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// start watches the folder with opt (Roots and OnSync are filled in) and
// waits for the catch-up sync.
func (h *harness) start(opt Options) {
	h.t.Helper()
	opt.Roots = []string{h.dir}
	if opt.Debounce == 0 {
		opt.Debounce = 100 * time.Millisecond
	}
	opt.OnSync = func(s Synced) {
		h.mu.Lock()
		h.syncs = append(h.syncs, s)
		h.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- Run(ctx, h.ts, opt) }()
	h.waitFor("the catch-up sync at start", func() bool {
		return slices.ContainsFunc(h.synced(), func(s Synced) bool { return s.Why == "start" && s.Err == nil })
	})
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("watch ended with %v", err)
	}
	h.cancel = nil
}

func (h *harness) synced() []Synced {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.syncs)
}

// syncedFor returns a condition that holds once a sync started for why
// has been reported.
func (h *harness) syncedFor(why string) func() bool {
	return func() bool {
		return slices.ContainsFunc(h.synced(), func(s Synced) bool { return s.Why == why })
	}
}

// waitFor polls the index until cond holds and returns how long it took.
// It has no deadline of its own: the test's timeout bounds it, so a slow
// machine makes it slow, never failing.
func (h *harness) waitFor(what string, cond func() bool) time.Duration {
	h.t.Helper()
	start := time.Now()
	for !cond() {
		select {
		case err := <-h.done:
			h.t.Fatalf("waiting for %s: the watch ended: %v", what, err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Since(start) > time.Minute {
			h.t.Fatalf("waiting for %s: not after a minute", what)
		}
	}
	took := time.Since(start)
	h.t.Logf("%s: reflected after %s", what, took.Round(time.Millisecond))
	return took
}

// find returns the URIs of the sources a keyword query for word finds.
func (h *harness) find(word string) []string {
	h.t.Helper()
	ctx := context.Background()
	res, err := h.st.KeywordSearch(ctx, h.an.QueryTerms(word), 10000, store.Filter{})
	if err != nil {
		h.t.Fatal(err)
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.ChunkID
	}
	hits, err := h.st.Hits(ctx, ids)
	if err != nil {
		h.t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, hit := range hits {
		seen[hit.Source.URI] = true
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

func (h *harness) finds(word string, uris ...string) func() bool {
	return func() bool { return slices.Equal(h.find(word), uris) }
}

func (h *harness) holds(uri string) bool {
	_, err := h.st.SourceByURI(context.Background(), uri)
	return err == nil
}

// TestWatchFollowsChanges edits, adds, renames and deletes files and
// folders under a watched folder; each is searchable (or gone) at the next
// query once the watch has written it. The time each took is logged: the
// debounce (100 ms here, 300 ms by default) plus one sync.
func TestWatchFollowsChanges(t *testing.T) {
	h := newHarness(t)
	h.write("a.md", "# Alpha\n\nalpha routing\n")
	h.write("keep/k.md", "# Keep\n\nkept\n")
	h.start(Options{})
	if !h.holds("a.md") || !h.holds("keep/k.md") {
		t.Fatal("the catch-up sync at start did not index the folder")
	}
	var took []time.Duration
	step := func(what string, cond func() bool) { took = append(took, h.waitFor(what, cond)) }

	h.write("a.md", "# Alpha\n\nalpha zebra\n")
	step("an edit", h.finds("zebra", "a.md"))
	h.write("b.md", "# Beta\n\nbeta yak\n")
	step("a new file", h.finds("yak", "b.md"))
	if err := os.Rename(h.path("a.md"), h.path("c.md")); err != nil {
		t.Fatal(err)
	}
	step("a rename", func() bool { return slices.Equal(h.find("zebra"), []string{"c.md"}) && !h.holds("a.md") })
	if err := os.Remove(h.path("b.md")); err != nil {
		t.Fatal(err)
	}
	step("a delete", func() bool { return len(h.find("yak")) == 0 && !h.holds("b.md") })
	h.write("sub/deep/d.md", "# Delta\n\ndelta walrus\n")
	step("a new folder with a file", h.finds("walrus", "sub/deep/d.md"))
	if err := os.Rename(h.path("sub"), h.path("moved")); err != nil {
		t.Fatal(err)
	}
	step("a renamed folder", func() bool { return slices.Equal(h.find("walrus"), []string{"moved/deep/d.md"}) })
	h.write("moved/deep/e.md", "# Epsilon\n\nepsilon otter\n")
	step("a file in the renamed folder", h.finds("otter", "moved/deep/e.md"))
	if err := os.RemoveAll(h.path("moved")); err != nil {
		t.Fatal(err)
	}
	step("a deleted folder", func() bool { return len(h.find("walrus")) == 0 && len(h.find("otter")) == 0 })
	h.write(".gitignore", "build/\n")
	h.write("build/out.md", "# Out\n\ngenerated ferret\n")
	h.write("marker.md", "# Marker\n\nmarker heron\n")
	step("an ignored folder's files, then a marker", h.finds("heron", "marker.md"))
	if got := h.find("ferret"); len(got) != 0 {
		t.Errorf("a file in an ignored folder was indexed: %v", got)
	}
	if !h.holds("keep/k.md") {
		t.Error("an untouched file was lost")
	}
	slices.Sort(took)
	t.Logf("save to searchable over %d changes: median %s, max %s", len(took), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	st := h.ts.Freshness().States()
	if len(st) != 1 || !st[0].Watching || st[0].SyncedAt == "" {
		t.Errorf("freshness = %+v, want the folder watched and in step", st)
	}
}

// TestWatchGitCheckout: a checkout that rewrites 500 files is written as
// one sync, one transaction. Reading events is held while git runs, as a
// busy machine would, so that the batch does not depend on timing.
func TestWatchGitCheckout(t *testing.T) {
	git, err := exec.LookPath("git")
	testenv.Need(t, err == nil, "git is not on PATH")
	h := newHarness(t)
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = h.dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	const n = 500
	run("init", "-q", "-b", "one")
	for i := range n {
		h.write(fmt.Sprintf("pkg%d/f%03d.md", i%10, i), fmt.Sprintf("# File %d\n\nfirst version aardvark %d\n", i, i))
	}
	run("add", ".")
	run("commit", "-qm", "one")
	run("checkout", "-qb", "two")
	for i := range n {
		h.write(fmt.Sprintf("pkg%d/f%03d.md", i%10, i), fmt.Sprintf("# File %d\n\nsecond version bison %d\n", i, i))
	}
	run("commit", "-qam", "two")
	run("checkout", "-q", "one")

	hold := make(chan struct{}, 1) // full: the watch reads no event
	h.start(Options{Debounce: DefaultDebounce, beforeRead: func() { hold <- struct{}{}; <-hold }})
	if got := len(h.find("aardvark")); got != n {
		t.Fatalf("after the start %d files say aardvark, want %d", got, n)
	}
	before := len(h.synced())
	h.st.mu.Lock()
	h.st.applies = nil
	h.st.mu.Unlock()

	hold <- struct{}{}
	run("checkout", "-q", "two")
	<-hold
	h.waitFor("a git checkout of 500 files", func() bool { return len(h.find("bison")) == n && len(h.find("aardvark")) == 0 })
	var writes []Synced
	for _, s := range h.synced()[before:] {
		if s.Report.Added+s.Report.Updated+s.Report.Removed > 0 {
			writes = append(writes, s)
		}
	}
	if len(writes) != 1 || writes[0].Report.Updated != n {
		var got []string
		for _, s := range writes {
			got = append(got, fmt.Sprintf("%d paths: %d updated", len(s.Paths), s.Report.Updated))
		}
		t.Fatalf("the checkout was written by %d syncs (%s), want 1 updating %d files", len(writes), strings.Join(got, "; "), n)
	}
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	if len(h.st.applies) != 1 || h.st.applies[0] != n {
		t.Errorf("the checkout took %d transactions %v, want one of %d sources", len(h.st.applies), h.st.applies, n)
	}
}

// TestWatchCatchesUpAfterRestart: what changed while no watch ran is
// written by the next watch's first sync, by content hash.
func TestWatchCatchesUpAfterRestart(t *testing.T) {
	h := newHarness(t)
	h.write("a.md", "# A\n\nalpha\n")
	h.write("b.md", "# B\n\nbeta\n")
	h.write("c.md", "# C\n\ngamma\n")
	h.start(Options{})
	h.stop()
	h.write("a.md", "# A\n\nalpha changed while stopped\n")
	if err := os.Remove(h.path("b.md")); err != nil {
		t.Fatal(err)
	}
	h.write("d.md", "# D\n\ndelta added while stopped\n")
	h.mu.Lock()
	h.syncs = nil
	h.mu.Unlock()
	h.start(Options{})
	var start Synced
	for _, s := range h.synced() {
		if s.Why == "start" {
			start = s
		}
	}
	if r := start.Report; r.Added != 1 || r.Updated != 1 || r.Removed != 1 || r.Unchanged != 1 {
		t.Errorf("the catch-up wrote %+v, want 1 added, 1 updated, 1 removed, 1 unchanged", r)
	}
	if !slices.Equal(h.find("stopped"), []string{"a.md", "d.md"}) || h.holds("b.md") {
		t.Errorf("after the restart: 'stopped' finds %v, b.md held %v", h.find("stopped"), h.holds("b.md"))
	}
}

// lossy is the real event source with a switch that drops its events and
// a way to send an error, as a kernel that lost events does.
type lossy struct {
	events
	mu   sync.Mutex
	drop bool
	lost []string // the paths of the events dropped
	out  chan fsnotify.Event
	errs chan error
}

func newLossy(real events) *lossy {
	l := &lossy{events: real, out: make(chan fsnotify.Event), errs: make(chan error)}
	go func() {
		for e := range real.Events() {
			l.mu.Lock()
			drop := l.drop
			if drop {
				l.lost = append(l.lost, e.Name)
			}
			l.mu.Unlock()
			if !drop {
				l.out <- e
			}
		}
		close(l.out)
	}()
	go func() {
		for err := range real.Errors() {
			l.errs <- err
		}
	}()
	return l
}

func (l *lossy) Events() <-chan fsnotify.Event { return l.out }
func (l *lossy) Errors() <-chan error          { return l.errs }

// dropped reports whether an event for a file or folder named name was
// dropped (by name: the watch may see the folder by its real path).
func (l *lossy) dropped(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.lost, func(p string) bool { return filepath.Base(p) == name })
}

func (l *lossy) dropping(on bool) {
	l.mu.Lock()
	l.drop = on
	l.mu.Unlock()
}

// TestWatchHealsLostEvents: events the event source lost, and said so
// (fsnotify.ErrEventOverflow), are healed by a rescan, and the user is
// told.
func TestWatchHealsLostEvents(t *testing.T) {
	h := newHarness(t)
	h.write("a.md", "# A\n\nalpha\n")
	var src *lossy
	h.start(Options{newWatcher: func() (events, error) {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, err
		}
		src = newLossy(fsWatcher{w})
		return src, nil
	}})
	src.dropping(true)
	h.write("lost.md", "# Lost\n\nnobody saw this pelican\n")
	if err := os.Remove(h.path("a.md")); err != nil {
		t.Fatal(err)
	}
	h.write("newdir/n.md", "# N\n\nin a folder created unseen\n")
	// The kernel queues events in order: once the folder's creation is
	// dropped, so were the events before it. Turning the drop off sooner
	// lets late events through, and they, not the rescan, would heal.
	h.waitFor("the events to be lost", func() bool { return src.dropped("newdir") })
	src.dropping(false)
	src.errs <- fsnotify.ErrEventOverflow
	h.waitFor("changes whose events were lost", func() bool { return slices.Equal(h.find("pelican"), []string{"lost.md"}) && !h.holds("a.md") })
	for _, s := range h.synced() {
		if s.Why != "start" && s.Why != "overflow" {
			t.Errorf("a sync for %q: only the overflow's rescan may heal lost events", s.Why)
		}
	}
	h.waitFor("the overflow's sync to be reported", h.syncedFor("overflow"))
	if st := h.ts.Freshness().States(); len(st) != 1 || !strings.Contains(st[0].Notice, "events were lost") {
		t.Errorf("the user was not told: %+v", st)
	}
	// The folder created while events were lost is watched now.
	h.write("newdir/m.md", "# M\n\nafter the rescan a marmot\n")
	h.waitFor("a file in a folder made while events were lost", h.finds("marmot", "newdir/m.md"))
}

// TestWatchRealQueueOverflow overflows the kernel's event queue for real:
// while the watch reads nothing, more files are written than
// fs.inotify.max_queued_events holds; the kernel drops the rest, fsnotify
// reports it, and a rescan indexes every file.
func TestWatchRealQueueOverflow(t *testing.T) {
	testenv.Short(t, "writes more files than the kernel's event queue holds (16,000 by default)")
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	testenv.Platform(t, err == nil, "no inotify (Linux only)")
	var limit int
	fmt.Sscan(string(data), &limit)
	testenv.Need(t, limit > 0 && limit <= 65536, fmt.Sprintf("max_queued_events is %d: too many files to write to overflow it", limit))
	h := newHarness(t)
	for i := range 50 {
		if err := os.Mkdir(h.path(fmt.Sprintf("d%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hold := make(chan struct{}, 1) // full: the watch reads no event
	h.start(Options{beforeRead: func() { hold <- struct{}{}; <-hold }})
	hold <- struct{}{}
	n := limit + 100 // a create and a write each: twice the queue
	for i := range n {
		h.write(fmt.Sprintf("d%02d/f%05d.md", i%50, i), fmt.Sprintf("# F%d\n\nflood %d\n", i, i))
	}
	<-hold
	h.waitFor(fmt.Sprintf("%d files written past a queue of %d events", n, limit), func() bool {
		st, err := h.st.Stats(context.Background())
		return err == nil && st.Sources == n
	})
	h.waitFor("the kernel's overflow to be noticed", h.syncedFor("overflow"))
}

// TestWatchLimitReached runs the watch in a user namespace whose limit of
// inotify watches is lowered (for that namespace only, so nothing else on
// the machine is touched): folders beyond the limit are not watched, the
// user is told, and their changes are caught up by polling.
func TestWatchLimitReached(t *testing.T) {
	if os.Getenv("SAGASU_WATCH_LIMIT_CHILD") != "" {
		limitChild(t)
		return
	}
	unshare, err := exec.LookPath("unshare")
	testenv.Need(t, err == nil, "unshare is not on PATH")
	probe := exec.Command(unshare, "-U", "-r", "sh", "-c", "echo 3 > /proc/sys/user/max_inotify_watches")
	testenv.Need(t, probe.Run() == nil, "cannot lower the watch limit in a user namespace here")
	cmd := exec.Command(unshare, "-U", "-r", os.Args[0], "-test.run", "^TestWatchLimitReached$", "-test.v")
	cmd.Env = append(os.Environ(), "SAGASU_WATCH_LIMIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWatchLimitReached") {
		t.Fatalf("the watch under a limit of 3 watches failed: %v", err)
	}
}

func limitChild(t *testing.T) {
	if err := os.WriteFile("/proc/sys/user/max_inotify_watches", []byte("3\n"), 0o644); err != nil {
		t.Fatalf("lower the limit in the namespace: %v", err)
	}
	h := newHarness(t)
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		h.write(d+"/x.md", "# X\n\nstart\n")
	}
	h.start(Options{Poll: 200 * time.Millisecond})
	st := h.ts.Freshness().States()
	if len(st) != 1 || !strings.Contains(st[0].Notice, "limit of watched folders") {
		t.Fatalf("the user was not told of the limit: %+v", st)
	}
	// Only folders past the limit change (the walk is lexical: the root, a
	// and b hold the three watches), so no event can bring these changes
	// in and a poll must: a change in a watched folder as well would start
	// a sync that might catch them first.
	for _, d := range []string{"d", "e"} {
		h.write(d+"/y.md", "# Y\n\nnewt "+d+"\n")
	}
	h.waitFor("changes in folders past the watch limit", func() bool { return len(h.find("newt")) == 2 })
	// A sync is reported after its commit, so a query may see it first.
	h.waitFor("the poll's sync to be reported", h.syncedFor("poll"))
}

// TestWatchIgnoresItsOwnIndex: an index kept inside the watched folder
// (--db idx.db) is written by every sync; its files' events must not start
// syncs of their own, or the watch would never rest.
func TestWatchIgnoresItsOwnIndex(t *testing.T) {
	h := newHarness(t)
	h.st.Close()
	h.db = h.path("idx.db")
	h.open()
	h.write("a.md", "# A\n\nalpha\n")
	h.start(Options{Index: h.db})
	h.write("b.md", "# B\n\nbeta\n")
	h.waitFor("a new file beside the index", h.finds("beta", "b.md"))
	h.write("c.md", "# C\n\ngamma\n")
	h.waitFor("another", h.finds("gamma", "c.md"))
	for _, s := range h.synced() {
		for _, p := range s.Paths {
			if strings.HasPrefix(filepath.Base(p), "idx.db") {
				t.Errorf("a sync was started by the index's own file %s", p)
			}
		}
	}
}
