package reacteval

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
)

func TestLoadRejectsBadSets(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not json":     `{"questions": [`,
		"unknown":      `{"questions": [{"id": "a", "question": "q", "pages": ["a.md"], "facts": ["x"], "extra": 1}]}`,
		"no questions": `{"questions": []}`,
		"duplicate":    `{"questions": [{"id": "a", "question": "q", "pages": ["a.md"], "facts": ["x"]}, {"id": "a", "question": "q", "pages": ["a.md"], "facts": ["x"]}]}`,
		"no facts":     `{"questions": [{"id": "a", "question": "q", "pages": ["a.md"], "facts": []}]}`,
		"no pages":     `{"questions": [{"id": "a", "question": "q", "facts": ["x"]}]}`,
		"empty":        `{"questions": [{"id": "a", "question": " ", "pages": ["a.md"], "facts": ["x"]}]}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v; want an error naming the file", name, err)
		}
	}
	for _, f := range []string{"vitepress.json", "vitepress-holdout.json"} {
		if _, err := Load(filepath.Join("..", "..", "..", "..", "testdata", "ask", f)); err != nil {
			t.Errorf("the committed set %s: %v", f, err)
		}
	}
}

// canned answers every question with a fixed answer and citation.
type canned map[string]*react.Result

func (c canned) Ask(_ context.Context, q string, _ []react.Turn) (*react.Result, error) {
	return c[q], nil
}

// recorder answers each question with its number and keeps the history
// each question was asked after.
type recorder struct{ asked map[string][]react.Turn }

func (r *recorder) Ask(_ context.Context, q string, history []react.Turn) (*react.Result, error) {
	r.asked[q] = history
	return &react.Result{Answer: "answer to " + q}, nil
}

func TestEvaluateAsksAFollowUpAfterItsConversation(t *testing.T) {
	set := QuestionSet{Name: "s", Questions: []Question{
		{ID: "f", Question: "and its length?", After: []string{"first?", "second?"}, Pages: []string{"a.md"}, Facts: []string{"answer to and"}},
	}}
	r := &recorder{asked: map[string][]react.Turn{}}
	rep, err := Evaluate(context.Background(), r, set)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]react.Turn{
		"first?":          nil,
		"second?":         {{Question: "first?", Answer: "answer to first?"}},
		"and its length?": {{Question: "first?", Answer: "answer to first?"}, {Question: "second?", Answer: "answer to second?"}},
	}
	if !reflect.DeepEqual(r.asked, want) {
		t.Errorf("asked %+v, want %+v", r.asked, want)
	}
	// Only the follow-up is scored.
	if rep.Questions != 1 || len(rep.Scores) != 1 || rep.Scores[0].Answer != "answer to and its length?" || rep.WithFact != 1 {
		t.Errorf("report %+v", rep)
	}
	bad := QuestionSet{Name: "s", Questions: []Question{{ID: "x", Question: "q", After: []string{" "}, Pages: []string{"a.md"}, Facts: []string{"f"}}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "empty question in after") {
		t.Errorf("an empty earlier question: %v", err)
	}
}

func TestEvaluateScoresFactsAndPages(t *testing.T) {
	cite := func(uri string) []react.Citation {
		return []react.Citation{{N: 1, ChunkID: 1, Source: react.SourceRef{URI: uri}}}
	}
	set := QuestionSet{Name: "s", Questions: []Question{
		{ID: "both", Question: "q1", Pages: []string{"a.md"}, Facts: []string{"cleanUrls", "true"}},
		{ID: "fact-only", Question: "q2", Pages: []string{"a.md"}, Facts: []string{"en-US"}},
		{ID: "half-fact", Question: "q3", Pages: []string{"b.md"}, Facts: []string{"xylophone", "zebra"}},
	}}
	a := canned{
		"q1": {Answer: "Set `cleanUrls` to TRUE. [1]", Citations: cite("a.md"), Claims: []react.Claim{{Checked: true, Supported: true}}},
		"q2": {Answer: "It is en-us. [1]", Citations: cite("c.md"), Claims: []react.Claim{{Checked: true, Supported: false}}},
		"q3": {Answer: "a xylophone [1]", Citations: cite("b.md")},
	}
	rep, err := Evaluate(context.Background(), a, set)
	if err != nil {
		t.Fatal(err)
	}
	if rep.WithFact != 2 || rep.WithPage != 2 || rep.Sentences != 2 || rep.Supported != 1 || rep.Questions != 3 {
		t.Errorf("report %+v", rep)
	}
	want := map[string][2]bool{"both": {true, true}, "fact-only": {true, false}, "half-fact": {false, true}}
	for _, s := range rep.Scores {
		if w := want[s.ID]; s.Fact != w[0] || s.Page != w[1] {
			t.Errorf("%s: fact %v page %v, want %v", s.ID, s.Fact, s.Page, w)
		}
	}
}
