// Package httpguardtest helps tests (and load tools) of sagasu's HTTP
// servers: it checks that a server cuts off clients that stall, reads a
// started server's output for its address, and sends a bearer token as a
// configured client does, or one MCP message as a client posts it.
package httpguardtest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// SlowClientIsCut starts serve on a loopback listener and checks that it
// closes a connection whose client sends part of a request and then
// nothing: the headers (slowHeaders) or the body. The client waits at most
// 10 s for the server to hang up. serve runs in its own goroutine; the
// caller stops it.
func SlowClientIsCut(t *testing.T, serve func(net.Listener), slowHeaders bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go serve(ln)
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{\"partial\":"
	if slowHeaders {
		req = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	}
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.Copy(io.Discard, bufio.NewReader(conn))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server kept a connection open for 10 s with a stalled request (slow headers %v)", slowHeaders)
	}
}

// Output is what a started server printed, safe to read while it runs.
type Output struct {
	mu    sync.Mutex
	grown *sync.Cond // signalled on each line and when the output ends
	buf   strings.Builder
	ended bool
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Wait returns the first match of re in the output (with its submatches),
// waiting for the server to print it; it fails t when the output ends
// without one. A server prints its lines in an order, but a reader that
// found one line has not necessarily read the next: wait, do not look.
func (o *Output) Wait(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		if m := re.FindStringSubmatch(o.buf.String()); m != nil {
			return m
		}
		if o.ended {
			t.Fatalf("the server printed nothing matching %s:\n%s", re, o.buf.String())
			return nil
		}
		o.grown.Wait()
	}
}

// Watch reads a server's output from r as it comes and returns the first
// match of re on a line (its address, its link) with all it printed, which
// keeps growing. It fails t when r ends without a match.
func Watch(t *testing.T, r io.Reader, re *regexp.Regexp) (string, *Output) {
	t.Helper()
	out := &Output{}
	out.grown = sync.NewCond(&out.mu)
	go func() {
		lines := bufio.NewScanner(r)
		for lines.Scan() {
			out.mu.Lock()
			out.buf.WriteString(lines.Text() + "\n")
			out.mu.Unlock()
			out.grown.Broadcast()
		}
		out.mu.Lock()
		out.ended = true
		out.mu.Unlock()
		out.grown.Broadcast()
	}()
	return out.Wait(t, re)[0], out
}

// LinkToken is the token in a link `sagasu serve` printed: the #token=
// of its fragment.
func LinkToken(u *url.URL) string {
	q, _ := url.ParseQuery(u.Fragment)
	return q.Get("token")
}

// Bearer returns a transport that sends token with every request over next
// (http.DefaultTransport when nil), as a configured client does.
func Bearer(token string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return bearer{token, next}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// PostMCP sends one JSON-RPC message to an MCP endpoint over HTTP as a
// client does, with the session id and bearer token when not empty, and
// returns the status, the session id the server gave and the body read.
func PostMCP(t *testing.T, url, session, token, msg string) (code int, sessionID, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Mcp-Session-Id"), string(b)
}
