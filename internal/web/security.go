package web

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/httpguard"
)

// CSP is the Content-Security-Policy of every answer: the page loads only
// its own scripts, styles and data; nothing inline, nothing from elsewhere.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// checkListen refuses to serve without a token unless noToken says so, and
// off loopback in any case.
func checkListen(listen, token string, noToken bool) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("listen address %q: give host:port, such as 127.0.0.1:7373: %w", listen, err)
	}
	switch {
	case token != "":
		return nil
	case !httpguard.IsLoopback(host):
		return fmt.Errorf("listen address %q is reachable from other machines: give a token with --token or SAGASU_SERVE_TOKEN (or listen on 127.0.0.1)", listen)
	case !noToken:
		return errors.New("no token: give one (--token or SAGASU_SERVE_TOKEN; `sagasu serve` makes one by default), or serve without one with --no-token")
	}
	return nil
}

// guard wraps the API in the security checks, in this order: response
// headers (CSP), Host (DNS rebinding), Origin (other sites), the custom
// header on writes, the token (on /api/ only: the page's files carry no
// data), then the body's size.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !s.hostAllowed(r.Host) {
			s.fail(w, http.StatusForbidden, fmt.Errorf("host %q is not served here: open the page at http://%s (a request naming another host may be a DNS rebinding attack)", r.Host, s.opt.Listen))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			s.fail(w, http.StatusForbidden, fmt.Errorf("requests from origin %q are refused: only the page served here may call this API", o))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
				s.fail(w, http.StatusForbidden, fmt.Errorf("cross-site %s refused: only the page served here may change things", r.Method))
				return
			}
			if r.Header.Get("X-Sagasu") != "1" {
				s.fail(w, http.StatusForbidden, fmt.Errorf("%s %s refused: the X-Sagasu: 1 header is missing (the page sends it; other sites cannot)", r.Method, r.URL.Path))
				return
			}
		}
		if !s.opt.NoToken && strings.HasPrefix(r.URL.Path, "/api/") && !s.authorized(w, r) {
			return
		}
		if !httpguard.LimitBody(w, r, MaxBodyBytes) {
			s.fail(w, http.StatusRequestEntityTooLarge, httpguard.TooLarge(MaxBodyBytes))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed checks the Host header: a loopback name when serving on
// loopback; off loopback (always with a token) the listen host, or any
// host when listening on every interface, since the token then guards
// each request.
func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if httpguard.IsLoopback(host) {
		return true
	}
	lh, _, _ := net.SplitHostPort(s.opt.Listen)
	if s.opt.Token == "" || httpguard.IsLoopback(lh) {
		return false
	}
	ip := net.ParseIP(lh)
	return lh == "" || (ip != nil && ip.IsUnspecified()) || strings.EqualFold(strings.Trim(host, "[]"), strings.Trim(lh, "[]"))
}

// sameOrigin reports whether origin is http(s)://host, host being the
// request's Host header.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// authorized checks the token, which only an Authorization: Bearer header
// carries. The page reads it from its link's #token= fragment (which never
// reaches a server) and keeps it in its origin's storage. No cookie holds
// it: browsers send a cookie for 127.0.0.1 to every port, so any other
// local service the browser visits would receive it.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if httpguard.Equal(httpguard.Bearer(r), s.opt.Token) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="sagasu"`)
	s.fail(w, http.StatusUnauthorized, errors.New("a token is required: open the link `sagasu serve` printed (it ends in #token=...), or send Authorization: Bearer TOKEN"))
	return false
}
