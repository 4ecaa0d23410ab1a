package embedtest

import (
	"os"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// LocalEmbedder returns the base URL (ending in /v1) and the model name of
// the real local embedding model that scripts/test.sh starts
// (scripts/local-models.sh), read from SAGASU_TEST_EMBEDDER_URL and
// SAGASU_TEST_EMBEDDER_MODEL. Without them the test is skipped with a
// message that says how to start it, or fails when CI=true.
func LocalEmbedder(t testing.TB) (baseURL, model string) {
	t.Helper()
	baseURL, model = os.Getenv("SAGASU_TEST_EMBEDDER_URL"), os.Getenv("SAGASU_TEST_EMBEDDER_MODEL")
	testenv.Need(t, baseURL != "" && model != "",
		"no local embedding model: SAGASU_TEST_EMBEDDER_URL and SAGASU_TEST_EMBEDDER_MODEL are not set (make test starts it; by hand: eval \"$(scripts/local-models.sh start | sed s/^SAGASU_/SAGASU_TEST_/)\")")
	return baseURL, model
}
