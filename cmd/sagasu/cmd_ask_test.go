package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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

// TestAskAndChatStreamTheModelsText: with --stream (the default on a
// terminal), ask and chat print the model's text to stderr as it arrives,
// in pieces, and the checked answer to stdout.
func TestAskAndChatStreamTheModelsText(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	answer := "Build the site and upload the dist folder [1]."
	url := streamingModel(t, answer)
	model := []string{"--llm", "openai", "--llm-url", url, "--llm-model", "m"}

	code, out, errs := sagasu(t, dir, "", append([]string{"ask", "--stream", "how do I deploy?"}, model...)...)
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, answer) || !strings.HasPrefix(out, "Build the site and upload the dist folder") {
		t.Errorf("ask --stream: stderr %q, stdout %q: want the model's text streamed to stderr and the answer on stdout", errs, out)
	}
	code, out, quiet := sagasu(t, dir, "", append([]string{"ask", "how do I deploy?"}, model...)...)
	if code != 0 || strings.Contains(quiet, answer) || !strings.Contains(out, "dist folder") {
		t.Errorf("ask without --stream off a terminal: exit %d, stderr %q, stdout %q: want nothing streamed", code, quiet, out)
	}

	code, out, errs = sagasu(t, dir, "how do I deploy?\n", append([]string{"chat", "--stream"}, model...)...)
	if code != 0 || !strings.Contains(errs, answer) || !strings.Contains(out, "dist folder") {
		t.Errorf("chat --stream: exit %d, stderr %q, stdout %q", code, errs, out)
	}
}
