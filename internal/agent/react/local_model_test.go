package react

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
	"github.com/sagasu-dev/sagasu/internal/llm/openai"
)

// TestLocalModelAnswersVitePressQuestions asks the real local chat model
// (SmolLM2-135M behind llama-server) three questions end to end. Its
// answers' quality is not asserted — a 135M model's is poor — its
// robustness is: each run finishes within max_turns, and every citation
// points to a chunk the run's searches returned.
func TestLocalModelAnswersVitePressQuestions(t *testing.T) {
	base, name := llmtest.LocalModel(t)
	const maxTurns = 4
	a := realModelAgent(t, base, name, maxTurns)
	stopped := 0
	for _, q := range []string{
		"How do I enable the local search provider?",
		"How do I generate a sitemap?",
		"サイトマップを生成するにはどうすればよいですか？",
	} {
		start := time.Now()
		res, err := a.Ask(context.Background(), q, nil)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		checkRun(t, q, res, maxTurns)
		for _, c := range res.Claims {
			if c.Checked && !c.Supported {
				t.Errorf("%q: an unsupported sentence is left in the answer: %q (%s)", q, c.Text, c.Reason)
			}
		}
		if res.Stopped != "" {
			stopped++
		}
		t.Logf("%q: mode %s, %d turns, %d+%d tokens, %.1f s, stopped %q, %d citations; answer %q",
			q, res.Mode, res.Turns, res.Usage.In, res.Usage.Out, time.Since(start).Seconds(), res.Stopped, len(res.Citations), clip.Runes(res.Answer, 160))
	}
	t.Logf("guards ended %d of 3 runs", stopped)
}

// realModelAgent is an agent over the VitePress docs whose model is the
// real server at base. Progress bounds each call, not the clock: on a
// loaded 2-core machine a local model writes a few tokens a second.
func realModelAgent(t *testing.T, base, name string, maxTurns int) *Agent {
	t.Helper()
	model, err := openai.New(openai.Config{BaseURL: base, Model: name, Stall: llmtest.LocalStall})
	if err != nil {
		t.Fatal(err)
	}
	return New(vitepress(t), Options{}).WithModel(LLMOptions{Model: llm.WithRetry(model, llm.RetryOptions{MaxAttempts: 2}),
		MaxTurns: maxTurns, Timeout: time.Hour})
}

// checkRun checks what every real-model run must hold: it kept within
// maxTurns, and each citation points to a passage an observation of the
// run showed. The answer numbers its citations from [1] in order of
// appearance, so a citation's number need not be the one the observation
// gave its passage: the passage's source must be one an observation showed.
func checkRun(t *testing.T, q string, res *Result, maxTurns int) {
	t.Helper()
	if res.Turns > maxTurns {
		t.Errorf("%q: %d turns, more than max_turns %d", q, res.Turns, maxTurns)
	}
	var observed strings.Builder
	for _, ev := range res.Trace {
		if ev.Type == graph.TypeObservation {
			observed.WriteString(ev.Observation)
		}
	}
	for _, c := range res.Citations {
		if !regexp.MustCompile(`\[\d+\] ` + regexp.QuoteMeta(c.Source.URI)).MatchString(observed.String()) {
			t.Errorf("%q: citation [%d] (%s) is not a passage any observation of the run showed", q, c.N, c.Source.URI)
		}
	}
}
