package source

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Web loads a web page given as an http(s) URL. HTML is turned into
// markdown that keeps its headings (so chunks carry heading paths) and
// drops scripts, styles, navigation and page chrome; markdown and plain
// text are kept as they are; other content types are refused. The page's
// URI is its URL (without the fragment); its type is "url". The ETag and
// Last-Modified of the last load are sent back, and a 304 leaves the stored
// page as it is.
type Web struct{ rm *remote }

// NewWeb returns the web page loader. It never sends GITHUB_TOKEN, not
// even to a GitHub host: a page is not an API call.
func NewWeb(opt Options) *Web { return &Web{rm: newRemote(opt).withoutToken()} }

// Name implements Loader.
func (w *Web) Name() string { return "web" }

// Match implements Loader.
func (w *Web) Match(input string) bool {
	return strings.HasPrefix(input, "https://") || strings.HasPrefix(input, "http://")
}

// Check implements Loader.
func (w *Web) Check(input string) error {
	_, err := pageURL(input)
	return err
}

func pageURL(input string) (*url.URL, error) {
	u, err := url.Parse(input)
	if err != nil {
		return nil, fmt.Errorf("input %q is not a valid URL: %w", input, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("input %q: give an http or https URL with a host", input)
	}
	if u.User != nil {
		return nil, fmt.Errorf("input %q: URLs with credentials are not fetched; remove the user:password@ part", redact(u))
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

type webState struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
}

// Load implements Loader.
func (w *Web) Load(ctx context.Context, input string, r *Run) (Outcome, error) {
	u, err := pageURL(input)
	if err != nil {
		return Outcome{}, err
	}
	uri := u.String()
	return w.rm.bounded(ctx, uri, func(ctx context.Context) (Outcome, error) { return w.load(ctx, u, uri, r) })
}

func (w *Web) load(ctx context.Context, u *url.URL, uri string, r *Run) (Outcome, error) {
	out := Outcome{StateKey: uri}
	var prev webState
	if s := r.State(uri); s != "" && !r.Force && r.Stored(uri) {
		_ = json.Unmarshal([]byte(s), &prev)
	}
	h := http.Header{"Accept": {"text/html, text/markdown;q=0.9, text/plain;q=0.8, */*;q=0.1"}}
	if prev.ETag != "" {
		h.Set("If-None-Match", prev.ETag)
	}
	if prev.LastModified != "" {
		h.Set("If-Modified-Since", prev.LastModified)
	}
	resp, err := w.rm.get(ctx, u.String(), h, http.StatusOK, http.StatusNotModified)
	if err != nil {
		return Outcome{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		r.Keep(uri)
		out.State = mustJSON(prev)
		return out, nil
	}
	ct := resp.Header.Get("Content-Type")
	kind, err := pageKind(ct, u.Path)
	if err != nil {
		w.rm.skipped(r, uri, SkipBinary, err)
		return Outcome{}, nil
	}
	data, tooLarge, err := w.rm.readBody(resp.Body)
	if err != nil {
		return Outcome{}, fmt.Errorf("read the page: %w", err)
	}
	if tooLarge {
		w.rm.skipped(r, uri, SkipTooLarge, fmt.Errorf("the page is larger than the %d-byte limit (--max-file-size)", w.rm.maxFile()))
		return Outcome{}, nil
	}
	text, err := w.rm.text(uri, toUTF8(data, ct, kind == "html"))
	if err != nil {
		w.rm.skipped(r, uri, SkipBinary, err)
		return Outcome{}, nil
	}
	d := doc.Document{URI: uri, Type: doc.TypeURL, Content: text}
	switch kind {
	case doc.FormatMarkdown:
		d.Format = doc.FormatMarkdown
		d.Title = markdownTitle(text)
	case "html":
		md, title := HTMLToMarkdown(text)
		d.Content, d.Format, d.Title = md, doc.FormatMarkdown, title
		if d.Title == "" {
			d.Title = markdownTitle(md)
		}
	default:
		d.Format = kind
		if d.Format == doc.FormatText && looksLikeMarkdown(text) {
			d.Format = doc.FormatMarkdown
			d.Title = markdownTitle(text)
		}
	}
	if d.Title == "" {
		d.Title = path.Base(strings.TrimRight(u.Path, "/"))
		if d.Title == "." || d.Title == "/" || d.Title == "" {
			d.Title = u.Host
		}
	}
	if err := r.Emit(d); err != nil {
		return Outcome{}, err
	}
	out.State = mustJSON(webState{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")})
	return out, nil
}

// pageKind maps a Content-Type to "html" or a document format, or refuses it.
func pageKind(ct, urlPath string) (doc.Format, error) {
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil {
		mt = ""
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "html", nil
	case mt == "text/markdown" || mt == "text/x-markdown":
		return doc.FormatMarkdown, nil
	case mt == "" || mt == "text/plain":
		f, _ := Detect(urlPath)
		return f, nil
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml" ||
		strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") || mt == "application/javascript" || mt == "application/x-yaml" || mt == "application/yaml":
		return doc.FormatText, nil
	}
	return "", fmt.Errorf("content type %q is not text; sagasu indexes HTML, markdown and plain-text pages", mt)
}

// toUTF8 converts a body to UTF-8 from the charset its Content-Type
// declares or, for HTML, its <meta charset> (Shift_JIS, EUC-JP, GBK,
// Windows-1252, ...). A body with no declaration is left to decodeText.
func toUTF8(data []byte, ct string, isHTML bool) []byte {
	var enc encoding.Encoding
	if _, params, err := mime.ParseMediaType(ct); err == nil && params["charset"] != "" {
		enc, _ = htmlindex.Get(params["charset"])
	} else if isHTML {
		enc, _, _ = charset.DetermineEncoding(data, ct)
	}
	if enc == nil {
		return data
	}
	if name, _ := htmlindex.Name(enc); name == "utf-8" {
		return data
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return data
	}
	return out
}
