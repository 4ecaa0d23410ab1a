// Package httpguardtest checks, for tests, that a server built with
// package httpguard cuts off clients that stall.
package httpguardtest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
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
