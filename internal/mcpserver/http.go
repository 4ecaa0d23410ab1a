package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/httpguard"
)

// Path is where the streamable HTTP endpoint is served.
const Path = "/mcp"

// Limits of the HTTP transport.
const (
	// MaxBodyBytes bounds a request body (a JSON-RPC message); sagasu_index
	// "text" is the largest thing a client sends.
	MaxBodyBytes = 4 << 20
	// DefaultMaxInFlight is how many requests (open streams included) are
	// served at once by default; more get 429.
	DefaultMaxInFlight = 256
)

// HTTPOptions secure the streamable HTTP transport.
type HTTPOptions struct {
	// Token must come with every request as "Authorization: Bearer
	// <token>". Without one every request is refused, unless NoToken.
	Token string
	// NoToken serves without a token: any local user or program may then
	// call the tools. CheckAddr refuses it off loopback.
	NoToken bool
	// AllowedOrigins are browser origins ("https://app.example.com")
	// allowed besides loopback ones. A request that carries any other Origin
	// header is refused: that is how a web page, or a DNS-rebinding attack,
	// reaches a local server.
	AllowedOrigins []string
	// MaxInFlight bounds the requests served at once, open event streams
	// included (default DefaultMaxInFlight).
	MaxInFlight int
	// Timeouts are the HTTP server's (ServeHTTP); zero fields take
	// httpguard's defaults.
	Timeouts httpguard.Timeouts
}

// CheckAddr refuses to serve a non-loopback address without a token.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: give host:port, e.g. 127.0.0.1:8765", addr)
	}
	if httpguard.IsLoopback(host) || token != "" {
		return nil
	}
	return fmt.Errorf("--http %s listens beyond this machine: set a bearer token with --token or SAGASU_MCP_TOKEN (or bind 127.0.0.1)", addr)
}

// Handler returns the streamable HTTP handler, served at Path, with the
// Origin check, the bearer token and the caps in front of it.
func (s *Server) Handler(opt HTTPOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger: s.log,
		// Clients that vanish without closing their session free it after an idle hour.
		SessionTimeout:      time.Hour,
		MaxRequestBodyBytes: MaxBodyBytes,
	})
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	return s.protect(mux, opt)
}

func (s *Server) protect(next http.Handler, opt HTTPOptions) http.Handler {
	if opt.MaxInFlight <= 0 {
		opt.MaxInFlight = DefaultMaxInFlight
	}
	inFlight := httpguard.NewLimit(opt.MaxInFlight)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, opt.AllowedOrigins) {
			s.log.Warn("refused request from origin", "origin", o)
			http.Error(w, fmt.Sprintf("origin %q is not allowed: start the server with --allow-origin %s to allow it", o, o), http.StatusForbidden)
			return
		}
		if !opt.NoToken && !httpguard.Equal(httpguard.Bearer(r), opt.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sagasu"`)
			http.Error(w, "missing or wrong bearer token: send Authorization: Bearer <token>, the token `sagasu mcp --http` printed", http.StatusUnauthorized)
			return
		}
		if !httpguard.LimitBody(w, r, MaxBodyBytes) {
			http.Error(w, httpguard.TooLarge(MaxBodyBytes).Error(), http.StatusRequestEntityTooLarge)
			return
		}
		if !inFlight.Acquire() {
			w.Header().Set("Retry-After", "5")
			http.Error(w, fmt.Sprintf("%d requests and streams are open, this server's limit: close idle sessions, or wait and retry", inFlight.Cap()), http.StatusTooManyRequests)
			return
		}
		defer inFlight.Release()
		next.ServeHTTP(w, r)
	})
}

// originAllowed accepts loopback origins and the listed ones.
func originAllowed(origin string, allowed []string) bool {
	if slices.Contains(allowed, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return httpguard.IsLoopback(u.Hostname())
}

// ServeHTTP serves the streamable HTTP transport on ln until ctx ends. It
// refuses to serve without a token unless opt.NoToken says so.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, opt HTTPOptions) error {
	if opt.Token == "" && !opt.NoToken {
		return errors.New("no token: give one (--token or SAGASU_MCP_TOKEN; `sagasu mcp --http` makes one by default), or serve without one with --no-token")
	}
	srv := opt.Timeouts.Server(s.Handler(opt))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(shut)
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			_ = srv.Close()
			return nil
		}
		return err
	}
}
