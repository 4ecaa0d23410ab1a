package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// gatedModel is an OpenAI-compatible server that plays Plan-and-Act's
// roles (plan one search, make it, judge it done) and holds every request
// until open is closed; arrived hears each request as it comes.
func gatedModel(t *testing.T) (url string, arrived chan string, open chan struct{}) {
	arrived, open = make(chan string, 100), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model       string   `json:"model"`
			Temperature *float64 `json:"temperature"`
			Tools       []any    `json:"tools"`
			Messages    []struct {
				Content any `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
			t.Errorf("model request %s: %v", body, err)
			return
		}
		arrived <- fmt.Sprint(req.Temperature != nil && *req.Temperature == 0.3)
		select {
		case <-open:
		case <-r.Context().Done():
			return
		}
		var msg string
		switch system := fmt.Sprint(req.Messages[0].Content); {
		case len(req.Tools) > 0:
			msg = `"tool_calls":[{"id":"c1","type":"function","function":{"name":"sagasu_query","arguments":"{\"query\":\"deploy\"}"}}]`
		case strings.Contains(system, "judging"):
			msg = `"content":"{\"decision\":\"done\",\"answer\":\"Upload the dist folder.\"}"`
		default:
			msg = `"content":"{\"plan\":[\"search the knowledge base for deploying\"]}"`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":%q,"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",%s}}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`, req.Model, msg)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", arrived, open
}

// TestAgentToolsStartStopResume: sagasu_agent_start returns the run's ID
// while the run waits on its model (the call does not wait for the run);
// status reads it running; stop stops it; resume continues it with the
// settings it recorded (the temperature given at the start) to its
// answer, which status then reads with the outcome and settings.
func TestAgentToolsStartStopResume(t *testing.T) {
	url, arrived, open := gatedModel(t)
	dir := t.TempDir()
	cfg := app.Defaults()
	cfg.DB = filepath.Join(dir, "index.db")
	cfg.CacheDir = filepath.Join(dir, "cache")
	cfg.LLM = app.LLMConfig{Driver: "openai", URL: url, Model: "m"}
	ctx := context.Background()
	rt, err := app.New(cfg, io.Discard, []string{"OPENAI_API_KEY=sk-test"}).Open(ctx, app.OpenOptions{Create: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	if _, err := rt.Tools.Index(ctx, tools.IndexInput{Text: "# Deploy\n\nBuild the site and upload the dist folder.\n", Title: "Deploy"}, nil); err != nil {
		t.Fatal(err)
	}
	runs := rt.BackgroundRuns(ctx, 2, nil)
	var once sync.Once
	release := func() { once.Do(func() { close(open) }) }
	t.Cleanup(func() { release(); runs.Wait(ctx) })
	f := newFixture(t, Options{Tools: rt.Tools, Agents: testRuns{runs}})

	f.fails(ToolAgentStart, map[string]any{"goal": " "}, "goal")
	f.fails(ToolAgentStatus, map[string]any{"id": "planact-none"}, "no such agent run")

	sc, _ := f.ok(ToolAgentStart, map[string]any{"goal": "how do I deploy?", "settings": map[string]any{"temperature": 0.3, "maxToolCalls": 5}})
	id, _ := sc["id"].(string)
	if id == "" || sc["status"] != "running" {
		t.Fatalf("start: %v", sc)
	}
	if got := <-arrived; got != "true" {
		t.Errorf("the run's first model call did not carry the temperature given")
	}
	// The run is waiting on its model, and the tool call has returned.
	sc, _ = f.ok(ToolAgentStatus, map[string]any{"id": id})
	if sc["running"] != true || sc["status"] != "running" {
		t.Fatalf("status of a run waiting on its model: %v", sc)
	}
	f.fails(ToolAgentResume, map[string]any{"id": id}, "already running")
	f.ok(ToolAgentStop, map[string]any{"id": id})
	runs.Wait(ctx)
	sc, _ = f.ok(ToolAgentStatus, map[string]any{"id": id})
	if out, _ := sc["outcome"].(map[string]any); sc["running"] != false || out["status"] != "stopped" {
		t.Fatalf("status of a stopped run: %v", sc)
	}
	f.fails(ToolAgentStop, map[string]any{"id": id}, "not running")

	release()
	f.ok(ToolAgentResume, map[string]any{"id": id})
	runs.Wait(ctx)
	res, sc, _ := f.call(ToolAgentStatus, map[string]any{"id": id})
	out, _ := sc["outcome"].(map[string]any)
	if res.IsError || out["status"] != "success" || sc["answer"] != "Upload the dist folder." || len(list(sc, "plan")) != 1 {
		t.Fatalf("status of the resumed run: %s", text(res))
	}
	set, _ := sc["settings"].(map[string]any)
	planner, _ := set["planner"].(map[string]any)
	limits, _ := set["limits"].(map[string]any)
	if planner["temperature"] != 0.3 || limits["maxToolCalls"] != float64(5) {
		t.Errorf("recorded settings after the resume: %v", set)
	}
	for len(arrived) > 0 {
		if got := <-arrived; got != "true" {
			t.Errorf("a model call of the resumed run lost the run's temperature")
		}
	}
	if !strings.Contains(text(res), "Upload the dist folder.") {
		t.Errorf("status text: %s", text(res))
	}
}

// testRuns serves the agent tools from app.BackgroundRuns, as sagasu mcp
// does.
type testRuns struct{ *app.BackgroundRuns }

func (r testRuns) StartRun(ctx context.Context, in AgentStartInput) (string, error) {
	opt, err := r.Options(in.Goal, in.MCP, in.Offline, in.Settings)
	if err != nil {
		return "", err
	}
	return r.Start(ctx, opt)
}

func (r testRuns) ResumeRun(ctx context.Context, in AgentResumeInput) error {
	opt, err := r.Options("", in.MCP, false, in.Settings)
	if err != nil {
		return err
	}
	return r.Resume(ctx, in.ID, opt)
}

func (r testRuns) StopRun(id string) bool { return r.Stop(id) }
