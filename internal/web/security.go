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

// tokenCookie names the cookie that holds the token a one-time ?token=
// link handed over. Cookies do not tell ports apart, so the name carries
// the port: two servers on one machine keep one cookie each.
func tokenCookie(r *http.Request) string {
	_, port, _ := net.SplitHostPort(r.Host)
	return "sagasu_token_" + port
}

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
// header on writes, the token, then the body's size.
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
		if !s.opt.NoToken && !s.authorized(w, r) {
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

// authorized checks the token: a bearer header, the cookie, or a one-time
// ?token= on a page load, which sets the cookie (HttpOnly, SameSite=Strict)
// and reloads without it, so the token leaves the address bar and the
// history.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	want := s.opt.Token
	if httpguard.Equal(httpguard.Bearer(r), want) {
		return true
	}
	if c, err := r.Cookie(tokenCookie(r)); err == nil && httpguard.Equal(c.Value, want) {
		return true
	}
	if t := r.URL.Query().Get("token"); r.Method == http.MethodGet && httpguard.Equal(t, want) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie(r), Value: want, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		u := *r.URL
		q := u.Query()
		q.Del("token")
		u.RawQuery = q.Encode()
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="sagasu"`)
	msg := "a token is required: open the link `sagasu serve` printed (it ends in ?token=...), or send Authorization: Bearer TOKEN"
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		// A person opening the page: say it in the page.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "sagasu: %s.\nThe token keeps other users and programs on this machine out of your index and files.\n", msg)
		return false
	}
	s.fail(w, http.StatusUnauthorized, errors.New(msg))
	return false
}
