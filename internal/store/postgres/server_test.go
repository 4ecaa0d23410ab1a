package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/migrate"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/store/storetest"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// pgBin is where Debian's PostgreSQL 15 (scripts/postgres.sh) keeps its programs.
const pgBin = "/usr/lib/postgresql/15/bin"

// server is a PostgreSQL of a test's own, which the test may stop, restart
// or run without pgvector; the shared test server is never touched.
type server struct {
	t         *testing.T
	dir, bin  string
	data, log string
	port      int
}

// privateServer initialises and starts a throwaway cluster on a free
// loopback port. Without pgvector it runs from a copy of the programs whose
// share folder lacks the extension, which is what a server without
// pgvector installed looks like.
func privateServer(t *testing.T, pgvector bool) *server {
	t.Helper()
	testDSN(t) // skips (or fails in CI) like every other PostgreSQL test
	testenv.Platform(t, os.Geteuid() == 0, "a private PostgreSQL runs as the postgres user: run the tests as root (as scripts/postgres.sh is)")
	_, err := os.Stat(filepath.Join(pgBin, "initdb"))
	testenv.Need(t, err == nil, "no PostgreSQL 15 programs in "+pgBin+": run scripts/postgres.sh")
	dir, err := os.MkdirTemp("", "sagasu-pg-")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, dir: dir, bin: pgBin, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "postgres.log")}
	t.Cleanup(func() {
		s.ctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if !pgvector {
		s.bin = s.relocate()
	}
	if err := os.Mkdir(s.data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.run("chown", "postgres", s.data, s.log)
	s.asPostgres(filepath.Join(s.bin, "initdb"), "-D", s.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "-N")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = ''\nfsync = off\n", s.port)
	f, err := os.OpenFile(filepath.Join(s.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(conf)
	f.Close()
	s.start()
	conn, err := pgx.Connect(context.Background(), s.dsn("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE DATABASE sagasu`); err != nil {
		t.Fatal(err)
	}
	return s
}

// relocate copies the server's programs into a tree whose share folder
// holds every extension but pgvector; PostgreSQL finds its share folder
// relative to where its programs are.
func (s *server) relocate() string {
	root := filepath.Join(s.dir, "root")
	bin := filepath.Join(root, "lib/postgresql/15/bin")
	ext := filepath.Join(root, "share/postgresql/15/extension")
	for _, d := range []string{bin, ext} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			s.t.Fatal(err)
		}
	}
	for _, p := range []string{"postgres", "initdb", "pg_ctl"} {
		b, err := os.ReadFile(filepath.Join(pgBin, p))
		if err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, p), b, 0o755); err != nil {
			s.t.Fatal(err)
		}
	}
	link := func(from, to string) {
		if err := os.Symlink(from, to); err != nil {
			s.t.Fatal(err)
		}
	}
	link(filepath.Join(pgBin, "../lib"), filepath.Join(root, "lib/postgresql/15/lib"))
	share, _ := os.ReadDir("/usr/share/postgresql/15")
	for _, e := range share {
		if e.Name() != "extension" {
			link(filepath.Join("/usr/share/postgresql/15", e.Name()), filepath.Join(root, "share/postgresql/15", e.Name()))
		}
	}
	exts, _ := os.ReadDir("/usr/share/postgresql/15/extension")
	for _, e := range exts {
		if !strings.HasPrefix(e.Name(), "vector") {
			link(filepath.Join("/usr/share/postgresql/15/extension", e.Name()), filepath.Join(ext, e.Name()))
		}
	}
	return bin
}

func (s *server) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=10", s.port, db)
}

func (s *server) run(name string, args ...string) {
	s.t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		s.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func (s *server) asPostgres(args ...string) {
	s.t.Helper()
	s.run("runuser", append([]string{"-u", "postgres", "--"}, args...)...)
}

func (s *server) ctl(args ...string) {
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(s.bin, "pg_ctl"), "-D", s.data, "-w"}, args...)...)
	_ = cmd.Run()
}

func (s *server) start() {
	s.t.Helper()
	s.asPostgres(filepath.Join(s.bin, "pg_ctl"), "-D", s.data, "-l", s.log, "-w", "start")
}

// crashRestart kills the server as a crash would, then starts it again.
func (s *server) crashRestart() {
	s.t.Helper()
	s.asPostgres(filepath.Join(s.bin, "pg_ctl"), "-D", s.data, "-m", "immediate", "-w", "stop")
	s.start()
}

func TestPgvectorMissing(t *testing.T) {
	srv := privateServer(t, false)
	_, err := openDriver(context.Background(), srv.dsn("sagasu"), Options{Create: true})
	if err == nil || !strings.Contains(err.Error(), "pgvector") || !strings.Contains(err.Error(), "apt-get install postgresql-NN-pgvector") {
		t.Fatalf("Open on a server without pgvector = %v, want a message saying how to install it", err)
	}
	t.Log(err)
	conn, err := pgx.Connect(context.Background(), srv.dsn("sagasu"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var schemas int
	_ = conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname = 'sagasu'`).Scan(&schemas)
	if schemas != 0 {
		t.Errorf("a failed Open left a schema behind")
	}
}

// corpus is n generated documents of a few paragraphs each.
func corpus(n int) []doc.Document {
	words := strings.Fields("river stone cloud lantern harbor meadow copper violet signal orchard 設定 ファイル")
	var docs []doc.Document
	for i := range n {
		var b strings.Builder
		for p := range 3 {
			for w := range 12 {
				b.WriteString(words[(i*5+p*3+w*7)%len(words)])
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "note %d.\n\n", i%17)
		}
		docs = append(docs, doc.Document{URI: fmt.Sprintf("notes/%03d.txt", i), Type: doc.TypeFile, Format: doc.FormatText,
			Title: fmt.Sprintf("Note %d", i), Content: b.String()})
	}
	return docs
}

func TestServerRestartMidIndexThenRerun(t *testing.T) {
	ctx := context.Background()
	srv := privateServer(t, true)
	dsn := srv.dsn("sagasu")
	st, err := openDriver(ctx, dsn, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	docs := corpus(120)
	opt := index.Options{Chunk: chunk.Options{MaxTokens: 512}, BatchBytes: 2000}

	// The third write transaction loses its server between sending its
	// rows and committing them.
	writes := 0
	st.beforeCommit = func() {
		if writes++; writes == 3 {
			srv.crashRestart()
		}
	}
	_, err = index.New(store.New(st), opt).Documents(ctx, docs)
	if err == nil || !strings.Contains(err.Error(), "lost the connection") || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("index run across a server restart = %v, want an error saying the connection was lost (store.ErrUnavailable)", err)
	}
	t.Log(err)
	st.beforeCommit = nil
	// Only whole batches are there: every source has all its chunks.
	srcs, err := st.Sources(ctx, store.ListOptions{})
	if err != nil {
		t.Fatalf("after the restart the store does not recover: %v", err)
	}
	if len(srcs) == 0 || len(srcs) >= len(docs) {
		t.Fatalf("%d sources after the failed run, want the first batches only", len(srcs))
	}
	for _, src := range srcs {
		if chunks, _ := st.Chunks(ctx, src.ID); len(chunks) != src.Chunks || src.Chunks == 0 {
			t.Errorf("%s: %d of %d chunks", src.URI, len(chunks), src.Chunks)
		}
	}

	// Running it again finishes the job, skipping what is there.
	rep, err := index.New(store.New(st), opt).Documents(ctx, docs)
	if err != nil {
		t.Fatalf("re-run: %v", err)
	}
	if rep.Unchanged != len(srcs) || rep.Added != len(docs)-len(srcs) {
		t.Errorf("re-run: %d unchanged, %d added; want %d and %d", rep.Unchanged, rep.Added, len(srcs), len(docs)-len(srcs))
	}
	// And the index is the one a run without faults builds.
	ref, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ref.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if _, err := index.New(ref, opt).Documents(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// The indexer writes batches from two goroutines, so chunk IDs (which
	// order hits of equal score) depend on timing: compare every hit, by
	// score, source and chunk.
	for _, q := range []string{"river stone", "設定ファイル", "note 3", "violet orchard signal"} {
		got, want := byScore(named(t, store.New(st), kw(t, store.New(st), q, 1000))), byScore(named(t, ref, kw(t, ref, q, 1000)))
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%q after restart and re-run:\n%v\nwant (SQLite, no faults):\n%v", q, got, want)
		}
	}

	// With the server down: clear errors, from an open store and from Open.
	srv.ctl("stop", "-m", "fast")
	_, err = st.KeywordSearch(ctx, storetest.Terms("river"), 5, store.Filter{})
	if err == nil || !strings.Contains(err.Error(), "PostgreSQL at 127.0.0.1") {
		t.Errorf("search with the server down = %v", err)
	}
	t.Log(err)
	if err := store.New(st).Replace(ctx, nil); err != nil {
		t.Errorf("an empty Replace needs no server: %v", err)
	}
	_, err = openDriver(ctx, dsn, Options{})
	if err == nil || !strings.Contains(err.Error(), "is the server running") {
		t.Errorf("Open with the server down = %v", err)
	}
	t.Log(err)
}

// byScore sorts results by score, then source and chunk.
func byScore(rs []migrate.Result) []migrate.Result {
	slices.SortFunc(rs, func(a, b migrate.Result) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.URI, b.URI), cmp.Compare(a.Chunk, b.Chunk))
	})
	return rs
}
