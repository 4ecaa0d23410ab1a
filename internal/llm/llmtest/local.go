package llmtest

import (
	"os"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// LocalStall is how long a test waits for any progress (a piece of the
// answer, or the server's prompt progress) from the local model before it
// fails a call; see openai.Config.Stall. A busy machine only makes the
// pauses longer, and the whole call's length is no test's concern.
const LocalStall = 3 * time.Minute

// LocalModel returns the base URL (ending in /v1) and the model name of the
// real local chat model that scripts/test.sh starts
// (scripts/local-models.sh), read from SAGASU_TEST_LLM_URL and
// SAGASU_TEST_LLM_MODEL. Without them the test is skipped with a message
// that says how to start the model, or fails when CI=true: CI installs and
// starts it, so a missing model there is a broken setup, not a skip.
func LocalModel(t testing.TB) (baseURL, model string) {
	t.Helper()
	baseURL, model = os.Getenv("SAGASU_TEST_LLM_URL"), os.Getenv("SAGASU_TEST_LLM_MODEL")
	testenv.Need(t, baseURL != "" && model != "",
		"no local chat model: SAGASU_TEST_LLM_URL and SAGASU_TEST_LLM_MODEL are not set (make test starts it; by hand: eval \"$(scripts/local-models.sh start | sed s/^SAGASU_/SAGASU_TEST_/)\")")
	return baseURL, model
}

// CoderModel returns the base URL and model name of the 1.5B chat model
// (Qwen2.5-Coder-1.5B-Instruct, scripts/coder-model.sh) that
// scripts/test.sh starts, read from SAGASU_TEST_CODER_URL and
// SAGASU_TEST_CODER_MODEL; skipped without them, failed under CI=true.
func CoderModel(t testing.TB) (baseURL, model string) {
	t.Helper()
	baseURL, model = os.Getenv("SAGASU_TEST_CODER_URL"), os.Getenv("SAGASU_TEST_CODER_MODEL")
	testenv.Need(t, baseURL != "" && model != "",
		"no 1.5B chat model: SAGASU_TEST_CODER_URL and SAGASU_TEST_CODER_MODEL are not set (make test starts it; by hand: scripts/coder-model.sh start, then export its SAGASU_LLM_URL and SAGASU_LLM_MODEL under these names)")
	return baseURL, model
}
