package httpguard_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/httpguard"
	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
)

func TestTokens(t *testing.T) {
	a, b := httpguard.NewToken(), httpguard.NewToken()
	if len(a) != 64 || a == b || strings.Trim(a, "0123456789abcdef") != "" {
		t.Errorf("tokens %q and %q: want two different 64-digit hex strings", a, b)
	}
	if !httpguard.Equal(a, a) || httpguard.Equal(b, a) || httpguard.Equal("", "") || httpguard.Equal(a[:63], a) {
		t.Error("Equal must match the token alone, and an empty token nothing")
	}
	for h, want := range map[string]string{"Bearer xyz": "xyz", "bearer  xyz ": "xyz", "Basic xyz": "", "xyz": "", "": ""} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", h)
		if got := httpguard.Bearer(r); got != want {
			t.Errorf("Bearer(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "127.0.0.2": true, "::1": true, "[::1]": true, "LocalHost": true,
		"0.0.0.0": false, "192.168.1.4": false, "evil.example": false, "": false, "[::]": false} {
		if httpguard.IsLoopback(host) != want {
			t.Errorf("IsLoopback(%q) = %v", host, !want)
		}
	}
}

func TestLimit(t *testing.T) {
	l := httpguard.NewLimit(2)
	first, second, third := l.Acquire(), l.Acquire(), l.Acquire()
	if !first || !second || third || l.InUse() != 2 {
		t.Fatal("a Limit of 2 must admit two and refuse the third")
	}
	l.Release()
	if !l.Acquire() {
		t.Error("a released slot is not free again")
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 4 << 20: "4 MiB", 512 << 10: "512 KiB", 1000: "1000 bytes"} {
		if got := httpguard.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestServerDefaults: both servers get every timeout but a write timeout,
// which would cut their live streams.
func TestServerDefaults(t *testing.T) {
	s := httpguard.Timeouts{}.Server(http.NotFoundHandler())
	if s.ReadHeaderTimeout != httpguard.ReadHeaderTimeout || s.ReadTimeout != httpguard.ReadTimeout || s.IdleTimeout != httpguard.IdleTimeout || s.WriteTimeout != 0 || s.MaxHeaderBytes != httpguard.MaxHeaderBytes {
		t.Errorf("server timeouts %v %v %v %v", s.ReadHeaderTimeout, s.ReadTimeout, s.IdleTimeout, s.WriteTimeout)
	}
}

func TestSlowClientsAreCut(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
		}
	})
	short := httpguard.Timeouts{ReadHeader: 100 * time.Millisecond, Read: 200 * time.Millisecond}
	for _, slowHeaders := range []bool{true, false} {
		srv := short.Server(h)
		httpguardtest.SlowClientIsCut(t, func(ln net.Listener) { _ = srv.Serve(ln) }, slowHeaders)
		srv.Close()
	}
}
