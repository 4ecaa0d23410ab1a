// Package mcpserver serves sagasu to LLM agents over the Model Context
// Protocol: typed tools to index, search, read and run the agent-in-the-loop
// steps, and resources for sources and chunks. Every tool result is measured
// with a tokenizer and fitted to its budget before it is sent.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Options configure a Server. Tools is required; the rest have defaults.
type Options struct {
	// Tools runs every tool: its engine's store is the index sagasu_index
	// writes, its agent cache what sagasu_read_cache reads, its roots the
	// folders sagasu_index may read.
	Tools *tools.Toolset
	// Counter measures responses; nil means cl100k_base with budget.DefaultMargin.
	Counter *budget.Counter
	// Limits are the budgets; the zero value means budget.DefaultLimits.
	Limits budget.Limits
	// Logger receives the server's logs (to stderr: stdout is the protocol's).
	Logger *slog.Logger
	// Version is reported to clients.
	Version string
	// CursorTTL is how long a cursor stays valid (default one hour).
	CursorTTL time.Duration
	// CursorKey signs cursors; nil draws a random key, so cursors end with
	// the server.
	CursorKey []byte
	// Now is the clock cursors are stamped with (default time.Now).
	Now func() time.Time
	// Ask answers questions for sagasu_ask; nil leaves the tool out.
	Ask Asker
	// Agents drives Plan-and-Act runs for sagasu_agent_start, _status,
	// _resume and _stop; nil leaves those tools out.
	Agents AgentRuns
	// Runs are the lifecycle tools' operations (sagasu_runs_list, _delete,
	// _prune, _export); nil uses the toolset's run log with no configured
	// retention.
	Runs *runs.Ops
	// MaxConcurrentCalls is how many quick tool calls run at once; the rest
	// wait in arrival order. 0 means one per processor (GOMAXPROCS).
	MaxConcurrentCalls int
	// Middleware, when set, wraps every request before sagasu's own checks
	// (tracing: it sees refused calls too).
	Middleware mcp.Middleware
	// AllowDotfiles lets clients index and read dotfiles and dot-folders
	// (.env, .ssh/, .git/...); by default they are refused (see
	// tools.Toolset.WithDotfiles).
	AllowDotfiles bool
	// Groups are the groups of operations the server offers (see
	// tools.Groups); empty means tools.DefaultGroups.
	Groups []string
}

// Server is sagasu's MCP server. One Server may serve many sessions at once
// (stdio, or many HTTP clients).
type Server struct {
	opt     Options
	mcp     *mcp.Server
	impl    *mcp.Implementation
	tools   *tools.Toolset
	store   store.Store
	counter *budget.Counter
	limits  budget.Limits
	cursors *tools.Cursors
	log     *slog.Logger
	// ops are the operations the server offers.
	ops tools.Registry
	// queue admits quick tool calls in turn (queueCalls).
	queue *queue
	// nonce and conns name connections in derived session IDs (sessionOf):
	// conns maps a connection without an MCP session ID to a drawn one.
	nonce string
	conns sync.Map
}

// Tool names (the tools package owns them).
const (
	ToolIndex        = tools.NameIndex
	ToolDelete       = tools.NameDelete
	ToolQuery        = tools.NameQuery
	ToolSearch       = tools.NameSearch
	ToolGet          = tools.NameGet
	ToolList         = tools.NameList
	ToolEvaluate     = tools.NameEvaluate
	ToolRefine       = tools.NameRefine
	ToolExecuteStage = tools.NameExecuteStage
	ToolLoop         = tools.NameLoop
	ToolReadCache    = tools.NameReadCache
)

// Detail levels of sagasu_search (the tools package owns them).
const (
	ModeSummary  = tools.ModeSummary
	ModeDetailed = tools.ModeDetailed
	ModeFull     = tools.ModeFull
)

// New builds a server with every tool and resource registered.
func New(opt Options) (*Server, error) {
	s := &Server{opt: opt, tools: opt.Tools, counter: opt.Counter, limits: opt.Limits, log: opt.Logger, queue: newQueue(opt.MaxConcurrentCalls), nonce: newNonce()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.tools == nil {
		return nil, errors.New("mcpserver: no toolset (Options.Tools)")
	}
	s.tools = s.tools.WithDotfiles(opt.AllowDotfiles)
	s.store = s.tools.Store()
	if s.counter == nil {
		s.counter = budget.Default()
	}
	if s.limits == (budget.Limits{}) {
		s.limits = budget.DefaultLimits()
	}
	if s.limits.Summary > s.limits.Cap || s.limits.Detailed > s.limits.Cap || s.limits.Summary <= tools.Envelope {
		return nil, fmt.Errorf("mcpserver: budgets %+v: summary and detailed must be positive and within the cap", s.limits)
	}
	var err error
	if s.cursors, err = tools.NewCursors(opt.CursorKey, opt.CursorTTL, opt.Now); err != nil {
		return nil, err
	}

	version := opt.Version
	if version == "" {
		version = "dev"
	}
	s.impl = &mcp.Implementation{Name: "sagasu", Title: "sagasu", Version: version}
	s.mcp = mcp.NewServer(s.impl, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       s.log,
	})
	groups := opt.Groups
	if len(groups) == 0 {
		groups = tools.DefaultGroups
	}
	s.ops = Registry(s.tools, RegistryOptions{Cap: s.limits.Cap, Ask: opt.Ask, Agents: opt.Agents, Runs: s.runOps()}).In(groups)
	s.ops = slices.DeleteFunc(s.ops, func(op tools.Op) bool { return !op.Callable() })
	for _, op := range s.ops {
		s.addOp(op)
	}
	s.addResources()
	s.mcp.AddReceivingMiddleware(s.guard, s.queueCalls)
	if opt.Middleware != nil {
		// Added last, it runs first.
		s.mcp.AddReceivingMiddleware(opt.Middleware)
	}
	return s, nil
}

// instructions tell an agent how the tools fit together.
const instructions = `sagasu searches an index of documents (markdown, code, text; English and Japanese).
Start with sagasu_search (query, and your goal): it judges the results against the goal and ends with one next step, a tool call to make. Follow it: read a section with sagasu_get, or search again with the query it proposes.
Every response says its size in estimatedTokens; what did not fit is reachable through nextCursor or the resources sagasu://source/{id} and sagasu://chunk/{id}.`

// MCP returns the underlying SDK server (for custom transports).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one session over t until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, t)
}

// ServeIO serves one session over newline-delimited JSON-RPC on r and w
// (standard input and output for `sagasu mcp`) until r ends or ctx is done.
// A client that hangs up is the normal end, not an error.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	err := s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}})
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// guard checks every tool result against the cap before it is sent: a
// result over it (which fitting never produces) is replaced by an error
// rather than sent. Results whose byte length alone proves them small are
// not counted again.
func (s *Server) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || r == nil {
			return res, err
		}
		limit := s.limits.Cap
		wire, merr := json.Marshal(r)
		if merr != nil {
			return nil, merr
		}
		// A token is at least one byte.
		if int(math.Ceil(float64(len(wire))*(1+s.counter.Margin()))) <= limit {
			return res, nil
		}
		if n := s.counter.Count(string(wire)); n > limit {
			s.log.Error("tool result over the cap withheld", "tokens", n, "cap", s.limits.Cap)
			out := &mcp.CallToolResult{}
			out.SetError(fmt.Errorf("the result (%d tokens) would exceed the %d-token cap and was withheld; ask for less (smaller k, mode summary) or page with a cursor", n, s.limits.Cap))
			return out, nil
		}
		return res, nil
	}
}

// addOp offers an operation as an MCP tool. Its arguments are checked
// once, by the operation (tools.Op.Call); the SDK's low-level AddTool
// neither checks them again nor re-encodes the answer. The output schema is
// listed only for the operations whose outputs clients read by field
// (tools.Op.Typed); every answer carries structuredContent.
func (s *Server) addOp(op tools.Op) {
	f := false
	ann := &mcp.ToolAnnotations{Title: op.Title, ReadOnlyHint: op.ReadOnly, IdempotentHint: op.Idempotent, OpenWorldHint: &f}
	if !op.ReadOnly {
		ann.DestructiveHint = &op.Destructive
	}
	t := &mcp.Tool{Name: op.Name, Description: op.Description, Annotations: ann, InputSchema: op.Input}
	if op.Typed && op.Output != nil {
		t.OutputSchema = op.Output
	}
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		env := &tools.Env{Counter: s.counter, Limits: s.limits, Cursors: s.cursors,
			Offers:   func(name string) bool { _, ok := s.ops.Find(name); return ok },
			Session:  func(given, goal string) string { return s.sessionOf(req, given, goal) },
			Progress: func(p tools.IndexProgress) { s.notifyProgress(ctx, req, p) },
		}
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		reply, err := op.Call(ctx, env, raw)
		if err != nil {
			res := &mcp.CallToolResult{}
			res.SetError(err)
			return res, nil
		}
		content := make([]mcp.Content, 0, 1+len(reply.Links))
		content = append(content, &mcp.TextContent{Text: reply.Text})
		for _, l := range reply.Links {
			content = append(content, &mcp.ResourceLink{URI: l.URI, Name: l.Name, MIMEType: l.MIME})
		}
		return &mcp.CallToolResult{Content: content, StructuredContent: reply.JSON}, nil
	})
}

// Ops are the operations the server offers, in the order it lists them.
func (s *Server) Ops() tools.Registry { return s.ops }

// notifyProgress sends a progress notification when the client asked for
// them.
func (s *Server) notifyProgress(ctx context.Context, req *mcp.CallToolRequest, p tools.IndexProgress) {
	token := req.Params.GetProgressToken()
	if token != nil && req.Session != nil {
		// The chunks done of the chunks known, which only grows (MCP wants
		// progress to increase); the total once every source is read.
		done, total := p.Work()
		n := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(done), Message: p.String()}
		if !p.Reading || p.Final {
			n.Total = float64(total)
		}
		if err := req.Session.NotifyProgress(ctx, n); err != nil {
			s.log.Debug("progress notification not sent", "err", err)
		}
	}
}
