package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/source/fetch"
)

// server is one configured server and its current connection.
type server struct {
	cfg     ServerConfig
	log     *slog.Logger
	client  *mcp.Client
	network fetch.Options // the address guard of a browser server
	environ []string      // what a stdio server's environment is taken from

	mu     sync.Mutex
	conn   *conn // nil until first use and after a death
	closed bool
	tools  []Tool       // cached tool list; nil when unknown
	proxy  *fetch.Proxy // a browser command's guarded proxy, once started
}

// conn is one live session with a server.
type conn struct {
	session *mcp.ClientSession
	proc    *process      // stdio servers
	ended   chan struct{} // closed when the session's connection is over
	http    *http.Client  // HTTP servers
}

func newServer(cfg ServerConfig, log *slog.Logger, opt Options) *server {
	s := &server{cfg: cfg, log: log, network: opt.Network, environ: environ(opt)}
	s.client = mcp.NewClient(&mcp.Implementation{Name: "sagasu", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.mu.Lock()
			s.tools = nil
			s.mu.Unlock()
		},
	})
	return s
}

// errClosed is returned by a server after Manager.Close.
var errClosed = errors.New("the MCP client is closed")

// get returns the live connection, starting the server when there is none or
// when its process has exited since the last call; it reports the latter as
// a restart.
func (s *server) get(ctx context.Context) (c *conn, restarted bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, fmt.Errorf("MCP server %q: %w", s.cfg.Name, errClosed)
	}
	if s.conn != nil && s.conn.proc != nil && s.conn.proc.hasExited() {
		s.log.Warn("MCP server exited between calls; starting it again", "server", s.cfg.Name, "reason", s.conn.proc.describe())
		_ = s.conn.close(0)
		s.conn = nil
		restarted = true
	}
	if s.conn != nil {
		return s.conn, false, nil
	}
	c, err = s.dial(ctx)
	if err != nil {
		return nil, restarted, err
	}
	s.conn = c
	return c, restarted, nil
}

// dial starts (stdio) or connects to (HTTP) the server and initializes a
// session, within the server's timeout.
func (s *server) dial(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	c := &conn{}
	var t mcp.Transport
	if s.cfg.URL != "" {
		c.http = s.httpClient()
		t = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: c.http, DisableStandaloneSSE: true, MaxRetries: 1}
	} else {
		var extra map[string]string
		if s.cfg.Browser {
			proxy, err := s.startProxy()
			if err != nil {
				return nil, fmt.Errorf("start MCP server %q: %w", s.cfg.Name, err)
			}
			extra = browserEnv(proxy, s.network.AllowPrivate)
		}
		if s.cfg.Browser && slices.Contains(s.cfg.Args, "--no-sandbox") {
			why := "its args say --no-sandbox"
			if ok, reason := ChromiumSandbox(); !ok {
				why = reason
			}
			s.log.Warn("the browser of this MCP server runs without chromium's sandbox", "server", s.cfg.Name, "why", why)
		}
		p, err := startProcess(s.cfg, childEnv(s.cfg, s.environ, extra))
		if err != nil {
			return nil, fmt.Errorf("start MCP server %q: %w", s.cfg.Name, err)
		}
		c.proc = p
		t = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}
	}
	session, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		err = s.explain(ctx, c, "connect", err)
		c.close(0)
		return nil, err
	}
	c.session = session
	c.ended = make(chan struct{})
	go func() {
		_ = session.Wait()
		close(c.ended)
	}()
	return c, nil
}

// explain turns a failed operation into an error naming the server and what
// went wrong, with the process's account when there is one.
func (s *server) explain(ctx context.Context, c *conn, what string, err error) error {
	where := s.cfg.Command
	if s.cfg.URL != "" {
		where = s.cfg.URL
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("MCP server %q (%s): %s: no answer within %s (set mcp_servers.%s.timeout if it needs longer): %w", s.cfg.Name, where, what, s.cfg.Timeout, s.cfg.Name, err)
	case ctx.Err() != nil:
		return fmt.Errorf("MCP server %q: %s: %w", s.cfg.Name, what, ctx.Err())
	case c.proc != nil && (c.proc.hasExited() || connErr(err) || c.proc.stdout.garbage() != ""):
		// The reader may see the end of stdout a moment before Wait reaps the
		// process: give it that moment so the message says it exited.
		c.proc.awaitExit(waitGraceForReason)
		return fmt.Errorf("MCP server %q (%s): %s: %s: %w", s.cfg.Name, where, what, c.proc.describe(), err)
	}
	return fmt.Errorf("MCP server %q (%s): %s: %w", s.cfg.Name, where, what, err)
}

// dead reports whether err says the session is over: the connection closed or
// the process exited.
func (c *conn) dead(err error) bool {
	if connErr(err) || (c.proc != nil && c.proc.hasExited()) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false // a slow server, not a dead one
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return false // the server answered
	}
	// A broken stream (stray output on stdout) ends the connection a moment
	// after the call sees the error.
	t := time.NewTimer(endedGrace)
	defer t.Stop()
	select {
	case <-c.ended:
		return true
	case <-t.C:
		return false
	}
}

// connErr reports whether err says the connection is gone.
func connErr(err error) bool {
	// A pipe the process closed as it died reads as os.ErrClosed ("file
	// already closed") when the transport's reader loses the race with Wait.
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, os.ErrClosed) || strings.Contains(err.Error(), "file already closed")
}

// do runs fn on the live connection within the server's timeout. When the
// session dies during fn, the server is started again and fn retried once;
// do reports whether that happened.
func (s *server) do(ctx context.Context, what string, fn func(context.Context, *conn) error) (restarted bool, err error) {
	for attempt := 0; ; attempt++ {
		c, fresh, err := s.get(ctx)
		restarted = restarted || fresh || attempt > 0
		if err != nil {
			return restarted, err
		}
		callCtx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		err = fn(callCtx, c)
		if err == nil {
			cancel()
			return restarted, nil
		}
		err = s.explain(callCtx, c, what, err)
		cancel()
		if ctx.Err() != nil || !c.dead(err) {
			return restarted, err
		}
		s.drop(c)
		if attempt > 0 {
			return true, fmt.Errorf("%w (it died again after a restart; giving up)", err)
		}
		s.log.Warn("MCP server died; restarting it and retrying once", "server", s.cfg.Name, "during", what, "error", err)
	}
}

// drop forgets a dead connection and ends its process.
func (s *server) drop(c *conn) {
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.mu.Unlock()
	c.close(0)
}

func (s *server) listTools(ctx context.Context) ([]Tool, error) {
	s.mu.Lock()
	cached := s.tools
	s.mu.Unlock()
	if cached != nil {
		return append([]Tool(nil), cached...), nil
	}
	var tools []Tool
	_, err := s.do(ctx, "list tools", func(ctx context.Context, c *conn) error {
		tools = tools[:0]
		for t, err := range c.session.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			schema, err := json.Marshal(t.InputSchema)
			if err != nil {
				return fmt.Errorf("input schema of tool %q: %w", t.Name, err)
			}
			tools = append(tools, Tool{Server: s.cfg.Name, Name: t.Name, Description: t.Description, InputSchema: schema})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if tools == nil {
		tools = []Tool{}
	}
	s.mu.Lock()
	s.tools = tools
	s.mu.Unlock()
	return append([]Tool(nil), tools...), nil
}

// close ends the server for good.
func (s *server) close() error {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.closed = true
	proxy := s.proxy
	s.proxy = nil
	s.mu.Unlock()
	if proxy != nil {
		// After the browser is gone (below), so that its tunnels end first.
		defer proxy.Close()
	}
	if c == nil {
		return nil
	}
	if err := c.close(closeGrace); err != nil {
		// Ending a remote session is a courtesy to the server: a failure
		// (the server is already gone) is not the caller's problem.
		s.log.Debug("close MCP session", "server", s.cfg.Name, "error", err)
	}
	return nil
}

// close ends the session and, for stdio, the process, waiting up to grace for
// it to leave on its own. Only an HTTP session's close can fail.
func (c *conn) close(grace time.Duration) error {
	if c.proc != nil {
		// Closing stdin is how a stdio server is asked to leave; the session's
		// Close would wait for its pending calls first.
		c.proc.stop(grace)
		if c.session != nil {
			_ = c.session.Close()
		}
		return nil
	}
	var err error
	if c.session != nil {
		err = c.session.Close()
	}
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
	return err
}

// waitGraceForReason is how long an error message waits for a process whose
// stdout ended to be reaped, so that it can say the process exited.
const waitGraceForReason = 500 * time.Millisecond

// endedGrace is how long a failed call waits to learn whether the
// connection ended with it.
const endedGrace = 200 * time.Millisecond
