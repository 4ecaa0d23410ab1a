package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/graph"
)

// streamingModel is an OpenAI-compatible server whose every answer is
// text, streamed a few characters per event.
func streamingModel(t *testing.T, text string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`, text)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < len(text); i += 4 {
			piece := text[i:min(i+4, len(text))]
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", piece)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestAskAndChatStreamTheModelsText: with --stream (the default when
// stdout is a terminal), ask and chat print the model's text to stdout as
// it arrives, each model call's draft on its own line, and then the
// checked answer where it differs (here the claim checker drops an
// unbacked sentence) and its sources; the steps stay off stdout. Without
// --stream only the checked answer is printed; with --json stdout is one
// JSON document and the text goes to stderr.
func TestAskAndChatStreamTheModelsText(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	draft := "Build the site and upload the dist folder [1]. The moon is made of green cheese [1]."
	url := streamingModel(t, draft)
	model := []string{"--llm", "openai", "--llm-url", url, "--llm-model", "m"}

	code, out, errs := sagasu(t, dir, "", append([]string{"ask", "--stream", "how do I deploy?"}, model...)...)
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if !slices.Contains(lines, draft) || !slices.Contains(lines, "(checked answer)") ||
		strings.Index(out, draft) > strings.Index(out, "(checked answer)") ||
		!strings.Contains(out, "(checked answer)\nBuild the site and upload the dist folder [1].\n") ||
		!strings.Contains(out, "[1] docs/guide.md") {
		t.Errorf("ask --stream: stdout %q: want each draft on a line of its own, then the checked answer and its sources", out)
	}
	if strings.Contains(errs, "cheese") {
		t.Errorf("ask --stream: stderr %q: the model's text belongs on stdout", errs)
	}

	code, out, quiet := sagasu(t, dir, "", append([]string{"ask", "how do I deploy?"}, model...)...)
	if code != 0 || strings.Contains(out, "cheese [1]") || strings.Contains(out, "(checked answer)") ||
		!strings.HasPrefix(out, "Build the site and upload the dist folder [1].\n") || strings.Contains(quiet, "cheese") {
		t.Errorf("ask without --stream off a terminal: exit %d, stderr %q, stdout %q: want only the checked answer", code, quiet, out)
	}

	code, out, errs = sagasu(t, dir, "", append([]string{"ask", "--json", "--stream", "how do I deploy?"}, model...)...)
	var rec struct{ Answer string }
	if err := json.Unmarshal([]byte(out), &rec); code != 0 || err != nil || rec.Answer != "Build the site and upload the dist folder [1]." || !strings.Contains(errs, draft) {
		t.Errorf("ask --json --stream: exit %d, stdout %q (%v), stderr %q: want one JSON document and the text on stderr", code, out, err, errs)
	}

	code, out, errs = sagasu(t, dir, "how do I deploy?\n", append([]string{"chat", "--stream"}, model...)...)
	if code != 0 || !strings.Contains(out, draft+"\n") || !strings.Contains(out, "(checked answer)") || strings.Contains(errs, "cheese [1]") {
		t.Errorf("chat --stream: exit %d, stderr %q, stdout %q", code, errs, out)
	}
}

// TestStreamedAnswerIsNotRepeated: when the last draft streamed to stdout
// is the checked answer, only its sources follow it; steps go to the
// steps' writer, and a step ends the streamed line.
func TestStreamedAnswerIsNotRepeated(t *testing.T) {
	var text, steps strings.Builder
	l := &liveView{steps: &steps, text: &text, inline: true, showSteps: true}
	l.delta("A first ")
	l.delta("thought.")
	l.event(graph.Event{Type: graph.TypeThought, Text: "search first"})
	l.delta("Deploy with ")
	l.delta("the CLI [1].")
	l.end()
	res := &react.Result{Answer: "Deploy with the CLI [1].", Citations: []react.Citation{{N: 1, Source: react.SourceRef{URI: "docs/deploy.md"}, Lines: [2]int{3, 4}}}}
	l.answer(&text, res)
	want := "A first thought.\nDeploy with the CLI [1].\n\n[1] docs/deploy.md:3-4\n"
	if text.String() != want {
		t.Errorf("stdout %q, want %q", text.String(), want)
	}
	if !strings.Contains(steps.String(), "search first") || strings.Contains(steps.String(), "Deploy") {
		t.Errorf("steps %q: want the thought only", steps.String())
	}
	// Streamed elsewhere (stderr, with --json): the whole answer.
	var plain strings.Builder
	elsewhere := &liveView{steps: &steps, text: &steps}
	elsewhere.delta("Deploy with the CLI [1].")
	elsewhere.answer(&plain, res)
	if !strings.HasPrefix(plain.String(), "Deploy with the CLI [1].\n\n[1]") {
		t.Errorf("unstreamed answer %q", plain.String())
	}
}

// TestAskTurnsBoundAlike: --max-turns has the bound of sagasu_ask's
// maxTurns, not one of its own.
func TestAskTurnsBoundAlike(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := sagasu(t, dir, "", "ask", "--offline", "--max-turns", "21", "how?")
	if code != exitUsage || !strings.Contains(errs, "1 to 20") {
		t.Errorf("--max-turns 21: exit %d, %q; want a usage error saying 1 to 20", code, errs)
	}
}
