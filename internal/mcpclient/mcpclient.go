// Package mcpclient drives external MCP servers (Playwright MCP and the like)
// for the agent's executor: it starts or dials the configured servers, lists
// their tools with the input schemas the servers declare, and calls them with
// a timeout, a restart of a dead server, and results trimmed to a token
// budget for the model.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/source/fetch"
)

// ServerConfig is one entry of the `mcp_servers:` configuration map (name →
// config). A server is either a command spoken to over stdio or a streamable
// HTTP URL.
type ServerConfig struct {
	// Name is the server's name, filled from its key in the map when empty.
	Name string `koanf:"name" yaml:"name,omitempty" json:"name,omitempty"`
	// Command and Args start a stdio server.
	Command string   `koanf:"command" yaml:"command,omitempty" json:"command,omitempty"`
	Args    []string `koanf:"args" yaml:"args,omitempty" json:"args,omitempty"`
	// Env is added to this process's environment for the command.
	Env map[string]string `koanf:"env" yaml:"env,omitempty" json:"env,omitempty"`
	// URL is a streamable HTTP endpoint, used instead of Command.
	URL string `koanf:"url" yaml:"url,omitempty" json:"url,omitempty"`
	// Headers are sent with every HTTP request to URL.
	Headers map[string]string `koanf:"headers" yaml:"headers,omitempty" json:"headers,omitempty"`
	// Timeout bounds starting the server and each call to it; 0 means
	// DefaultTimeout.
	Timeout time.Duration `koanf:"timeout" yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Tools lists the tools the model is shown and may call, by their names
	// on the server; ["*"] allows them all. Empty allows them all, except on
	// a browser server, where it means BrowserTools. A call to a tool
	// outside the list is refused before it reaches the server.
	Tools []string `koanf:"tools" yaml:"tools,omitempty" json:"tools,omitempty"`
	// PassEnv names variables of sagasu's own environment that the command
	// gets too (an API key the server needs). Without it a command sees only
	// the basics (PATH, HOME, locale, temporary folder, display; see
	// BaseEnv) and Env.
	PassEnv []string `koanf:"pass_env" yaml:"pass_env,omitempty" json:"pass_env,omitempty"`
	// Browser marks a server that drives a web browser (Playwright MCP); a
	// command or args naming @playwright/mcp sets it too. A browser server
	// offers BrowserTools unless Tools says otherwise, every url argument of
	// a call is checked against the address guard before the call, and a
	// command's browser is sent through a guarded proxy
	// (PLAYWRIGHT_MCP_PROXY_SERVER) with internal origins blocked
	// (PLAYWRIGHT_MCP_BLOCKED_ORIGINS), unless Options.Network.AllowPrivate.
	Browser bool `koanf:"browser" yaml:"browser,omitempty" json:"browser,omitempty"`
	// Dir is the folder a command starts in, and that a relative command
	// ("./scripts/mcp.sh") is found from: the folder of the config file
	// that named the server (set by whoever loads it, never by the file),
	// so a server a trusted project names does not start in whatever
	// folder sagasu runs in, such as a cloned repository with its own
	// scripts and .npmrc. Empty: the working directory.
	Dir string `koanf:"-" yaml:"-" json:"-"`
}

// BrowserTools are the tools a browser server offers when its config lists
// none: Playwright MCP's navigate, snapshot, click, type, press key, back
// and wait. Left out are those that run code in the page or the server
// (browser_evaluate, browser_run_code_unsafe), read or send local files
// (browser_file_upload, browser_drop), reveal request headers
// (browser_network_request) or open tabs around the checks (browser_tabs).
var BrowserTools = []string{
	"browser_navigate", "browser_snapshot", "browser_click", "browser_type",
	"browser_press_key", "browser_navigate_back", "browser_wait_for",
}

// isBrowser reports whether c is a browser server.
func (c ServerConfig) isBrowser() bool {
	if c.Browser {
		return true
	}
	for _, a := range append([]string{c.Command}, c.Args...) {
		if strings.Contains(a, "@playwright/mcp") {
			return true
		}
	}
	return false
}

// allowedTools is the tools list in force: nil means all.
func (c ServerConfig) allowedTools() []string {
	switch {
	case slices.Contains(c.Tools, "*"):
		return nil
	case len(c.Tools) > 0:
		return c.Tools
	case c.isBrowser():
		return BrowserTools
	}
	return nil
}

// allows reports whether the model may see and call tool.
func (c ServerConfig) allows(tool string) bool {
	list := c.allowedTools()
	return list == nil || slices.Contains(list, tool)
}

// DefaultTimeout bounds a call when the server's config sets none.
const DefaultTimeout = 60 * time.Second

// DefaultMaxResultTokens is the budget of the text a call hands to the model.
const DefaultMaxResultTokens = 8000

// FuncSeparator joins a server's name and a tool's name in function names.
const FuncSeparator = "__"

// closeGrace is how long Close waits for a stdio server to leave after its
// stdin is closed before it signals the process group.
const closeGrace = 3 * time.Second

// Options configure a Manager.
type Options struct {
	// MaxResultTokens is the budget of Result.Text; 0 means
	// DefaultMaxResultTokens and a negative value turns trimming off.
	MaxResultTokens int
	// Counter counts tokens; nil means cl100k_base with budget.DefaultMargin.
	Counter *budget.Counter
	// Logger receives restarts and shutdown problems; nil means slog.Default().
	Logger *slog.Logger
	// Environ is the environment stdio servers take the basics and their
	// PassEnv variables from; nil means os.Environ().
	Environ []string
	// Network is the address guard of browser servers: their url arguments
	// and their browser's every request must pass it. Its AllowPrivate
	// (--allow-private) lets them reach loopback, private and link-local
	// addresses; tests set its resolver and dialer hooks.
	Network fetch.Options
}

// Tool is one tool of one server, as the server describes it.
type Tool struct {
	// Server is the configured server's name.
	Server string
	// Name is the tool's name on its server.
	Name string
	// FuncName is Server + "__" + Name made into a valid function name
	// (letters, digits, _ and -, at most 64 characters) for the model;
	// Manager.Resolve maps it back.
	FuncName string
	// Description is the server's description of the tool.
	Description string
	// InputSchema is the JSON Schema of the tool's arguments as the server
	// declared it, to be handed to the model unchanged.
	InputSchema json.RawMessage
}

// Result is the outcome of a tool call.
type Result struct {
	// Text is what the model should see: the text content, cut to the token
	// budget with a note saying so when it was larger.
	Text string
	// Full is all the text content, uncut, for the run log.
	Full string
	// IsError is set when the tool reported a failure (isError); the failure
	// is explained in Text.
	IsError bool
	// Truncated is set when Text is shorter than Full.
	Truncated bool
	// Tokens and FullTokens count Text and Full.
	Tokens, FullTokens int
	// Images and Audio count the content parts that are not text.
	Images, Audio int
	// Restarted is set when the server had died and was started again for
	// this call: whatever state it held (a browser's page) is gone.
	Restarted bool
}

// Manager connects to the configured MCP servers, lazily on first use or up
// front with Connect. It is safe for concurrent use.
type Manager struct {
	servers   map[string]*server
	names     []string // sorted server names
	maxTokens int
	counter   *budget.Counter
	log       *slog.Logger

	mu    sync.Mutex
	funcs map[string]toolRef // FuncName → tool
}

type toolRef struct{ server, tool string }

var serverNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// New checks the configuration and returns a Manager; it starts nothing.
func New(servers map[string]ServerConfig, opt Options) (*Manager, error) {
	m := &Manager{servers: map[string]*server{}, funcs: map[string]toolRef{}, maxTokens: opt.MaxResultTokens, counter: opt.Counter, log: opt.Logger}
	if m.maxTokens == 0 {
		m.maxTokens = DefaultMaxResultTokens
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.counter == nil {
		m.counter = budget.Default()
	}
	for key, cfg := range servers {
		if cfg.Name == "" {
			cfg.Name = key
		}
		if err := validate(key, cfg); err != nil {
			return nil, err
		}
		if cfg.Timeout == 0 {
			cfg.Timeout = DefaultTimeout
		}
		cfg.Browser = cfg.isBrowser()
		m.servers[key] = newServer(cfg, m.log, opt)
		m.names = append(m.names, key)
	}
	sort.Strings(m.names)
	return m, nil
}

func validate(key string, cfg ServerConfig) error {
	switch {
	case cfg.Name != key:
		return fmt.Errorf("mcp_servers.%s: name %q differs from its key; drop the name or make them equal", key, cfg.Name)
	case !serverNameRE.MatchString(key) || strings.Contains(key, FuncSeparator):
		return fmt.Errorf("mcp_servers: server name %q: use a letter then letters, digits, _ or - (no %q)", key, FuncSeparator)
	case cfg.Command == "" && cfg.URL == "":
		return fmt.Errorf("mcp_servers.%s: set command (a stdio server) or url (a streamable HTTP server)", key)
	case cfg.Command != "" && cfg.URL != "":
		return fmt.Errorf("mcp_servers.%s: set command or url, not both", key)
	case cfg.Timeout < 0:
		return fmt.Errorf("mcp_servers.%s: timeout %s is negative", key, cfg.Timeout)
	case cfg.URL != "" && !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://"):
		return fmt.Errorf("mcp_servers.%s: url %q: use an http:// or https:// address", key, cfg.URL)
	case cfg.Command == "" && (len(cfg.Args) > 0 || len(cfg.Env) > 0 || len(cfg.PassEnv) > 0):
		return fmt.Errorf("mcp_servers.%s: args, env and pass_env apply to a command, not to a url", key)
	case cfg.URL == "" && len(cfg.Headers) > 0:
		return fmt.Errorf("mcp_servers.%s: headers apply to a url, not to a command", key)
	case slices.Contains(cfg.Tools, ""):
		return fmt.Errorf("mcp_servers.%s: tools has an empty name; list tool names, or \"*\" for all", key)
	}
	for _, name := range cfg.PassEnv {
		if name == "" || strings.ContainsAny(name, "= \x00") {
			return fmt.Errorf("mcp_servers.%s: pass_env: %q is not a variable name", key, name)
		}
	}
	return nil
}

// Servers returns the configured servers' names, sorted.
func (m *Manager) Servers() []string { return append([]string(nil), m.names...) }

func (m *Manager) server(name string) (*server, error) {
	s, ok := m.servers[name]
	if !ok {
		return nil, fmt.Errorf("MCP server %q is not configured (configured: %s)", name, strings.Join(m.names, ", "))
	}
	return s, nil
}

// Connect starts or dials every server now instead of on first use, in
// parallel, and returns the failures joined.
func (m *Manager) Connect(ctx context.Context) error {
	errs := make([]error, len(m.names))
	var wg sync.WaitGroup
	for i, name := range m.names {
		wg.Go(func() {
			_, _, errs[i] = m.servers[name].get(ctx)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Tools lists the tools of every server, sorted by server then name, and
// records their function names for Resolve. When some servers fail, it
// returns the others' tools with the failures joined.
func (m *Manager) Tools(ctx context.Context) ([]Tool, error) {
	var all []Tool
	var errs []error
	for _, name := range m.names {
		tools, err := m.ServerTools(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, tools...)
	}
	return all, errors.Join(errs...)
}

// Functions lists the servers' tools as functions an agent offers its
// model and calls (llm.Function), each under its FuncName; like Tools, it
// returns the tools of the servers that answered and the others' failures.
func (m *Manager) Functions(ctx context.Context) ([]llm.Function, error) {
	tools, err := m.Tools(ctx)
	out := make([]llm.Function, len(tools))
	for i, t := range tools {
		out[i] = function{m: m, t: t}
	}
	return out, err
}

// function is one MCP tool as an llm.Function.
type function struct {
	m *Manager
	t Tool
}

func (f function) Tool() llm.Tool {
	return llm.Tool{Name: f.t.FuncName, Description: f.t.Description, Parameters: f.t.InputSchema}
}

// Call calls the tool; what the server reports as a failure is an Outcome
// with IsError whose text says ERROR, as the model is told failures.
func (f function) Call(ctx context.Context, args json.RawMessage, _ []doc.Hit) (llm.Outcome, error) {
	r, err := f.m.Call(ctx, f.t.Server, f.t.Name, args)
	if err != nil {
		return llm.Outcome{Tool: f.t.FuncName}, err
	}
	return r.Outcome(f.t.FuncName), nil
}

// Outcome is the result as the outcome of function funcName: a failure's
// text says ERROR, as a model is told failures, and the uncut text is kept
// when the model's was cut.
func (r Result) Outcome(funcName string) llm.Outcome {
	out := llm.Outcome{Tool: funcName, Text: r.Text, IsError: r.IsError, Restarted: r.Restarted}
	if r.Truncated {
		out.Full = r.Full
	}
	if out.IsError && !strings.Contains(out.Text, "ERROR:") {
		out.Text = "ERROR: " + out.Text
	}
	return out
}

// ServerTools lists one server's tools (cached until the server says its list
// changed) and records their function names for Resolve.
func (m *Manager) ServerTools(ctx context.Context, name string) ([]Tool, error) {
	s, err := m.server(name)
	if err != nil {
		return nil, err
	}
	all, err := s.listTools(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tools := all[:0]
	for _, t := range all {
		if !s.cfg.allows(t.Name) {
			continue // never shown to the model
		}
		t.FuncName = m.funcName(t.Server, t.Name)
		tools = append(tools, t)
	}
	return tools, nil
}

// funcName names a tool for the model and records the name; m.mu is held.
func (m *Manager) funcName(server, tool string) string {
	ref := toolRef{server, tool}
	base := FuncName(server, tool)
	name := base
	for i := 2; ; i++ {
		got, taken := m.funcs[name]
		if !taken || got == ref {
			break
		}
		// Two tool names that differ only in characters a function name
		// cannot hold: number the later one.
		suffix := fmt.Sprintf("_%d", i)
		name = base[:min(len(base), maxFuncName-len(suffix))] + suffix
	}
	m.funcs[name] = ref
	return name
}

const maxFuncName = 64

var funcUnsafeRE = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// FuncName makes server + "__" + tool into a function name models accept:
// characters other than letters, digits, _ and - become _, and the name is
// cut to 64 characters. Manager.Resolve maps names back; use the FuncName of
// a listed Tool, which is also unique.
func FuncName(server, tool string) string {
	name := server + FuncSeparator + funcUnsafeRE.ReplaceAllString(tool, "_")
	if len(name) > maxFuncName {
		name = name[:maxFuncName]
	}
	return name
}

// Resolve maps a function name from a listed Tool back to its server and
// tool. It knows the names of the tools listed so far.
func (m *Manager) Resolve(funcName string) (server, tool string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ref, ok := m.funcs[funcName]
	return ref.server, ref.tool, ok
}

// CallFunc calls the tool a model named by its function name.
func (m *Manager) CallFunc(ctx context.Context, funcName string, args json.RawMessage) (Result, error) {
	server, tool, ok := m.Resolve(funcName)
	if !ok {
		return Result{}, fmt.Errorf("function %q names no listed MCP tool; list the tools first and use their FuncName", funcName)
	}
	return m.Call(ctx, server, tool, args)
}

// Call calls a tool with its arguments (a JSON object, or empty for none),
// within the server's timeout. A failure the tool reports is a Result with
// IsError; an error means the call could not be made or answered. A stdio
// server that dies during the call is restarted once and the call retried
// once.
func (m *Manager) Call(ctx context.Context, server, tool string, args json.RawMessage) (Result, error) {
	s, err := m.server(server)
	if err != nil {
		return Result{}, err
	}
	if !s.cfg.allows(tool) {
		return Result{}, fmt.Errorf("tool %q of MCP server %q is not allowed: mcp_servers.%s.tools lists %s; add it there if the agent should use it",
			tool, server, server, strings.Join(s.cfg.allowedTools(), ", "))
	}
	if s.cfg.Browser {
		if err := s.checkURLs(ctx, tool, args); err != nil {
			return Result{}, err
		}
	}
	params := &mcp.CallToolParams{Name: tool}
	if len(strings.TrimSpace(string(args))) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
			return Result{}, fmt.Errorf("arguments of tool %q on MCP server %q must be a JSON object, got %.200s", tool, server, args)
		}
		params.Arguments = args
	}
	var res *mcp.CallToolResult
	restarted, err := s.do(ctx, fmt.Sprintf("call tool %q", tool), func(ctx context.Context, c *conn) error {
		var err error
		res, err = c.session.CallTool(ctx, params)
		return err
	})
	if err != nil {
		return Result{}, err
	}
	r := m.result(res)
	r.Restarted = restarted
	return r, nil
}

// Close ends every server: stdio processes (and what they started) are
// stopped and HTTP sessions closed. The Manager cannot be used afterwards.
func (m *Manager) Close() error {
	var wg sync.WaitGroup
	errs := make([]error, len(m.names))
	for i, name := range m.names {
		wg.Go(func() { errs[i] = m.servers[name].close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// httpClient is the client of an HTTP server: it sends the configured
// headers to the configured origin only, and refuses a redirect to another
// origin (scheme, host and port), where the headers (a token) must not go
// and which the user did not choose.
func (s *server) httpClient() *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	origin, _ := url.Parse(s.cfg.URL) // validate checked it
	return &http.Client{
		Transport: headerTransport{base: base, headers: s.cfg.Headers, origin: origin},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !fetch.SameOrigin(req.URL, origin) {
				return fmt.Errorf("MCP server %q redirected to %s, another origin than %s: not followed, so that its headers stay with the server you configured; if you trust the new address, set mcp_servers.%s.url to it",
					s.cfg.Name, redactURL(req.URL), redactURL(origin), s.cfg.Name)
			}
			if len(via) >= 10 {
				return fmt.Errorf("MCP server %q: stopped after 10 redirects", s.cfg.Name)
			}
			return nil
		},
	}
}

// headerTransport adds the configured headers to requests to the
// configured origin.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	origin  *url.URL
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 || !fetch.SameOrigin(r.URL, t.origin) {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// redactURL drops user info and the query from a URL shown in a message.
func redactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery = nil, ""
	return c.String()
}
