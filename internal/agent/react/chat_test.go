package react

import (
	"testing"

	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
)

// TestModeNamesHowTheAgentAnswers: offline without a model, the model as
// driver/model with one.
func TestModeNamesHowTheAgentAnswers(t *testing.T) {
	a := New(nil, Options{})
	if got := a.Mode(); got != "offline" {
		t.Errorf("without a model: %q, want offline", got)
	}
	if got := a.WithModel(LLMOptions{Model: llmtest.New()}).Mode(); got != "llmtest/scripted" {
		t.Errorf("with a model: %q, want llmtest/scripted", got)
	}
}
