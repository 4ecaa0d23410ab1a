package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

// TestAskAnswersWithCitationsWithinTheBudget: sagasu_ask answers from the
// index with citations that point at its chunks, fits its budget, and
// refuses an empty question.
func TestAskAnswersWithCitationsWithinTheBudget(t *testing.T) {
	var srv *Server
	f := newFixture(t, Options{Ask: func(ctx context.Context, q string, o AskOptions) (*react.Result, error) {
		fns, err := srv.tools.Functions()
		if err != nil {
			return nil, err
		}
		return react.New(fns, react.Options{}).Answer(ctx, q)
	}})
	srv = f.srv
	f.add(512,
		doc.Document{URI: "deploy.md", Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Deploy",
			Content: "# Deploy\n\n## Output directory\n\nThe build writes the site to `.vitepress/dist`. Upload that folder to any static host.\n"},
		doc.Document{URI: "theme.md", Type: doc.TypeFile, Format: doc.FormatMarkdown, Title: "Theme",
			Content: "# Theme\n\nA custom theme exports a Layout component.\n"})
	sc, n := f.ok(ToolAsk, map[string]any{"question": "Where does the build write the site?", "includeTrace": true})
	answer, _ := sc["answer"].(string)
	if !strings.Contains(answer, ".vitepress/dist") || !strings.Contains(answer, "[1]") {
		t.Errorf("answer %q", answer)
	}
	cites, _ := sc["citations"].([]any)
	if len(cites) != 1 {
		t.Fatalf("citations %v", sc["citations"])
	}
	c := cites[0].(map[string]any)
	if src := c["source"].(map[string]any); src["uri"] != "deploy.md" {
		t.Errorf("cited %v", src)
	}
	if trace, _ := sc["trace"].([]any); len(trace) < 3 {
		t.Errorf("trace %v", sc["trace"])
	}
	checkBudget(t, ToolAsk, sc, n, f.srv.limits.Detailed)
	f.fails(ToolAsk, map[string]any{"question": ""}, "question")
}
