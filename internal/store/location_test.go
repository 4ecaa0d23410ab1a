package store

import (
	"strings"
	"testing"
)

// TestRedact: no form of a connection string shows its secret, and each
// still shows which server it names.
func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, secret, keep string }{
		{"postgres://u:s3cret@db.example:5432/x", "s3cret", "db.example:5432"},
		{"postgres://u@db.example/x?password=s3cret", "s3cret", "db.example"},
		{"postgresql://u@db.example/x?sslmode=verify-full&sslpassword=s3cret", "s3cret", "sslmode=verify-full"},
		{"postgres://u@db.example/x?PassWord=s3cret", "s3cret", "db.example"},
		{"host=db.example user=u password=s3cret dbname=x", "s3cret", "host=db.example"},
		{"host=db.example password='s3 cret' dbname=x", "s3 cret", "dbname=x"},
		{"host=db.example sslpassword = s3cret", "s3cret", "host=db.example"},
		{"qdrant://q.example:6334/p?api_key=s3cret", "s3cret", "q.example:6334"},
		{"qdrant://s3cret@q.example:6334/p", "s3cret", "q.example:6334"},
		{"postgres://u:s3cret@db.example:5432/x?%zz", "s3cret", "postgres://"},
	} {
		got := Redact(tc.in)
		if strings.Contains(got, tc.secret) {
			t.Errorf("Redact(%q) = %q: shows the secret", tc.in, got)
		}
		if !strings.Contains(got, tc.keep) {
			t.Errorf("Redact(%q) = %q: lost %q", tc.in, got, tc.keep)
		}
	}
	for _, plain := range []string{".sagasu/sagasu.db", "/home/u/pass/index.db", "postgres://u@db.example/x?sslmode=require"} {
		if got := Redact(plain); got != plain {
			t.Errorf("Redact(%q) = %q: changed a location with no secret", plain, got)
		}
	}
}
