// Package pgtest gives tests a PostgreSQL to work in: the server that
// SAGASU_TEST_POSTGRES names (scripts/postgres.sh starts one and prints its
// DSN), and a fresh schema on it for each test.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// Env is the variable that names the test server.
const Env = "SAGASU_TEST_POSTGRES"

// ServerDSN returns the test server's DSN. Without one the test is skipped,
// except under CI=true, where a missing server fails it.
func ServerDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(Env)
	testenv.Need(t, dsn != "", Env+" is not set: run `export "+Env+"=$(scripts/postgres.sh | tail -n1)` to test against PostgreSQL")
	return dsn
}

// FreshDSN returns a DSN for a new, empty schema on the test server
// (the store's ?schema= option), dropped when the test ends.
func FreshDSN(t testing.TB) string {
	t.Helper()
	base := ServerDSN(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "sagasu_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		conn, err := Connect(base)
		if err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	return WithParams(t, base, "schema", schema)
}

// WithParams returns dsn with query parameters set (key, value, ...).
func WithParams(t testing.TB, dsn string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Connect opens a plain connection to the server dsn names, ignoring the
// store's own options, to look behind the store's back.
func Connect(dsn string) (*pgx.Conn, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "schema", "pool_max_conns", "hnsw_ef_search", "hnsw_iterative_scan", "hnsw_max_scan_tuples", "hnsw_m", "hnsw_ef_construction":
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return pgx.Connect(context.Background(), u.String())
}
