package reacteval

import (
	"context"
	"os"
	"path/filepath"
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

func (c canned) Answer(_ context.Context, q string) (*react.Result, error) { return c[q], nil }

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
