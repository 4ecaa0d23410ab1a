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
	"net/url"
	"strconv"
	"strings"
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
	// "loopback (127.0.0.1 in a NAT64 address)" reads "a loopback address (...)".
	why, inside, _ := strings.Cut(e.Reason, " (")
	if inside != "" {
		inside = " (" + inside
	}
	return fmt.Sprintf("refused to connect to %s: it is a %s address%s; sagasu does not fetch from internal networks unless allowed (--allow-private)", at, why, inside)
}

// Blocked returns why addr may not be fetched from without AllowPrivate
// ("loopback", "private", "link-local", "shared (CGNAT)", "unspecified",
// "multicast", "cloud metadata", ...), or "" when it is a public address.
// An IPv6 address that carries an IPv4 address (NAT64, 6to4, Teredo,
// IPv4-compatible or -translated) is judged by that IPv4 address too: a
// translator or relay would deliver it there.
func Blocked(addr netip.Addr) string {
	addr = addr.Unmap()
	if why := blocked(addr); why != "" {
		return why
	}
	for _, e := range embeddedIPv4(addr) {
		if why := blocked(e.v4); why != "" {
			return fmt.Sprintf("%s (%s in a %s address)", why, e.v4, e.form)
		}
	}
	return ""
}

// blocked judges one address as it is, without looking inside it.
func blocked(addr netip.Addr) string {
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

// embedded is an IPv4 address found inside an IPv6 address.
type embedded struct {
	form string
	v4   netip.Addr
}

// Prefixes of the IPv6 forms that carry an IPv4 address.
var (
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052 well-known prefix
	sixToFourPrefix  = netip.MustParsePrefix("2002::/16")       // RFC 3056
	teredoPrefix     = netip.MustParsePrefix("2001::/32")       // RFC 4380
	compatPrefix     = netip.MustParsePrefix("::/96")           // RFC 4291 IPv4-compatible (deprecated)
	translatedPrefix = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765 IPv4-translated
)

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries: the last
// 32 bits of a NAT64, IPv4-compatible or -translated address, bits 16-47 of
// a 6to4 address, and a Teredo address's server (bits 32-63) and client
// (the last 32 bits, inverted). Mapped addresses are unmapped before.
func embeddedIPv4(a netip.Addr) []embedded {
	if !a.Is6() {
		return nil
	}
	b := a.As16()
	last := netip.AddrFrom4([4]byte(b[12:16]))
	switch {
	case nat64Prefix.Contains(a):
		return []embedded{{"NAT64", last}}
	case translatedPrefix.Contains(a):
		return []embedded{{"IPv4-translated", last}}
	case compatPrefix.Contains(a):
		return []embedded{{"IPv4-compatible", last}}
	case sixToFourPrefix.Contains(a):
		return []embedded{{"6to4", netip.AddrFrom4([4]byte(b[2:6]))}}
	case teredoPrefix.Contains(a):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []embedded{{"Teredo (server)", netip.AddrFrom4([4]byte(b[4:8]))}, {"Teredo (client)", netip.AddrFrom4(client)}}
	}
	return nil
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
	max := o.MaxRedirects
	if max == 0 {
		max = DefaultMaxRedirects
	}
	timeout := o.timeout()
	return &http.Client{
		Transport: newTransport(&guard{opt: o}),
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

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// newTransport is a transport that connects through g and ignores proxy
// settings from the environment.
func newTransport(g *guard) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.dialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: g.opt.timeout(),
	}
}

// guard is the dialer that checks every resolved address.
type guard struct{ opt Options }

// resolve returns the addresses of host (a name or a literal IP).
func (g *guard) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		// RFC 6761: always loopback, whatever a resolver says (browsers
		// resolve these names themselves).
		return []netip.Addr{netip.IPv6Loopback(), netip.AddrFrom4([4]byte{127, 0, 0, 1})}, nil
	}
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
	addrs, err := lookup(ctx, ipNet, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	return addrs, nil
}

// CheckHost resolves host (a name or a literal IP) and returns a
// *BlockedError when any of its addresses is internal, unless
// o.AllowPrivate. It is for a check made before handing a URL to a program
// that will connect by itself (a browser); sagasu's own connections are
// checked at dial time.
func CheckHost(ctx context.Context, o Options, host string) error {
	if o.AllowPrivate {
		return nil
	}
	g := &guard{opt: o}
	addrs, err := g.resolve(ctx, "tcp", host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if why := Blocked(a); why != "" {
			return &BlockedError{Host: host, Addr: a.Unmap(), Reason: why}
		}
	}
	return nil
}

func (g *guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, network, host)
	if err != nil {
		return nil, err
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

// SameOrigin reports whether a and b have the same scheme, host and port
// (a missing port is the scheme's default): where credentials meant for
// one may go.
func SameOrigin(a, b *url.URL) bool {
	return a != nil && b != nil && strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) && originPort(a) == originPort(b)
}

func originPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
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
