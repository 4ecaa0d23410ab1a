package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/store/postgres/pgtest"
)

// migrateCmd runs `sagasu migrate ...` in dir. It builds the root command
// itself so the test also runs where main.go does not list migrate yet.
func migrateCmd(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), environ: []string{"HOME=" + dir}}
	root := newRootCmd(g)
	if c, _, err := root.Find([]string{"migrate"}); err != nil || c == root {
		root.AddCommand(newMigrateCmd(g))
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	root.SetArgs(append([]string{"migrate"}, args...))
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// hitsOf names a query's results by source, heading and score: what a user
// compares between two stores (chunk IDs are each store's own).
func hitsOf(t *testing.T, dir, db, q string) []string {
	t.Helper()
	var out []string
	for _, r := range query(t, dir, q, "--db", db).Results {
		out = append(out, fmt.Sprintf("%s | %s | %.9f", r.Source.URI, r.Heading, r.Score))
	}
	if len(out) == 0 {
		t.Fatalf("query %q on %s found nothing", q, db)
	}
	return out
}

func TestMigrateSQLiteToSQLite(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs", "--db", "a.db")
	out, err := migrateCmd(t, dir, "--from", "a.db", "--to", "b.db")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "3 copied") || !strings.Contains(out, "identical results") {
		t.Errorf("migrate printed:\n%s", out)
	}
	for _, q := range []string{"dynamic routes", "設定ファイル", "deploying"} {
		if a, b := hitsOf(t, dir, "a.db", q), hitsOf(t, dir, "b.db", q); strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("%q differs after migrate:\n%v\n%v", q, a, b)
		}
	}
	// Again: nothing to copy.
	out, err = migrateCmd(t, dir, "--from", "a.db", "--to", "b.db", "--json")
	if err != nil || !strings.Contains(out, `"skipped": 3`) {
		t.Errorf("second migrate: %v\n%s", err, out)
	}
}

func TestMigrateBadInput(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs", "--db", "a.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "a.db"}, "--from and --to"},
		{[]string{"--from", "a.db", "--to", "a.db"}, "same index"},
		{[]string{"--from", "missing.db", "--to", "b.db"}, "sagasu index"},
		{[]string{"--from", "a.db", "--to", "postgres://nobody@127.0.0.1:1/x?connect_timeout=5"}, "is the server running"},
		{[]string{"--from", "a.db", "--to", "postgres://[broken"}, "postgres://user"},
	} {
		_, err := migrateCmd(t, dir, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("migrate %v = %v, want an error mentioning %q", tc.args, err, tc.want)
		}
	}
	if _, err := os.Stat(dir + "/missing.db"); err == nil {
		t.Errorf("a failed migrate created its origin")
	}
}

func TestMigrateThroughPostgres(t *testing.T) {
	pg := pgtest.FreshDSN(t)

	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs", "--db", "a.db")
	if out, err := migrateCmd(t, dir, "--from", "a.db", "--to", pg); err != nil || !strings.Contains(out, "identical results") {
		t.Fatalf("SQLite → PostgreSQL: %v\n%s", err, out)
	}
	if out, err := migrateCmd(t, dir, "--from", pg, "--to", "c.db"); err != nil || !strings.Contains(out, "identical results") {
		t.Fatalf("PostgreSQL → SQLite: %v\n%s", err, out)
	}
	for _, q := range []string{"dynamic routes", "設定ファイル", "deploying"} {
		want := hitsOf(t, dir, "a.db", q)
		for _, db := range []string{pg, "c.db"} {
			if got := hitsOf(t, dir, db, q); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%q on %s:\n%v\nwant\n%v", q, db, got, want)
			}
		}
	}
	// The index in PostgreSQL works for the other commands too.
	if out := mustRun(t, dir, "list", "--db", pg); !strings.Contains(out, "docs/guide.md") {
		t.Errorf("list on PostgreSQL:\n%s", out)
	}
}
