package app

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
	"time"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/mcpclient"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// call is one request a fake model server received.
type call struct {
	Role        string // planner (plan, judge, replan) or executor
	Model       string
	Temperature *float64
	MaxTokens   int
	Key         string // the Authorization header
}

// planActServer is an OpenAI-compatible server that plays Plan-and-Act's
// roles: the planner plans one knowledge-base search and judges it done,
// the executor makes the search. It records every request.
func planActServer(t *testing.T) (string, func() []call) {
	t.Helper()
	var mu sync.Mutex
	var calls []call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model       string   `json:"model"`
			Temperature *float64 `json:"temperature"`
			MaxTokens   int      `json:"max_tokens"`
			MaxComp     int      `json:"max_completion_tokens"`
			Tools       []any    `json:"tools"`
			Messages    []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("model request: %v", err)
		}
		c := call{Role: "planner", Model: req.Model, Temperature: req.Temperature, MaxTokens: max(req.MaxTokens, req.MaxComp), Key: r.Header.Get("Authorization")}
		system := fmt.Sprint(req.Messages[0].Content)
		var msg string
		switch {
		case len(req.Tools) > 0:
			c.Role = "executor"
			msg = `"tool_calls":[{"id":"c1","type":"function","function":{"name":"sagasu_query","arguments":"{\"query\":\"deploy\"}"}}]`
		case strings.Contains(system, "judging"):
			msg = `"content":"{\"decision\":\"done\",\"answer\":\"Upload the dist folder.\"}"`
		default:
			msg = `"content":"{\"plan\":[\"search the knowledge base for deploying\"]}"`
		}
		mu.Lock()
		calls = append(calls, c)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":%q,"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",%s}}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`, req.Model, msg)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() []call {
		mu.Lock()
		defer mu.Unlock()
		out := append([]call(nil), calls...)
		calls = nil
		return out
	}
}

// openIndex opens (creating) an index with one document under cfg.
func openIndex(t *testing.T, cfg Config, env ...string) *Runtime {
	t.Helper()
	a := New(cfg, io.Discard, env)
	rt, err := a.Open(context.Background(), OpenOptions{Create: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	if _, err := rt.Tools.Index(context.Background(), tools.IndexInput{Text: "# Deploy\n\nBuild the site and upload the dist folder.\n", Title: "Deploy"}, nil); err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestRunSettingsRoundTrip: a run records the settings it runs with
// (temperature, reply cap, limits, each role's model) in its run log; its
// calls use them; a resume in another process, whose configuration has
// changed, restores them from the record; a resume's own tuning replaces
// them.
func TestRunSettingsRoundTrip(t *testing.T) {
	url, calls := planActServer(t)
	dir := t.TempDir()
	cfg := Defaults()
	cfg.DB = filepath.Join(dir, "index.db")
	cfg.CacheDir = filepath.Join(dir, "cache")
	cfg.LLM = LLMConfig{Driver: "openai", URL: url, Model: "general"}
	cfg.Agent.Planner.Model = "big"
	cfg.Agent.Executor.Model = "small"
	temp := 0.3
	cfg.Agent.Temperature, cfg.Agent.MaxTokens = &temp, 700
	cfg.Agent.MaxToolCalls, cfg.Agent.MaxDuration = 3, 2*time.Minute
	env := []string{"OPENAI_API_KEY=sk-test"}
	rt := openIndex(t, cfg, env...)
	ctx := context.Background()

	run, err := rt.NewPlanActRun(ctx, PlanActOptions{Goal: "how do I deploy?"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Start(ctx)
	run.Close()
	if err != nil || res.Outcome != "success" {
		t.Fatalf("run: %v %+v", err, res)
	}
	byRole := map[string]call{}
	for _, c := range calls() {
		byRole[c.Role] = c
		if c.Temperature == nil || *c.Temperature != 0.3 || c.MaxTokens != 700 {
			t.Errorf("%s call: temperature %v, max tokens %d; want 0.3 and 700", c.Role, c.Temperature, c.MaxTokens)
		}
	}
	if byRole["planner"].Model != "big" || byRole["executor"].Model != "small" {
		t.Errorf("planner called %q, executor %q; want big and small", byRole["planner"].Model, byRole["executor"].Model)
	}
	rec, err := rt.Store.Run(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var set RunSettings
	if err := json.Unmarshal(rec.Meta, &set); err != nil {
		t.Fatalf("recorded settings %s: %v", rec.Meta, err)
	}
	if set.Planner == nil || set.Planner.Model != "big" || set.Executor == nil || set.Executor.Model != "small" ||
		set.Planner.Temperature != 0.3 || set.Executor.MaxTokens != 700 || set.Limits.MaxToolCalls != 3 || set.Limits.MaxDuration != "2m0s" ||
		set.Planner.URL != url {
		t.Errorf("recorded settings %s", rec.Meta)
	}
	if strings.Contains(string(rec.Meta), "sk-test") {
		t.Errorf("the record holds the API key: %s", rec.Meta)
	}
	t.Logf("recorded settings: %s", rec.Meta)

	// Another process, another configuration: the run's record wins.
	other := cfg
	hot := 0.9
	other.Agent = AgentConfig{Temperature: &hot, MaxTokens: 50}
	rt2 := openIndex(t, other, env...)
	again, err := rt2.OpenPlanActRun(ctx, run.ID, PlanActOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Settings.Planner.Model != "big" || again.Settings.Planner.Temperature != 0.3 || again.Settings.Limits.MaxToolCalls != 3 {
		t.Errorf("restored settings %+v, %+v", again.Settings.Planner, again.Settings.Limits)
	}
	again.Close()

	// The resume's own tuning replaces what it names, and is recorded.
	cooler := 0.1
	tuned, err := rt2.OpenPlanActRun(ctx, run.ID, PlanActOptions{Tuning: Tuning{Temperature: &cooler, MaxToolCalls: 9, ExecutorModel: "medium"}})
	if err != nil {
		t.Fatal(err)
	}
	tuned.Close()
	if tuned.Settings.Executor.Model != "medium" || tuned.Settings.Executor.Temperature != 0.1 || tuned.Settings.Limits.MaxToolCalls != 9 || tuned.Settings.Planner.Model != "big" {
		t.Errorf("tuned settings %+v %+v %+v", tuned.Settings.Planner, tuned.Settings.Executor, tuned.Settings.Limits)
	}
	if rec, _ := rt2.Store.Run(ctx, run.ID); !strings.Contains(string(rec.Meta), `"medium"`) {
		t.Errorf("the resume's settings were not recorded: %s", rec.Meta)
	}
}

// TestRestoredModelAddressGetsNoKey: a model address read from a run's
// record is not one the user named: when the configuration names another
// endpoint now, the resumed run talks to the recorded one without the API
// key; the configured endpoint gets it.
func TestRestoredModelAddressGetsNoKey(t *testing.T) {
	recorded, recordedCalls := planActServer(t)
	configured, configuredCalls := planActServer(t)
	dir := t.TempDir()
	cfg := Defaults()
	cfg.DB = filepath.Join(dir, "index.db")
	cfg.CacheDir = filepath.Join(dir, "cache")
	cfg.LLM = LLMConfig{Driver: "openai", URL: recorded, Model: "m"}
	env := []string{"OPENAI_API_KEY=sk-secret"}
	rt := openIndex(t, cfg, env...)
	ctx := context.Background()
	run, err := rt.NewPlanActRun(ctx, PlanActOptions{Goal: "how do I deploy?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Start(ctx); err != nil {
		t.Fatal(err)
	}
	run.Close()
	for _, c := range recordedCalls() {
		if c.Key != "Bearer sk-secret" {
			t.Fatalf("the configured address did not get the key: %q", c.Key)
		}
	}
	// The run is stopped again (its status), and the configuration now
	// names another address.
	if err := rt.Store.UpdateRun(ctx, run.ID, storeStatus("stopped")); err != nil {
		t.Fatal(err)
	}
	moved := cfg
	moved.LLM.URL = configured
	rt2 := openIndex(t, moved, env...)
	again, err := rt2.OpenPlanActRun(ctx, run.ID, PlanActOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	m := again.agentModel()
	if _, err := m.Chat(ctx, chatRequest("ping")); err != nil {
		t.Fatal(err)
	}
	got := recordedCalls()
	if len(got) != 1 || got[0].Key != "" {
		t.Errorf("the recorded address got %d calls with key %q; want one without a key", len(got), got[0].Key)
	}
	if n := len(configuredCalls()); n != 0 {
		t.Errorf("the configured address got %d calls; the run's record names another", n)
	}
}

// TestResumedRunsMCPServersComeFromTheConfiguration: a run's MCP servers
// are recorded by name and resolved through the configuration when it is
// resumed: a name the configuration no longer has is refused, naming it.
func TestResumedRunsMCPServersComeFromTheConfiguration(t *testing.T) {
	url, _ := planActServer(t)
	dir := t.TempDir()
	cfg := Defaults()
	cfg.DB = filepath.Join(dir, "index.db")
	cfg.CacheDir = filepath.Join(dir, "cache")
	cfg.LLM = LLMConfig{Driver: "openai", URL: url, Model: "m"}
	cfg.MCPServers = map[string]mcpclient.ServerConfig{"docs": {Command: "/bin/cat"}}
	rt := openIndex(t, cfg)
	ctx := context.Background()
	run, err := rt.NewPlanActRun(ctx, PlanActOptions{Goal: "how do I deploy?", MCP: []string{"docs"}})
	if err != nil {
		t.Fatal(err)
	}
	run.Close()
	gone := cfg
	gone.MCPServers = nil
	rt2 := openIndex(t, gone)
	if _, err := rt2.OpenPlanActRun(ctx, run.ID, PlanActOptions{}); err == nil || !strings.Contains(err.Error(), `no MCP server "docs"`) {
		t.Errorf("resume without the recorded server configured: %v", err)
	}
	kept, err := rt.OpenPlanActRun(ctx, run.ID, PlanActOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	if len(kept.Settings.MCP) != 1 || kept.Settings.MCP[0] != "docs" || kept.mcp == nil {
		t.Errorf("restored MCP servers %v (manager %v)", kept.Settings.MCP, kept.mcp != nil)
	}
}

func (p *PlanActRun) agentModel() llm.Model { return p.executor }

func storeStatus(s string) store.RunUpdate { return store.RunUpdate{Status: s} }

func chatRequest(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// TestBackgroundRunsKeepFewFailures: why runs failed is kept for the last
// maxFailures runs, not forever, and forgotten when a run runs again.
func TestBackgroundRunsKeepFewFailures(t *testing.T) {
	b := (&Runtime{}).BackgroundRuns(context.Background(), 1, nil)
	for i := range maxFailures + 10 {
		b.fail(fmt.Sprintf("run-%d", i), "broke")
	}
	if b.Failure("run-0") != "" || b.Failure(fmt.Sprintf("run-%d", maxFailures+9)) != "broke" || len(b.failures) != maxFailures {
		t.Errorf("kept %d failures (first %q)", len(b.failures), b.Failure("run-0"))
	}
	b.mu.Lock()
	b.forget("run-20")
	b.mu.Unlock()
	if b.Failure("run-20") != "" || len(b.order) != maxFailures-1 {
		t.Errorf("a run that runs again keeps its old failure")
	}
}
