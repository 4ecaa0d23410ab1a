package app

import (
	"context"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/embed"
)

// An API key goes to a model vendor's own host, or to an address the user
// named: a flag, the environment, the user-level config, or a project file
// the user named or trusted (the configuration, once Load has filtered an
// untrusted file). An address that came from anywhere else, such as the
// embedder pinned in an index that was cloned with a repository, gets no
// key: a local server needs none, and a server that needs one can be named.

// apiKeyVars are the variables that hold model vendors' keys.
var apiKeyVars = []string{"OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY"}

// vendorHosts are the hosts each driver sends its key to when no address
// is given.
var vendorHosts = map[string]string{
	"openai":    "api.openai.com",
	"gemini":    "generativelanguage.googleapis.com",
	"anthropic": "api.anthropic.com",
}

// envFor returns the environment a model driver reads its key from when it
// talks to address: the real one when address is empty, the vendor's own
// host over https, or named is set; otherwise the environment without the
// vendors' keys, after a warning that says how to send one.
func (a *App) envFor(driver, address string, named bool) func(string) string {
	if address == "" || named || vendorAddress(driver, address) {
		return a.Getenv
	}
	log := a.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.Warn("no API key is sent to this address: it comes from the index, not from you; name it with a flag, SAGASU_* variable or your user config (see `sagasu trust --help`) to send one",
		"driver", driver, "address", address)
	getenv := a.Getenv
	return func(k string) string {
		if slices.Contains(apiKeyVars, k) {
			return ""
		}
		return getenv(k)
	}
}

// vendorAddress reports whether address is driver's vendor's own API over
// https.
func vendorAddress(driver, address string) bool {
	u, err := url.Parse(address)
	return err == nil && u.Scheme == "https" && strings.EqualFold(u.Hostname(), vendorHosts[driver])
}

// sameAddress reports whether two base URLs name the same endpoint
// (scheme, host and port; a trailing slash aside).
func sameAddress(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ua, err1 := url.Parse(strings.TrimRight(a, "/"))
	ub, err2 := url.Parse(strings.TrimRight(b, "/"))
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) && ua.Path == ub.Path
}

// buildEmbedder builds c's embedder with the key rule above: c's address
// counts as named when it is the configured one.
func (a *App) buildEmbedder(ctx context.Context, c EmbedderConfig) (embed.Embedder, error) {
	return BuildEmbedder(ctx, c, a.envFor(c.Driver, c.URL, sameAddress(c.URL, a.Config.Embedder.URL)))
}
