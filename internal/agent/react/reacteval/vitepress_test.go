package reacteval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/testcorpus"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testcorpus.Close()
	os.Exit(code)
}

func answerSet(t *testing.T, file string) Report {
	t.Helper()
	set, err := Load(filepath.Join("..", "..", "..", "..", "testdata", "ask", file))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := tools.New(tools.Options{Engine: testcorpus.VitePress(t)})
	if err != nil {
		t.Fatal(err)
	}
	fns, err := ts.Functions()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate(context.Background(), react.New(fns, react.Options{}), set)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Scores {
		t.Logf("%-20s fact=%-5v page=%-5v %s", s.ID, s.Fact, s.Page, strings.ReplaceAll(s.Answer[:min(len(s.Answer), 160)], "\n", " "))
	}
	t.Logf("offline, %d questions: expected fact %d/%d, expected page cited %d/%d, supported sentences %d/%d, style ok %d/%d, %.0f ms per question",
		rep.Questions, rep.WithFact, rep.Questions, rep.WithPage, rep.Questions, rep.Supported, rep.Sentences, rep.InStyle, rep.Questions, rep.MsPer)
	if rep.Supported != rep.Sentences {
		t.Errorf("%d of %d answer sentences are unsupported after reflection; reflection must drop them", rep.Sentences-rep.Supported, rep.Sentences)
	}
	return rep
}

// TestOfflineAnswersOnTheQuestionSet answers the project's questions
// without a model and scores the answers: the expected facts, a citation of
// an expected page, supported sentences.
func TestOfflineAnswersOnTheQuestionSet(t *testing.T) {
	rep := answerSet(t, "vitepress.json")
	if rep.WithPage*10 < rep.Questions*9 {
		t.Errorf("only %d of %d answers cite an expected page (floor 90%%)", rep.WithPage, rep.Questions)
	}
	if rep.WithFact*10 < rep.Questions*9 {
		t.Errorf("only %d of %d answers contain the expected facts (floor 90%%)", rep.WithFact, rep.Questions)
	}
}

// TestOfflineAnswersOnHeldOutQuestions answers the questions written for
// issue 26 before the answerer was changed (defaults, option names,
// commands), which it was never tuned on. The fact floor is what the
// answerer before issue 26 scored (9 of 18). Since issue 41 an answer
// quotes the one section that answers (before, three sentences from up to
// three sections, which cited an expected page more often: 16 of 18, and
// led with one less often), so the second floor is on the page it leads
// with: 10 of 18 when issue 41 measured it once.
func TestOfflineAnswersOnHeldOutQuestions(t *testing.T) {
	rep := answerSet(t, "vitepress-holdout.json")
	if rep.WithFact < 9 || rep.OnTopic < 10 {
		t.Errorf("held out: facts %d/%d, leading with an expected page %d/%d; below the floors (9 and 10)", rep.WithFact, rep.Questions, rep.OnTopic, rep.Questions)
	}
}
