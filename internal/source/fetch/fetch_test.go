package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlocked(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1":       "loopback",
		"::1":             "loopback",
		"10.1.2.3":        "private",
		"172.16.0.1":      "private",
		"192.168.1.1":     "private",
		"fd12::1":         "private",
		"169.254.10.1":    "link-local",
		"fe80::1":         "link-local",
		"100.64.0.1":      "shared (CGNAT)",
		"0.0.0.0":         "unspecified",
		"::":              "unspecified",
		"224.0.0.1":       "multicast",
		"ff02::1":         "multicast",
		"169.254.169.254": "cloud metadata",
		"fd00:ec2::254":   "cloud metadata",
		"::ffff:10.0.0.1": "private",
		"93.184.216.34":   "",
		"2606:4700::1111": "",
		"140.82.112.3":    "",
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			assert.Equal(t, want, Blocked(netip.MustParseAddr(in)))
		})
	}
}

// publicDialer makes "public.test" resolve to a public-looking address and
// dials that address on the local test server, so the guard sees a public
// address while the test reaches 127.0.0.1.
func publicDialer(t *testing.T, srv *httptest.Server, names map[string]string) Options {
	t.Helper()
	local := srv.Listener.Addr().String()
	return Options{
		LookupNetIP: func(_ context.Context, _, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			if strings.HasPrefix(address, "203.0.113.") {
				address = local
			}
			var d net.Dialer
			return d.DialContext(ctx, network, address)
		},
	}
}

func TestGuardRefusesInternalTargets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:1/secret", http.StatusFound)
		case "/to-rebound":
			http.Redirect(w, r, "http://rebind.test/secret", http.StatusFound)
		default:
			_, _ = io.WriteString(w, "public page")
		}
	}))
	defer srv.Close()
	names := map[string]string{"public.test": "203.0.113.7", "rebind.test": "10.0.0.5", "meta.test": "169.254.169.254"}
	ctx := context.Background()
	get := func(c *http.Client, url string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	c := NewClient(publicDialer(t, srv, names))
	body, err := get(c, "http://public.test/")
	require.NoError(t, err, "a public-looking address is fetched")
	assert.Equal(t, "public page", body)

	for _, tc := range []struct{ url, reason string }{
		{srv.URL + "/", "loopback"},                   // the literal loopback URL
		{"http://rebind.test/", "private"},            // a name that resolves to 10/8
		{"http://meta.test/latest", "cloud metadata"}, // the metadata service
		{"http://public.test/to-loopback", "loopback"},
		{"http://public.test/to-rebound", "private"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := get(c, tc.url)
			var be *BlockedError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, tc.reason, be.Reason)
			assert.Contains(t, err.Error(), "--allow-private")
		})
	}

	// With AllowPrivate the loopback server is reachable.
	open := NewClient(Options{AllowPrivate: true})
	body, err = get(open, srv.URL+"/")
	require.NoError(t, err)
	assert.Equal(t, "public page", body)
}

func TestGuardControlChecksTheSocketAddress(t *testing.T) {
	// Without a Dial hook the real dialer runs and its Control hook sees the
	// loopback address even when a resolver hook let it through.
	g := &guard{opt: Options{}}
	err := g.control("tcp4", "127.0.0.1:80", nil)
	var be *BlockedError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "loopback", be.Reason)
	assert.NoError(t, g.control("tcp4", "93.184.216.34:443", nil))
}

func TestRedirectLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
	}))
	defer srv.Close()
	c := NewClient(Options{AllowPrivate: true, MaxRedirects: 3})
	resp, err := c.Get(srv.URL + "/a")
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the limit is 3")
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := NewClient(Options{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	resp, err := c.Get(srv.URL)
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "a slow server times out: %v", err)
}

func TestReadLimit(t *testing.T) {
	b, err := ReadLimit(strings.NewReader("12345"), 5)
	require.NoError(t, err)
	assert.Equal(t, "12345", string(b))
	_, err = ReadLimit(strings.NewReader("123456"), 5)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "5 bytes")
	assert.Equal(t, "10 MiB", Size(10<<20))
}

// TestBlockedEmbeddedIPv4: IPv6 forms that carry an IPv4 address (NAT64,
// 6to4, Teredo, IPv4-compatible, mapped, translated) are judged by the IPv4
// address inside them, so [64:ff9b::7f00:1] is loopback.
func TestBlockedEmbeddedIPv4(t *testing.T) {
	forms := []struct {
		name  string
		embed func(v4 [4]byte) string
	}{
		{"mapped", func(b [4]byte) string { return fmt.Sprintf("::ffff:%d.%d.%d.%d", b[0], b[1], b[2], b[3]) }},
		{"translated", func(b [4]byte) string { return fmt.Sprintf("::ffff:0:%d.%d.%d.%d", b[0], b[1], b[2], b[3]) }},
		{"IPv4-compatible", func(b [4]byte) string { return fmt.Sprintf("::%02x%02x:%02x%02x", b[0], b[1], b[2], b[3]) }},
		{"NAT64", func(b [4]byte) string { return fmt.Sprintf("64:ff9b::%d.%d.%d.%d", b[0], b[1], b[2], b[3]) }},
		{"6to4", func(b [4]byte) string { return fmt.Sprintf("2002:%02x%02x:%02x%02x::1", b[0], b[1], b[2], b[3]) }},
		{"Teredo server", func(b [4]byte) string {
			// Server b, client 203.0.113.9 (obfuscated: each bit flipped).
			return fmt.Sprintf("2001:0:%02x%02x:%02x%02x:0:f227:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3], ^byte(203), ^byte(0), ^byte(113), ^byte(9))
		}},
		{"Teredo client", func(b [4]byte) string {
			// Server 203.0.113.9, client b (obfuscated).
			return fmt.Sprintf("2001:0:cb00:7109:0:f227:%02x%02x:%02x%02x", ^b[0], ^b[1], ^b[2], ^b[3])
		}},
	}
	targets := []struct {
		v4     [4]byte
		reason string
	}{
		{[4]byte{127, 0, 0, 1}, "loopback"},
		{[4]byte{10, 1, 2, 3}, "private"},
		{[4]byte{192, 168, 0, 10}, "private"},
		{[4]byte{169, 254, 169, 254}, "cloud metadata"},
		{[4]byte{169, 254, 1, 1}, "link-local"},
		{[4]byte{100, 64, 0, 1}, "shared (CGNAT)"},
		{[4]byte{0, 0, 0, 0}, "unspecified"},
		{[4]byte{93, 184, 216, 34}, ""}, // public: still fetched
	}
	for _, f := range forms {
		for _, tc := range targets {
			in := f.embed(tc.v4)
			t.Run(f.name+"/"+in, func(t *testing.T) {
				a, err := netip.ParseAddr(in)
				require.NoError(t, err)
				got := Blocked(a)
				if tc.reason == "" {
					assert.Empty(t, got, "%s embeds a public address", in)
					return
				}
				assert.True(t, strings.HasPrefix(got, tc.reason), "%s: got %q, want %q first", in, got, tc.reason)
				if f.name != "mapped" && blocked(a) == "" { // (:: is unspecified itself)
					assert.Contains(t, got, fmt.Sprintf("%d.%d.%d.%d", tc.v4[0], tc.v4[1], tc.v4[2], tc.v4[3]), "the reason names the embedded address")
				}
			})
		}
	}
	// The local-use NAT64 prefix is internal whatever it embeds.
	assert.NotEmpty(t, Blocked(netip.MustParseAddr("64:ff9b:1::5db8:d822")))
	assert.NotEmpty(t, Blocked(netip.MustParseAddr("64:ff9b:1:7f00:1::")))
	// Ordinary global IPv6 addresses are not mistaken for these forms.
	for _, in := range []string{"2606:4700::1111", "2a00:1450:4001::200e", "2001:4860:4860::8888"} {
		assert.Empty(t, Blocked(netip.MustParseAddr(in)), in)
	}
}

// TestGuardRefusesEmbeddedLoopback dials a NAT64 form of 127.0.0.1: the
// check must refuse it before any connection is tried.
func TestGuardRefusesEmbeddedLoopback(t *testing.T) {
	dialed := false
	c := NewClient(Options{Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		dialed = true
		return nil, errors.New("the test dialer is never meant to be reached")
	}})
	for _, u := range []string{"http://[64:ff9b::7f00:1]/", "http://[2002:a9fe:a9fe::1]/latest/meta-data/", "http://[::7f00:1]:8080/"} {
		resp, err := c.Get(u)
		if resp != nil {
			resp.Body.Close()
		}
		var be *BlockedError
		require.ErrorAs(t, err, &be, u)
		assert.Contains(t, err.Error(), "--allow-private")
	}
	assert.False(t, dialed, "no connection was attempted")
}

func TestBlockedErrorNamesTheEmbeddedAddress(t *testing.T) {
	a := netip.MustParseAddr("64:ff9b::7f00:1")
	err := &BlockedError{Host: a.String(), Addr: a, Reason: Blocked(a)}
	assert.Equal(t, "refused to connect to 64:ff9b::7f00:1: it is a loopback address (127.0.0.1 in a NAT64 address); "+
		"sagasu does not fetch from internal networks unless allowed (--allow-private)", err.Error())
}
