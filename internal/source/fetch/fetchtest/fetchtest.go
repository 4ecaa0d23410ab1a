// Package fetchtest lets tests reach local servers under public-looking
// names through sagasu's address guard: each name resolves to an address
// in 203.0.113.0/24 (TEST-NET-3, which the guard lets through) and that
// address is dialled on the server's loopback port. The guard itself stays
// on, so loopback, private and metadata addresses are still refused.
package fetchtest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/source/fetch"
)

// Public returns guard options under which each name in hosts (name →
// "127.0.0.1:PORT", a test server's listener address) is a public host.
// Other names resolve as extra says (name → address, e.g. "10.0.0.5" for a
// name that points inside), and otherwise do not resolve. Addresses that
// are not the public stand-ins are dialled as they are.
func Public(hosts map[string]string, extra map[string]string) fetch.Options {
	public := map[string]netip.Addr{}
	local := map[netip.Addr]string{}
	i := 10
	for name, addr := range hosts {
		a := netip.MustParseAddr(fmt.Sprintf("203.0.113.%d", i))
		i++
		public[strings.ToLower(name)] = a
		local[a] = addr
	}
	return fetch.Options{
		LookupNetIP: func(_ context.Context, _, host string) ([]netip.Addr, error) {
			host = strings.ToLower(host)
			if a, ok := public[host]; ok {
				return []netip.Addr{a}, nil
			}
			if s, ok := extra[host]; ok {
				return []netip.Addr{netip.MustParseAddr(s)}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			// Any other address is dialled as it is: were the guard to let an
			// internal address through, the test would reach it and see.
			if host, _, err := net.SplitHostPort(address); err == nil {
				if a, err := netip.ParseAddr(host); err == nil {
					if to, ok := local[a]; ok {
						address = to
					}
				}
			}
			var d net.Dialer
			return d.DialContext(ctx, network, address)
		},
	}
}
