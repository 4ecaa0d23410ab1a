package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"
)

// Proxy is a forward HTTP proxy on a loopback port that connects only
// where the guard lets it: plain http requests in absolute form and CONNECT
// tunnels (https, wss) are dialled through the same address check as
// NewClient, so a browser that uses it reaches no internal address, however
// a page makes it ask: a typed URL, a link, a redirect, a script or a
// subresource. Names are resolved here, by the proxy, and the checked
// address is the one dialled.
type Proxy struct {
	// URL is where the proxy listens, "http://127.0.0.1:PORT".
	URL string

	g        *guard
	srv      *http.Server
	rp       *httputil.ReverseProxy
	onRefuse func(target string, err error)

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// StartProxy serves a Proxy enforcing o on a free loopback port until
// Close. onRefuse, when not nil, is told of each refused request (the
// target and why).
func StartProxy(o Options, onRefuse func(target string, err error)) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the browser's guarded proxy: %w", err)
	}
	p := &Proxy{URL: "http://" + ln.Addr().String(), g: &guard{opt: o}, onRefuse: onRefuse, tunnels: map[net.Conn]struct{}{}}
	p.rp = &httputil.ReverseProxy{
		// The outgoing request is the incoming one (an absolute URL); hop-by-hop
		// headers such as Proxy-Authorization are dropped, no X-Forwarded-For
		// is added.
		Rewrite:       func(*httputil.ProxyRequest) {},
		Transport:     newTransport(p.g),
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.refuse(w, r.URL.Host, err)
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	p.wg.Go(func() { _ = p.srv.Serve(ln) })
	return p, nil
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.Scheme == "http" && r.URL.Host != "":
		p.rp.ServeHTTP(w, r)
	default:
		http.Error(w, "this is sagasu's browser proxy: it takes absolute http:// requests and CONNECT only", http.StatusBadRequest)
	}
}

// refuse answers a request the guard (or the network) refused: 403 with
// the reason when the target is internal, 502 otherwise.
func (p *Proxy) refuse(w http.ResponseWriter, target string, err error) {
	if p.onRefuse != nil {
		p.onRefuse(target, err)
	}
	code := http.StatusBadGateway
	var be *BlockedError
	if errors.As(err, &be) {
		code = http.StatusForbidden
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "sagasu refused to load %s: %v\n", target, err)
}

// connect opens a tunnel to r.Host ("host:port") once the guard allowed
// the address.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	if _, _, err := net.SplitHostPort(r.Host); err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	upstream, err := p.g.dialContext(ctx, "tcp", r.Host)
	cancel()
	if err != nil {
		p.refuse(w, r.Host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "tunnels are not supported here", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if !p.track(client, upstream) {
		client.Close()
		upstream.Close()
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		p.untrack(client, upstream)
		return
	}
	// Bytes the client sent after the CONNECT line are already in buf.
	var fromClient io.Reader = client
	if n := buf.Reader.Buffered(); n > 0 {
		pending, _ := buf.Reader.Peek(n)
		fromClient = io.MultiReader(bytes.NewReader(bytes.Clone(pending)), client)
	}
	// When either side is done, both connections close, which ends the
	// other copy too.
	p.wg.Go(func() {
		_, _ = io.Copy(upstream, fromClient)
		p.untrack(client, upstream)
	})
	p.wg.Go(func() {
		_, _ = io.Copy(client, upstream)
		p.untrack(client, upstream)
	})
}

func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.tunnels, c)
	}
}

// Close stops the proxy and ends its open tunnels.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	p.rp.Transport.(*http.Transport).CloseIdleConnections()
	p.wg.Wait()
	return err
}
