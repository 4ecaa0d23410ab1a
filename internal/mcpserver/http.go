package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the streamable HTTP endpoint is served.
const Path = "/mcp"

// HTTPOptions secure the streamable HTTP transport.
type HTTPOptions struct {
	// Token, when set, must come with every request as
	// "Authorization: Bearer <token>". It is required (see CheckAddr) when
	// the server listens on anything but a loopback address.
	Token string
	// AllowedOrigins are browser origins ("https://app.example.com")
	// allowed besides loopback ones. A request that carries any other Origin
	// header is refused: that is how a web page, or a DNS-rebinding attack,
	// reaches a local server.
	AllowedOrigins []string
}

// CheckAddr refuses to serve a non-loopback address without a token.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: give host:port, e.g. 127.0.0.1:8765", addr)
	}
	if isLoopback(host) || token != "" {
		return nil
	}
	return fmt.Errorf("--http %s listens beyond this machine: set a bearer token with --token or SAGASU_MCP_TOKEN (or bind 127.0.0.1)", addr)
}

// isLoopback reports whether host names this machine only.
func isLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler returns the streamable HTTP handler, served at Path, with the
// Origin check and the bearer token in front of it.
func (s *Server) Handler(opt HTTPOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger: s.log,
		// Clients that vanish without closing their session free it after an idle hour.
		SessionTimeout: time.Hour,
	})
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	return s.protect(mux, opt)
}

func (s *Server) protect(next http.Handler, opt HTTPOptions) http.Handler {
	want := []byte("Bearer " + opt.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, opt.AllowedOrigins) {
			s.log.Warn("refused request from origin", "origin", o)
			http.Error(w, fmt.Sprintf("origin %q is not allowed: start the server with --allow-origin %s to allow it", o, o), http.StatusForbidden)
			return
		}
		if opt.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sagasu"`)
			http.Error(w, "missing or wrong bearer token: send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
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
	return isLoopback(u.Hostname())
}

// ServeHTTP serves the streamable HTTP transport on ln until ctx ends.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, opt HTTPOptions) error {
	srv := &http.Server{Handler: s.Handler(opt), ReadHeaderTimeout: 10 * time.Second}
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
