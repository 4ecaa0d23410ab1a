package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
)

// TestCacheSummaryLinkNotRead: a clone that ships its agent cache's
// summary as a link to the user's key does not get the key read out by
// sagasu_read_cache.
func TestCacheSummaryLinkNotRead(t *testing.T) {
	ts, _ := newToolset(t)
	key := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(key, []byte("PRIVATE sk-must-not-read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(ts.Cache().Dir(), agentcache.SummaryFile)
	if err := os.MkdirAll(filepath.Dir(summary), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Remove(summary)
	if err := os.Symlink(key, summary); err != nil {
		t.Fatal(err)
	}
	res, err := ts.ReadCache(context.Background(), ReadCacheInput{Summary: true})
	if err == nil && strings.Contains(res.Summary, "sk-must-not-read") {
		t.Fatalf("the summary read the key through a link: %q", res.Summary)
	}
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("read_cache with a linked summary: %v, want a refusal naming the link", err)
	}
}
