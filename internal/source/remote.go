package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/source/fetch"
)

// Defaults for Remote fields left zero.
const (
	DefaultGitHubAPIURL   = "https://api.github.com"
	DefaultGitHubRawURL   = "https://raw.githubusercontent.com"
	DefaultRateLimitWait  = 60 * time.Second
	DefaultRemoteMaxFiles = 20000
	DefaultRemoteMaxBytes = 512 << 20
	DefaultRemoteTimeout  = 10 * time.Minute
)

// Remote configures the loaders that fetch over the network. The zero value
// fetches public GitHub and public web pages without a token.
type Remote struct {
	// AllowPrivate lets fetches reach loopback, private, link-local and
	// other internal addresses; off, they are refused (see package fetch).
	AllowPrivate bool
	// GitHubToken is sent by the GitHub and gist loaders only, to the origin
	// (scheme, host, port) of GitHubAPIURL or GitHubRawURL only, never
	// across a redirect to another origin; the web loader never sends it. It
	// is never logged, stored or put in an error.
	GitHubToken string
	// GitHubAPIURL is the REST API base ("" means DefaultGitHubAPIURL); set it
	// for GitHub Enterprise ("https://ghe.example.com/api/v3").
	GitHubAPIURL string
	// GitHubRawURL is the raw-content base ("" means DefaultGitHubRawURL when
	// GitHubAPIURL is the default, else file contents are read through the
	// API's git/blobs endpoint).
	GitHubRawURL string
	// RateLimitWait is the longest a load waits for GitHub's rate limit to
	// reset; a later reset fails with a message saying when to retry. 0 means
	// DefaultRateLimitWait; negative never waits.
	RateLimitWait time.Duration
	// MaxFiles caps the files one remote source may have (0: DefaultRemoteMaxFiles).
	MaxFiles int
	// MaxBytes caps the bytes fetched for one remote source (0: DefaultRemoteMaxBytes).
	MaxBytes int64
	// Timeout caps the time one remote source may take (0: DefaultRemoteTimeout).
	Timeout time.Duration
	// Fetch holds the HTTP client's settings (timeouts, redirects, and the
	// resolver and dialer hooks tests use). Its AllowPrivate is taken from
	// the field above.
	Fetch fetch.Options
}

// remote is what the GitHub, gist and web loaders share: the guarded client,
// limits, and the GitHub credentials.
type remote struct {
	opt      Options
	client   *http.Client
	log      *slog.Logger
	api, raw *url.URL // raw is nil when contents come through the API
	token    string
	wait     time.Duration
	maxFiles int
	maxBytes int64
	timeout  time.Duration
	now      func() time.Time
}

func newRemote(opt Options) *remote {
	r := opt.Remote
	fo := r.Fetch
	fo.AllowPrivate = r.AllowPrivate
	rm := &remote{
		opt:      opt,
		client:   fetch.NewClient(fo),
		log:      opt.Logger,
		token:    r.GitHubToken,
		wait:     r.RateLimitWait,
		maxFiles: r.MaxFiles,
		maxBytes: r.MaxBytes,
		timeout:  r.Timeout,
		now:      time.Now,
	}
	if rm.log == nil {
		rm.log = slog.New(slog.DiscardHandler)
	}
	if rm.wait == 0 {
		rm.wait = DefaultRateLimitWait
	}
	if rm.maxFiles <= 0 {
		rm.maxFiles = DefaultRemoteMaxFiles
	}
	if rm.maxBytes <= 0 {
		rm.maxBytes = DefaultRemoteMaxBytes
	}
	if rm.timeout <= 0 {
		rm.timeout = DefaultRemoteTimeout
	}
	apiURL := strings.TrimRight(r.GitHubAPIURL, "/")
	rawURL := strings.TrimRight(r.GitHubRawURL, "/")
	if apiURL == "" {
		apiURL = DefaultGitHubAPIURL
		if rawURL == "" {
			rawURL = DefaultGitHubRawURL
		}
	}
	// Malformed bases surface when a GitHub input is loaded (checkBases).
	rm.api, _ = url.Parse(apiURL)
	if rawURL != "" {
		rm.raw, _ = url.Parse(rawURL)
	}
	check := rm.client.CheckRedirect
	rm.client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := check(req, via); err != nil {
			return err
		}
		rm.authorize(req)
		return nil
	}
	return rm
}

// withoutToken is rm for a loader that must never send GITHUB_TOKEN.
func (rm *remote) withoutToken() *remote {
	rm.token = ""
	return rm
}

// checkBases says what is wrong with the configured GitHub URLs.
func (rm *remote) checkBases() error {
	for name, u := range map[string]*url.URL{"GitHub API URL (SAGASU_GITHUB_API_URL)": rm.api, "GitHub raw URL (SAGASU_GITHUB_RAW_URL)": rm.raw} {
		if u == nil && strings.HasPrefix(name, "GitHub raw") {
			continue
		}
		if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("the %s is not an http(s) URL; fix it", name)
		}
	}
	return nil
}

// maxFile is the per-file size limit shared with local files.
func (rm *remote) maxFile() int64 {
	if rm.opt.MaxFileSize > 0 {
		return rm.opt.MaxFileSize
	}
	return DefaultMaxFileSize
}

// statusError is an HTTP answer other than the one expected.
type statusError struct {
	code int
	url  string
	msg  string // GitHub's "message", if any
}

func (e *statusError) Error() string {
	s := fmt.Sprintf("GET %s: %d %s", e.url, e.code, http.StatusText(e.code))
	if e.msg != "" {
		s += ": " + e.msg
	}
	return s
}

// rateLimitError says when GitHub's rate limit resets.
type rateLimitError struct {
	reset time.Time
	in    time.Duration
}

func (e *rateLimitError) Error() string {
	return fmt.Sprintf("GitHub API rate limit reached; it resets at %s (in %s): retry then, or set GITHUB_TOKEN for a higher limit",
		e.reset.UTC().Format("15:04:05 UTC"), e.in.Round(time.Second))
}

// get sends a GET with the given headers and returns the response when its
// status is one of ok; the caller closes the body. Credentials go only to
// the GitHub hosts; GitHub's rate limit is waited for when it resets soon.
func (rm *remote) get(ctx context.Context, u string, header http.Header, ok ...int) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, fmt.Errorf("bad URL %q: %w", u, err)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("User-Agent", "sagasu")
		rm.authorize(req)
		resp, err := rm.client.Do(req)
		if err != nil {
			return nil, err
		}
		for _, c := range ok {
			if resp.StatusCode == c {
				return resp, nil
			}
		}
		wait, limited := rm.rateLimited(resp)
		se := &statusError{code: resp.StatusCode, url: redact(req.URL)}
		if !limited {
			var body struct {
				Message string `json:"message"`
			}
			if data, err := fetch.ReadLimit(resp.Body, 64<<10); err == nil {
				_ = json.Unmarshal(data, &body)
			}
			se.msg = body.Message
		}
		resp.Body.Close()
		if !limited {
			return nil, se
		}
		if wait > rm.wait || rm.wait < 0 || attempt >= 2 {
			return nil, &rateLimitError{reset: rm.now().Add(wait), in: wait}
		}
		rm.log.Warn("GitHub rate limit reached; waiting for the reset", "wait", wait.Round(time.Second))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// rateLimited reads GitHub's rate-limit answer: 403 or 429 with
// X-RateLimit-Remaining 0 (wait until X-RateLimit-Reset) or Retry-After.
func (rm *remote) rateLimited(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			d := time.Unix(n, 0).Sub(rm.now())
			if d < 0 {
				d = 0
			}
			return d + time.Second, true // GitHub's reset is whole seconds
		}
		return time.Minute, true
	}
	return time.Minute, resp.StatusCode == http.StatusTooManyRequests
}

// sendsToken reports whether a request to u carries GITHUB_TOKEN: only to
// the origin (scheme, host and port) of the configured API or raw-content
// base. By default these are https; plain http only when the user
// configured an http:// base (SAGASU_GITHUB_API_URL), which is their
// choice. A redirect elsewhere, another port, or http:// to a GitHub name
// never gets it.
func (rm *remote) sendsToken(u *url.URL) bool {
	return rm.token != "" && (fetch.SameOrigin(u, rm.api) || fetch.SameOrigin(u, rm.raw))
}

// authorize puts GITHUB_TOKEN on req when sendsToken allows it and takes
// it off otherwise. It runs on the first request and, through the client's
// CheckRedirect, on every redirect, so each hop is judged by its own URL
// (Go's client would copy the header to the same host name on another port
// or scheme).
func (rm *remote) authorize(req *http.Request) {
	if rm.sendsToken(req.URL) {
		req.Header.Set("Authorization", "Bearer "+rm.token)
		return
	}
	req.Header.Del("Authorization")
}

// redact drops any user info and query from a URL shown in a message.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	return c.String()
}

// getJSON fetches u and decodes its JSON body into v.
func (rm *remote) getJSON(ctx context.Context, u string, v any) error {
	resp, err := rm.get(ctx, u, http.Header{"Accept": {"application/vnd.github+json"}, "X-Github-Api-Version": {"2022-11-28"}}, http.StatusOK)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := fetch.ReadLimit(resp.Body, 256<<20)
	if err != nil {
		return fmt.Errorf("read %s: %w", redact(resp.Request.URL), err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", redact(resp.Request.URL), err)
	}
	return nil
}

// readBody reads a content body under the per-file limit; tooLarge reports
// that it was over.
func (rm *remote) readBody(r io.Reader) (data []byte, tooLarge bool, err error) {
	data, err = fetch.ReadLimit(r, rm.maxFile())
	if errors.Is(err, fetch.ErrTooLarge) {
		return nil, true, nil
	}
	return data, false, err
}

// bounded runs one source's load under the per-source time cap and names
// the source in its error.
func (rm *remote) bounded(ctx context.Context, name string, load func(context.Context) (Outcome, error)) (Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, rm.timeout)
	defer cancel()
	out, err := load(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			err = fmt.Errorf("took longer than the %s limit for one source; index a part of it: %w", rm.timeout, err)
		}
		return Outcome{}, fmt.Errorf("load %s: %w", name, err)
	}
	return out, nil
}

// text decodes fetched bytes as decodeText does for files, logging repairs;
// an error means the content is binary.
func (rm *remote) text(uri string, data []byte) (string, error) {
	text, repaired, err := decodeText(data)
	if err != nil {
		return "", err
	}
	if repaired > 0 {
		rm.log.Warn("repaired invalid UTF-8: replaced bad bytes with U+FFFD", "source", uri, "bytes", repaired)
	}
	return text, nil
}

// budget tracks one source's caps on files and bytes.
type budget struct {
	files, maxFiles int
	bytes, maxBytes int64
}

func (b *budget) add(n int) error {
	b.files++
	b.bytes += int64(n)
	if b.files > b.maxFiles {
		return fmt.Errorf("more than %d files; index a path inside it or add --exclude patterns", b.maxFiles)
	}
	if b.bytes > b.maxBytes {
		return fmt.Errorf("more than %s of content; index a path inside it or add --exclude patterns", fetch.Size(b.maxBytes))
	}
	return nil
}

// skipper reports skips through a Run, logging them like the file walker.
func (rm *remote) skipped(r *Run, uri string, reason SkipReason, err error) {
	rm.log.Info("skipped", "source", uri, "reason", reason, "detail", err)
	if r.Skip != nil {
		r.Skip(Skip{Path: uri, Reason: reason, Err: err})
	}
}
