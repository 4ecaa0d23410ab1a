package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/mcpclient"
	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// DoctorReport is what `sagasu doctor` found. A part that is not
// configured is not a failure.
type DoctorReport struct {
	Config     DoctorConfig `json:"config"`
	Index      DoctorIndex  `json:"index"`
	Embedder   DoctorModel  `json:"embedder"`
	LLM        DoctorModel  `json:"llm"`
	MCPServers []DoctorMCP  `json:"mcpServers"`
}

// DoctorConfig says where the configuration came from, what an untrusted
// project file was not allowed to set, and which files of the user's data
// other users can read.
type DoctorConfig struct {
	ConfigOrigin
	// CacheDir is where the agent cache, the agent's memory and the
	// browser's files go.
	CacheDir string `json:"cacheDir"`
	// Exposed lists files and folders of the user's data that other users
	// of this machine can read.
	Exposed []string `json:"exposed,omitempty"`
	Fix     string   `json:"fix,omitempty"`
}

// DoctorIndex is the index's health.
type DoctorIndex struct {
	OK       bool   `json:"ok"`
	Location string `json:"location"`
	Sources  int    `json:"sources"`
	Chunks   int    `json:"chunks"`
	Vectors  int    `json:"vectors"`
	Error    string `json:"error,omitempty"`
	Fix      string `json:"fix,omitempty"`
}

// DoctorModel is an embedder's or a chat model's health.
type DoctorModel struct {
	OK         bool   `json:"ok"`
	Configured bool   `json:"configured"`
	Driver     string `json:"driver,omitempty"`
	Model      string `json:"model,omitempty"`
	Endpoint   string `json:"endpoint,omitempty"`
	Dim        int    `json:"dim,omitempty"`
	LatencyMs  int64  `json:"latencyMs,omitempty"`
	// ToolCall says whether the chat model made a forced tool call.
	ToolCall *bool  `json:"toolCall,omitempty"`
	Error    string `json:"error,omitempty"`
	Fix      string `json:"fix,omitempty"`
}

// DoctorMCP is one MCP server's health.
type DoctorMCP struct {
	Name      string `json:"name"`
	OK        bool   `json:"ok"`
	Tools     int    `json:"tools"`
	LatencyMs int64  `json:"latencyMs"`
	Error     string `json:"error,omitempty"`
	Fix       string `json:"fix,omitempty"`
}

// Failed reports whether something configured does not work.
func (r DoctorReport) Failed() bool {
	bad := !r.Index.OK || (r.Embedder.Configured && !r.Embedder.OK) || (r.LLM.Configured && !r.LLM.OK)
	for _, m := range r.MCPServers {
		bad = bad || !m.OK
	}
	return bad
}

// Doctor checks the index, the embedder (one probe embedding), the chat
// model (a chat and a forced tool call) and every configured MCP server
// (its tool list), each within timeout.
func (a *App) Doctor(ctx context.Context, timeout time.Duration) DoctorReport {
	var r DoctorReport
	r.Config = a.doctorConfig()
	r.Index.Location = Redact(a.Config.DB)
	embCfg := a.Config.Embedder
	st, err := a.OpenStore(ctx, false)
	if err != nil {
		r.Index.Error = err.Error()
		r.Index.Fix = "index some documents first (sagasu index PATH), or point --db at an index"
	} else {
		defer st.Close()
		if stats, err := st.Stats(ctx); err != nil {
			r.Index.Error = err.Error()
		} else {
			r.Index.OK = true
			r.Index.Sources, r.Index.Chunks, r.Index.Vectors = stats.Sources, stats.Chunks, stats.Vectors
			if stats.Sources == 0 {
				r.Index.Fix = "the index is empty: sagasu index PATH"
			}
		}
		if pin, err := Pinned(ctx, st); err == nil && pin.Driver != "" && embCfg.Driver == "" {
			embCfg = pin
			raw, _ := st.Meta(ctx, metaEmbedder)
			if err := a.checkPin(pin, raw); err != nil {
				// Not contacted: the address came with the index.
				r.Embedder = DoctorModel{Configured: true, Driver: pin.Driver, Model: pin.Model, Endpoint: Redact(pin.URL),
					Error: err.Error(), Fix: "sagasu trust --index " + Redact(a.Config.DB) + " (or name the address with --embedder-url)"}
				embCfg = EmbedderConfig{}
			}
		}
	}
	if r.Embedder.Error == "" {
		r.Embedder = a.doctorEmbedder(ctx, embCfg, timeout)
	}
	r.LLM = a.doctorLLM(ctx, timeout)
	r.MCPServers = a.doctorMCP(ctx, timeout)
	return r
}

// redactModel hides a password in m's address (http://user:pass@host/), and
// in its error and fix, which may quote raw, the address as configured.
func redactModel(m DoctorModel, raw string) DoctorModel {
	m.Endpoint = Redact(m.Endpoint)
	if hidden := Redact(raw); raw != "" && hidden != raw {
		m.Error = strings.ReplaceAll(m.Error, raw, hidden)
		m.Fix = strings.ReplaceAll(m.Fix, raw, hidden)
	}
	return m
}

func (a *App) doctorEmbedder(ctx context.Context, cfg EmbedderConfig, timeout time.Duration) DoctorModel {
	m := a.doctorEmbedderRaw(ctx, cfg, timeout)
	return redactModel(m, cfg.URL)
}

func (a *App) doctorEmbedderRaw(ctx context.Context, cfg EmbedderConfig, timeout time.Duration) DoctorModel {
	m := DoctorModel{Configured: cfg.Driver != "", Driver: cfg.Driver, Model: cfg.Model, Endpoint: cfg.URL}
	if !m.Configured {
		m.OK = true
		// What the binary alone can do: pull a model and embed locally.
		m.Fix = "no embedder: keyword search only; for semantic and hybrid search: sagasu model pull multilingual-e5-small, then sagasu index --embedder local --embedder-model multilingual-e5-small"
		return m
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e, err := a.buildEmbedder(ctx, cfg)
	if err != nil {
		m.Error, m.Fix = err.Error(), "check --embedder, --embedder-model and --embedder-url"
		return m
	}
	start := time.Now()
	v, err := e.EmbedQuery(ctx, "sagasu doctor probe")
	m.LatencyMs = time.Since(start).Milliseconds()
	if err != nil {
		m.Error, m.Fix = err.Error(), fixFor(err, "is the embedding server running at "+cfg.URL+"?")
		return m
	}
	m.OK, m.Dim, m.Model = true, len(v), e.Info().Model
	return m
}

func (a *App) doctorLLM(ctx context.Context, timeout time.Duration) DoctorModel {
	return redactModel(a.doctorLLMRaw(ctx, timeout), a.Config.LLM.URL)
}

func (a *App) doctorLLMRaw(ctx context.Context, timeout time.Duration) DoctorModel {
	c := a.Config.LLM
	m := DoctorModel{Configured: c.Driver != "", Driver: c.Driver, Model: c.Model, Endpoint: c.URL}
	if !m.Configured {
		m.OK = true
		m.Fix = "no language model: ask and agent run offline; to use one: --llm openai --llm-url URL (any OpenAI-compatible server), --llm gemini or --llm anthropic with its API key"
		return m
	}
	model, err := a.buildLLM(c)
	if err != nil {
		m.Error, m.Fix = err.Error(), "check --llm, --llm-model and --llm-url"
		return m
	}
	m.Model, m.Endpoint = model.Info().Model, model.Info().Endpoint
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	zero := 0.0 // the probe should not depend on sampling luck
	resp, err := model.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Reply with the word OK."}}, MaxTokens: 16, Temperature: &zero})
	m.LatencyMs = time.Since(start).Milliseconds()
	if err != nil {
		m.Error, m.Fix = err.Error(), fixFor(err, "is the model server running at "+m.Endpoint+"?")
		return m
	}
	if resp.Message.Content == "" && len(resp.Message.ToolCalls) == 0 {
		m.Error = "the model answered with nothing"
		return m
	}
	resp, err = model.Chat(ctx, ToolCallProbe(zero))
	called, why := false, ""
	if err == nil {
		called, why = probeCalled(resp)
	}
	m.ToolCall = &called
	switch {
	case err != nil:
		m.Error, m.Fix = "tool call: "+err.Error(), "the model or its server may not support tool calls (llama-server needs --jinja)"
	case !called:
		m.Error, m.Fix = "the model did not make a valid forced tool call"+why, "agents need tool calls: use a model and server that support them (llama-server needs --jinja)"
	default:
		m.OK = true
	}
	return m
}

func (a *App) doctorMCP(ctx context.Context, timeout time.Duration) []DoctorMCP {
	out := []DoctorMCP{}
	names := make([]string, 0, len(a.Config.MCPServers))
	servers := map[string]mcpclient.ServerConfig{}
	for n, c := range a.Config.MCPServers {
		if c.Name == "" {
			c.Name = n
		}
		if c.Timeout == 0 {
			c.Timeout = timeout
		}
		servers[n] = c
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return out
	}
	m, err := mcpclient.New(servers, mcpclient.Options{Logger: a.Log})
	if err != nil {
		for _, n := range names {
			out = append(out, DoctorMCP{Name: n, Error: err.Error(), Fix: "fix mcp_servers in sagasu.yaml"})
		}
		return out
	}
	defer m.Close()
	for _, n := range names {
		d := DoctorMCP{Name: n}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		start := time.Now()
		tools, err := m.ServerTools(cctx, n)
		cancel()
		d.LatencyMs = time.Since(start).Milliseconds()
		if err != nil {
			d.Error, d.Fix = err.Error(), "check mcp_servers."+n+" (command, args, url) and run the server by hand"
		} else {
			d.OK, d.Tools = true, len(tools)
		}
		out = append(out, d)
	}
	return out
}

// fixFor suggests what to do about a model error.
func fixFor(err error, unreachable string) string {
	var ae *llm.APIError
	switch {
	case errors.Is(err, llm.ErrUnauthorized):
		if errors.As(err, &ae) && ae.KeyEnv != "" {
			return "the key was refused: export " + ae.KeyEnv
		}
		return "the key was refused: check the API key variable"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time: " + unreachable
	}
	return unreachable
}

// doctorConfig reports the configuration's origin and the user's data that
// others can read.
func (a *App) doctorConfig() DoctorConfig {
	c := DoctorConfig{ConfigOrigin: a.Config.Origin, CacheDir: a.CacheDir()}
	var paths []string
	if !IsServerLocation(a.Config.DB) {
		db := strings.TrimPrefix(a.Config.DB, "sqlite://")
		paths = append(paths, filepath.Dir(db), db, db+"-wal", db+"-shm")
	}
	paths = append(paths, c.CacheDir)
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && userfile.Exposed(fi) {
			c.Exposed = append(c.Exposed, p)
		}
	}
	switch {
	case len(c.Exposed) > 0:
		c.Fix = "other users can read these; they hold copies of your documents: chmod go-rwx " + strings.Join(c.Exposed, " ")
	case len(c.Ignored) > 0:
		c.Fix = fmt.Sprintf("%s is not trusted, so %d of its settings were ignored: read it, then run `sagasu trust %s`", c.ProjectFile, len(c.Ignored), c.ProjectFile)
	}
	return c
}
