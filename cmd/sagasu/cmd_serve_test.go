package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeRefusesOpenAddressWithoutToken(t *testing.T) {
	var stdout, stderr bytes.Buffer
	db := filepath.Join(t.TempDir(), "index.db")
	code := run(context.Background(), []string{"--db", db, "serve", "--listen", "0.0.0.0:0"}, strings.NewReader(""), &stdout, &stderr, nil)
	if code != exitUsage || !strings.Contains(stderr.String(), "--token") {
		t.Errorf("serve on every interface without a token: exit %d, %q; want exit %d naming --token", code, stderr.String(), exitUsage)
	}
}
