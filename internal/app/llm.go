package app

import (
	"fmt"
	"net/url"
	"time"

	"github.com/sagasu-dev/sagasu/internal/httpguard"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/anthropic"
	"github.com/sagasu-dev/sagasu/internal/llm/gemini"
	"github.com/sagasu-dev/sagasu/internal/llm/openai"
)

// LLMConfig selects a chat model. Keys are never configured here: they come
// from OPENAI_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY, ANTHROPIC_API_KEY.
type LLMConfig struct {
	Driver string `koanf:"driver" json:"driver" flag:"llm"`                                                                                            // one of LLMDrivers; "" for none (offline)
	Model  string `koanf:"model" json:"model,omitempty" flag:"llm-model"`                                                                              // model name; "" for the driver's default
	URL    string `koanf:"url" json:"url,omitempty" flag:"llm-url" trust:"section:sends your questions, passages and API key to the address it names"` // base URL (OpenAI-compatible servers: ending in /v1)
	// Timeout bounds one model call, a stream included (default 2m). For
	// a server on this machine (a loopback url) it bounds a pause instead:
	// the call fails when no piece of the answer, prompt progress
	// included, arrives for that long.
	Timeout time.Duration `koanf:"timeout" json:"timeout,omitempty"`
}

// LLMDrivers are the chat model drivers sagasu knows.
var LLMDrivers = []string{"openai", "gemini", "anthropic"}

// BuildLLM constructs the chat model c names, with sagasu's retry policy
// around it; nil when c names none.
func BuildLLM(c LLMConfig, getenv func(string) string) (llm.Model, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	var m llm.Model
	var err error
	switch c.Driver {
	case "":
		return nil, nil
	case "openai":
		cfg := openai.Config{Model: c.Model, BaseURL: c.URL, APIKey: getenv(openai.KeyEnv), Timeout: timeout}
		if onThisMachine(c.URL) {
			// A model on this machine runs as fast as the machine and its
			// load allow: the timeout bounds a pause in its answer, not
			// the whole answer.
			cfg.Stall, cfg.Timeout = timeout, 0
		}
		m, err = openai.New(cfg)
	case "anthropic":
		m, err = anthropic.New(anthropic.Config{Model: c.Model, BaseURL: c.URL, APIKey: getenv(anthropic.KeyEnv), Timeout: timeout})
	case "gemini":
		key := getenv("GEMINI_API_KEY")
		if key == "" {
			key = getenv("GOOGLE_API_KEY")
		}
		m, err = gemini.New(gemini.Config{Model: c.Model, BaseURL: c.URL, APIKey: key, Timeout: timeout})
	default:
		return nil, fmt.Errorf("unknown LLM driver %q: use openai (also Ollama, llama.cpp, vLLM, LM Studio), gemini or anthropic", c.Driver)
	}
	if err != nil {
		return nil, err
	}
	return llm.WithRetry(m, llm.RetryOptions{}), nil
}

// onThisMachine reports whether rawURL names a loopback host.
func onThisMachine(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.Hostname() != "" && httpguard.IsLoopback(u.Hostname())
}

// LLM returns the configured chat model, or nil when none is configured
// (the agents then run offline).
func (a *App) LLM() (llm.Model, error) {
	return a.buildLLM(a.Config.LLM)
}

// buildLLM builds c's model with the key rule of envFor: c's address counts
// as named when the configuration names it (llm:, or a Plan-and-Act role's
// own model). An address from anywhere else, such as a run's record, gets
// no key.
func (a *App) buildLLM(c LLMConfig) (llm.Model, error) {
	named := false
	for _, u := range []string{a.Config.LLM.URL, a.Config.Agent.Planner.URL, a.Config.Agent.Executor.URL} {
		named = named || sameAddress(c.URL, u)
	}
	m, err := BuildLLM(c, a.envFor(c.Driver, c.URL, named))
	if err != nil || m == nil {
		return m, err
	}
	return a.Tracer.Model(m), nil
}

// RoleLLM returns the model of a Plan-and-Act role (RolePlanner,
// RoleExecutor; another role is llm:'s model), nil when none is
// configured.
func (a *App) RoleLLM(role string) (llm.Model, error) {
	return a.buildLLM(a.Config.roleLLM(role))
}
