package web

import (
	"net/http"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/embed/embedtest"
)

// TestPageSearchesHybridWhenAnEmbedderIsPinned: the page's search box
// sends no mode unless one is chosen ("default"), and over an index with an
// embedder pinned that searches hybrid, as every other face does
// (app.TestEveryFaceSearchesHybridWhenAnEmbedderIsPinned); over an index
// without one, by keywords.
func TestPageSearchesHybridWhenAnEmbedderIsPinned(t *testing.T) {
	srv := embedtest.NewServer(t, embedtest.OpenAI(t, 8, nil))
	for _, tc := range []struct {
		name string
		emb  app.EmbedderConfig
		ask  string // the mode the page sends
		want string
	}{
		{"embedder pinned, default", app.EmbedderConfig{Driver: "openai", URL: srv.URL + "/v1", Model: "m"}, "", "hybrid"},
		{"embedder pinned, keyword chosen", app.EmbedderConfig{Driver: "openai", URL: srv.URL + "/v1", Model: "m"}, "keyword", "keyword"},
		{"no embedder, default", app.EmbedderConfig{}, "", "keyword"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureWith(t, "", map[string]string{"Keys": docs["Keys"]}, tc.emb)
			var res struct {
				Mode    string
				Results []searchResult
			}
			body := map[string]any{"query": "rotate keys"}
			if tc.ask != "" {
				body["mode"] = tc.ask
			}
			if code := f.call(t, "POST", "/api/search", body, &res); code != http.StatusOK || len(res.Results) == 0 {
				t.Fatalf("search: %d, %d results", code, len(res.Results))
			}
			if res.Mode != tc.want {
				t.Errorf("the page searched in %q, want %s", res.Mode, tc.want)
			}
		})
	}
}
