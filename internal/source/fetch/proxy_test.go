package fetch

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxyRefusesInternalTargets drives the proxy as a browser would: a
// client whose every request goes through it. Internal targets are refused
// whether they are asked for directly, by name, after a redirect or through
// a CONNECT tunnel; a public-looking one is reached, over plain http and
// through a tunnel.
func TestProxyRefusesInternalTargets(t *testing.T) {
	var secretHits atomic.Int32
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secretHits.Add(1)
		_, _ = io.WriteString(w, "the machine's own secret")
	}))
	defer secret.Close()
	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/to-secret" {
			http.Redirect(w, r, secret.URL+"/", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "public page")
	}))
	defer public.Close()
	tlsPublic := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "public over tls")
	}))
	defer tlsPublic.Close()

	names := map[string]string{"public.test": "203.0.113.7", "tls.test": "203.0.113.8", "rebind.test": "10.0.0.5", "meta.test": "169.254.169.254"}
	targets := map[string]string{"203.0.113.7": public.Listener.Addr().String(), "203.0.113.8": tlsPublic.Listener.Addr().String()}
	o := Options{
		LookupNetIP: func(_ context.Context, _, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(address)
			if to, ok := targets[host]; ok {
				address = to
			}
			var d net.Dialer
			return d.DialContext(ctx, network, address)
		},
	}
	var refused atomic.Int32
	p, err := StartProxy(o, func(string, error) { refused.Add(1) })
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Close()) }()

	proxyURL, err := url.Parse(p.URL)
	require.NoError(t, err)
	browser := &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxyURL),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the test server's own certificate
	}}
	defer browser.CloseIdleConnections()
	get := func(u string) (int, string, error) {
		resp, err := browser.Get(u)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}

	code, body, err := get("http://public.test/")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "public page", body)
	code, body, err = get("https://tls.test/")
	require.NoError(t, err, "a CONNECT tunnel to a public address")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "public over tls", body)

	for _, tc := range []struct{ url, reason string }{
		{secret.URL + "/", "loopback"},
		{strings.Replace(secret.URL, "127.0.0.1", "[64:ff9b::7f00:1]", 1) + "/", "loopback"},
		{"http://rebind.test/", "private"},
		{"http://meta.test/latest/meta-data/", "cloud metadata"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"http://public.test/to-secret", "loopback"},
	} {
		code, body, err := get(tc.url)
		require.NoError(t, err, tc.url)
		assert.Equal(t, http.StatusForbidden, code, tc.url)
		assert.Contains(t, body, "sagasu refused", tc.url)
		assert.Contains(t, body, tc.reason, tc.url)
	}
	// A tunnel to loopback is refused before it opens.
	_, _, err = get(strings.Replace(secret.URL, "http://", "https://", 1) + "/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Forbidden")

	assert.Zero(t, secretHits.Load(), "the loopback server was reached through the proxy")
	assert.Equal(t, int32(7), refused.Load(), "every refusal was reported")

	// A request that is not a proxy request is turned away.
	resp, err := http.Get(p.URL + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// TestProxyAllowPrivate: with AllowPrivate the proxy reaches loopback.
func TestProxyAllowPrivate(t *testing.T) {
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "local page")
	}))
	defer local.Close()
	p, err := StartProxy(Options{AllowPrivate: true}, nil)
	require.NoError(t, err)
	defer p.Close()
	proxyURL, _ := url.Parse(p.URL)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(local.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, "local page", string(b))
}

func TestCheckHost(t *testing.T) {
	o := Options{LookupNetIP: func(_ context.Context, _, host string) ([]netip.Addr, error) {
		switch host {
		case "both.test": // one public and one internal address: refused
			return []netip.Addr{netip.MustParseAddr("203.0.113.1"), netip.MustParseAddr("127.0.0.1")}, nil
		case "public.test":
			return []netip.Addr{netip.MustParseAddr("203.0.113.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
	ctx := context.Background()
	assert.NoError(t, CheckHost(ctx, o, "public.test"))
	for _, h := range []string{"both.test", "127.0.0.1", "[::1]", "169.254.169.254", "[64:ff9b::a9fe:a9fe]", "localhost", "LocalHost.", "admin.localhost"} {
		var be *BlockedError
		assert.ErrorAs(t, CheckHost(ctx, o, h), &be, h)
	}
	assert.Error(t, CheckHost(ctx, o, "nowhere.test"))
	o.AllowPrivate = true
	assert.NoError(t, CheckHost(ctx, o, "127.0.0.1"))
}
