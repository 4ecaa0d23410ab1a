// Package fetch is the HTTP client every remote loader uses: it refuses to
// connect to loopback, private, link-local and other internal addresses
// (checked on the resolved IP at dial time and again on every redirect),
// bounds redirects, and caps the bytes and time a response may take.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Defaults used when Options fields are zero.
const (
	DefaultMaxRedirects = 5
	DefaultTimeout      = 30 * time.Second
)

// Options configure a Client. The zero value is a safe client.
type Options struct {
	// AllowPrivate lets the client connect to loopback, private, link-local
	// and other internal addresses (see Blocked). Off by default: a URL given
	// to sagasu must not reach the machine's own services or a cloud
	// metadata endpoint.
	AllowPrivate bool
	// MaxRedirects bounds the redirects followed per request; 0 means
	// DefaultMaxRedirects, a negative value none.
	MaxRedirects int
	// Timeout bounds one request, body included; 0 means DefaultTimeout.
	Timeout time.Duration
	// LookupNetIP resolves a host name; nil uses net.DefaultResolver. Tests
	// use it to make a name resolve to an address of their choosing.
	LookupNetIP func(ctx context.Context, network, host string) ([]netip.Addr, error)
	// Dial opens the connection to an address that passed the check; nil
	// uses a net.Dialer. Tests use it to reach a local server behind an
	// address that looks public.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// BlockedError says that a request was refused because its target address
// is internal.
type BlockedError struct {
	Host   string     // the host name as given in the URL
	Addr   netip.Addr // the address it resolved to
	Reason string     // "loopback", "private", ...
}

func (e *BlockedError) Error() string {
	at := e.Addr.String()
	if e.Host != "" && e.Host != at {
		at = e.Host + " (" + at + ")"
	}
	return fmt.Sprintf("refused to connect to %s: it is a %s address; sagasu does not fetch from internal networks unless allowed (--allow-private)", at, e.Reason)
}

// Blocked returns why addr may not be fetched from without AllowPrivate
// ("loopback", "private", "link-local", "shared (CGNAT)", "unspecified",
// "multicast", "cloud metadata", ...), or "" when it is a public address.
func Blocked(addr netip.Addr) string {
	addr = addr.Unmap()
	switch {
	case !addr.IsValid():
		return "invalid"
	case addr == metadataV4 || addr == metadataV6:
		return "cloud metadata"
	case addr.IsLoopback():
		return "loopback"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsLinkLocalMulticast():
		return "multicast"
	case addr.IsLinkLocalUnicast():
		return "link-local"
	case addr.IsPrivate(): // 10/8, 172.16/12, 192.168/16, fc00::/7
		return "private"
	}
	for _, p := range blockedPrefixes {
		if p.prefix.Contains(addr) {
			return p.reason
		}
	}
	return ""
}

var (
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")
)

// blockedPrefixes are ranges the netip predicates do not cover. Read only.
var blockedPrefixes = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64"},
}

// NewClient returns an http.Client that enforces o. It ignores proxy
// settings from the environment: a proxy would make the connection, and the
// address check, somewhere else.
func NewClient(o Options) *http.Client {
	g := &guard{opt: o}
	max := o.MaxRedirects
	if max == 0 {
		max = DefaultMaxRedirects
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.dialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > max {
				return fmt.Errorf("stopped after %d redirects (the limit is %d)", len(via)-1, max)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to %q: only http and https are followed", req.URL.Scheme)
			}
			// The dialer checks the address the new host resolves to; a
			// literal IP is refused here already, with a clearer message.
			if !o.AllowPrivate {
				if a, err := netip.ParseAddr(req.URL.Hostname()); err == nil {
					if why := Blocked(a); why != "" {
						return &BlockedError{Host: req.URL.Hostname(), Addr: a, Reason: why}
					}
				}
			}
			return nil
		},
	}
}

// guard is the dialer that checks every resolved address.
type guard struct{ opt Options }

func (g *guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lookup := g.opt.LookupNetIP
		if lookup == nil {
			lookup = net.DefaultResolver.LookupNetIP
		}
		ipNet := "ip"
		switch network {
		case "tcp4":
			ipNet = "ip4"
		case "tcp6":
			ipNet = "ip6"
		}
		addrs, err = lookup(ctx, ipNet, host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
	}
	var firstErr error
	for _, a := range addrs {
		if !g.opt.AllowPrivate {
			if why := Blocked(a); why != "" {
				if firstErr == nil {
					firstErr = &BlockedError{Host: host, Addr: a.Unmap(), Reason: why}
				}
				continue
			}
		}
		// Dial the checked address itself, never the name again, so a DNS
		// answer that changes between the check and the dial (rebinding)
		// cannot slip through.
		target := net.JoinHostPort(a.Unmap().String(), port)
		conn, err := g.dial(ctx, network, target)
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

func (g *guard) dial(ctx context.Context, network, target string) (net.Conn, error) {
	if g.opt.Dial != nil {
		return g.opt.Dial(ctx, network, target)
	}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: g.control}
	return d.DialContext(ctx, network, target)
}

// control checks the address the socket is about to connect to: a second
// line behind dialContext's check.
func (g *guard) control(_, address string, _ syscall.RawConn) error {
	if g.opt.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", address, err)
	}
	if why := Blocked(ap.Addr()); why != "" {
		return &BlockedError{Addr: ap.Addr().Unmap(), Reason: why}
	}
	return nil
}

// ErrTooLarge is returned by ReadLimit when a body is over its limit.
var ErrTooLarge = errors.New("response too large")

// ReadLimit reads at most max bytes of r; more is ErrTooLarge.
func ReadLimit(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: over the %s limit", ErrTooLarge, Size(max))
	}
	return data, nil
}

// Size renders a byte count for messages ("10 MiB", "512 bytes").
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
