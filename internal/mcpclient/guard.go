package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/source/fetch"
)

// What a stdio server may inherit and how a browser server is kept off
// internal addresses. A server is a program sagasu starts for a model that
// reads untrusted pages: it gets what it needs to run, and no credential of
// sagasu's unless its config names it.

// BaseEnv names the variables every stdio server gets from sagasu's
// environment: where programs and the home folder are, the user and shell,
// the language and time zone (and every LC_ variable), the temporary
// folder, the display for a headed browser, and on Windows what programs
// need to start. Nothing here is a credential; anything else reaches a
// server only through its config's env or pass_env.
var BaseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL",
	"LANG", "LANGUAGE", "TZ",
	"TMPDIR", "TMP", "TEMP",
	"XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
	"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERPROFILE", "USERNAME",
	"HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES",
	"NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE",
}

// childEnv is the environment of a stdio server: the basics and the
// PassEnv variables from environ, then extra (sagasu's own settings for
// the server), then the config's Env, which wins.
func childEnv(cfg ServerConfig, environ []string, extra map[string]string) []string {
	same := func(a, b string) bool { return a == b }
	if runtime.GOOS == "windows" {
		same = strings.EqualFold // Windows names ignore case
	}
	wanted := func(name string) bool {
		if strings.HasPrefix(name, "LC_") {
			return true
		}
		for _, list := range [][]string{BaseEnv, cfg.PassEnv} {
			for _, w := range list {
				if same(name, w) {
					return true
				}
			}
		}
		return false
	}
	env := []string{} // never nil: a nil Env would inherit everything
	for _, kv := range environ {
		if name, _, ok := strings.Cut(kv, "="); ok && wanted(name) {
			env = append(env, kv)
		}
	}
	for _, set := range []map[string]string{extra, cfg.Env} {
		keys := make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+set[k])
		}
	}
	return env
}

// blockedOrigins are the origins Playwright MCP is asked to block itself
// (PLAYWRIGHT_MCP_BLOCKED_ORIGINS), as a second line behind the proxy. Its
// patterns match host names literally (no ranges, and in 0.0.83 no IPv6
// literals), so this list holds the usual names of loopback and of the
// metadata service; the proxy is what covers every internal address.
var blockedOrigins = func() string {
	var list []string
	for _, h := range []string{"localhost", "127.0.0.1", "0.0.0.0", "169.254.169.254", "metadata.google.internal", "metadata"} {
		list = append(list, h, "http://"+h+":*", "https://"+h+":*")
	}
	return strings.Join(list, ";")
}()

// browserEnv is what sagasu sets for a browser server's command: the proxy
// its browser must use, the origins it must block, and no tools of a
// page's own (WebMCP), which would reach the model around the tools list.
func browserEnv(proxyURL string, allowPrivate bool) map[string]string {
	env := map[string]string{
		"PLAYWRIGHT_MCP_PROXY_SERVER": proxyURL,
		"PLAYWRIGHT_MCP_WEBMCP":       "false",
	}
	if !allowPrivate {
		env["PLAYWRIGHT_MCP_BLOCKED_ORIGINS"] = blockedOrigins
	}
	return env
}

// startProxy starts the browser's guarded proxy once per server; it lives
// until the server is closed and serves every restart. s.mu is held.
func (s *server) startProxy() (string, error) {
	if s.proxy == nil {
		p, err := fetch.StartProxy(s.network, func(target string, err error) {
			var be *fetch.BlockedError
			if errors.As(err, &be) {
				s.log.Warn("the browser was kept from an internal address", "server", s.cfg.Name, "target", target, "error", err)
				return
			}
			// Names that do not resolve, servers that do not answer: also
			// chromium's own background requests on a machine offline.
			s.log.Debug("the browser's request failed at the proxy", "server", s.cfg.Name, "target", target, "error", err)
		})
		if err != nil {
			return "", err
		}
		s.proxy = p
	}
	return s.proxy.URL, nil
}

// checkURLs refuses a call whose url argument (browser_navigate's, or any
// top-level argument named url) is not an http(s) address the guard
// allows, before the browser is asked to open it.
func (s *server) checkURLs(ctx context.Context, tool string, args json.RawMessage) error {
	if len(strings.TrimSpace(string(args))) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil // Call reports malformed arguments
	}
	for name, raw := range obj {
		if !strings.EqualFold(name, "url") {
			continue
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("refused: %s: the url argument is not a string", tool)
		}
		if err := s.checkURL(ctx, v); err != nil {
			return fmt.Errorf("refused: %s %s: %w", tool, v, err)
		}
	}
	return nil
}

func (s *server) checkURL(ctx context.Context, raw string) error {
	raw = strings.TrimSpace(raw)
	if raw == "about:blank" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme == "" || u.Opaque != "" && u.Host == "" && !strings.Contains(raw, "://") {
		return fmt.Errorf("give a whole http:// or https:// URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("only http and https pages are opened, not %q", u.Scheme+":")
	}
	if u.Hostname() == "" {
		return fmt.Errorf("the URL has no host")
	}
	return fetch.CheckHost(ctx, s.network, u.Hostname())
}

// environ returns opt.Environ or the process's own.
func environ(opt Options) []string {
	if opt.Environ != nil {
		return opt.Environ
	}
	return os.Environ()
}
