// Package httpguard holds what sagasu's two HTTP servers — the web page
// (`sagasu serve`) and MCP over streamable HTTP (`sagasu mcp --http`) —
// share to stay safe on a machine that other people and programs use:
// random tokens compared in constant time, loopback detection, server
// timeouts, and caps on request bodies and on requests in flight.
package httpguard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// NewToken returns a random token: 32 bytes from crypto/rand, as 64 hex
// digits (safe in a URL, a header and a shell).
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return short)
	return hex.EncodeToString(b)
}

// Equal reports whether got is the token want, in time that does not
// depend on where they differ. An empty want matches nothing.
func Equal(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// Bearer returns the token of an "Authorization: Bearer TOKEN" header, or "".
func Bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// IsLoopback reports whether host (a name or an IP, brackets allowed, no
// port) names this machine only.
func IsLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Default timeouts of both servers. There is no write timeout: it would
// cut the live streams (server-sent events) both serve.
const (
	// ReadHeaderTimeout bounds how long a client may take to send its
	// request's headers.
	ReadHeaderTimeout = 10 * time.Second
	// ReadTimeout bounds how long a client may take to send a whole
	// request, body included.
	ReadTimeout = time.Minute
	// IdleTimeout closes a kept-alive connection that sends nothing.
	IdleTimeout = 2 * time.Minute
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes = 64 << 10
)

// Timeouts are a server's timeouts; a zero field takes its default.
type Timeouts struct {
	ReadHeader, Read, Idle time.Duration
}

// Server returns an http.Server for h with the timeouts set.
func (t Timeouts) Server(h http.Handler) *http.Server {
	or := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: or(t.ReadHeader, ReadHeaderTimeout),
		ReadTimeout: or(t.Read, ReadTimeout), IdleTimeout: or(t.Idle, IdleTimeout), MaxHeaderBytes: MaxHeaderBytes}
}

// LimitBody caps r's body at max bytes. It answers false when the request
// declares a larger body (Content-Length), which the caller should refuse
// with 413 (see TooLarge); a body that turns out larger while it is read
// fails with an *http.MaxBytesError.
func LimitBody(w http.ResponseWriter, r *http.Request, max int64) bool {
	if r.ContentLength > max {
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, max)
	return true
}

// TooLarge is the message of a refused body of at most max bytes.
func TooLarge(max int64) error {
	return fmt.Errorf("the request body is larger than this server takes (%s): send less", Size(max))
}

// IsTooLarge reports whether err comes from reading a body past its cap.
func IsTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// Size says n bytes for people: "1 MiB", "4 MiB", "512 KiB".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Limit admits at most a fixed number of holders at once; the rest are
// refused at once rather than queued (a flood must not pile up).
type Limit struct {
	slots chan struct{}
}

// NewLimit returns a Limit of n holders (at least 1).
func NewLimit(n int) *Limit {
	return &Limit{slots: make(chan struct{}, max(n, 1))}
}

// Acquire takes a slot and reports whether there was one; a caller that
// got one must Release it.
func (l *Limit) Acquire() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release gives a slot back.
func (l *Limit) Release() { <-l.slots }

// Cap is how many holders the Limit admits.
func (l *Limit) Cap() int { return cap(l.slots) }

// InUse is how many hold a slot now.
func (l *Limit) InUse() int { return len(l.slots) }
