package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/source/fetch"
)

// Gist loads every file of a GitHub gist: "gist:ID",
// "https://gist.github.com/ID" or "https://gist.github.com/user/ID". A
// document's URI is "gist:ID/filename"; its type is "gist". Files the API
// marks truncated are fetched whole from their raw_url. The gist's ETag is
// kept, so an unchanged gist answers 304 and nothing is fetched; files
// deleted from the gist are removed from the index.
type Gist struct{ rm *remote }

// NewGist returns the gist loader.
func NewGist(opt Options) *Gist { return &Gist{rm: newRemote(opt)} }

// Name implements Loader.
func (g *Gist) Name() string { return "gist" }

// Match implements Loader.
func (g *Gist) Match(input string) bool {
	return strings.HasPrefix(input, "gist:") || hasHostPrefix(input, "gist.github.com")
}

// Check implements Loader.
func (g *Gist) Check(input string) error {
	_, err := parseGist(input)
	return err
}

var gistID = regexp.MustCompile(`^[0-9A-Za-z]{1,64}$`)

func parseGist(input string) (string, error) {
	var id string
	if rest, ok := strings.CutPrefix(input, "gist:"); ok {
		id = strings.Trim(rest, "/")
	} else {
		u, err := url.Parse(input)
		if err != nil {
			return "", fmt.Errorf("input %q: %w; write gist:ID or https://gist.github.com/user/ID", input, err)
		}
		segs := strings.Split(strings.Trim(u.Path, "/"), "/")
		id = segs[len(segs)-1]
		if len(segs) > 2 {
			id = segs[1] // https://gist.github.com/user/ID/revision
		}
	}
	if !gistID.MatchString(id) {
		return "", fmt.Errorf("input %q: %q is not a gist ID; write gist:ID or https://gist.github.com/user/ID", input, id)
	}
	return id, nil
}

// gistState is what a complete load saves.
type gistState struct {
	ETag  string   `json:"etag"`
	Files []string `json:"files"` // URIs of the files indexed
}

type gistFile struct {
	Filename  string `json:"filename"`
	Language  string `json:"language"`
	RawURL    string `json:"raw_url"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated"`
	Content   string `json:"content"`
}

// Load implements Loader.
func (g *Gist) Load(ctx context.Context, input string, r *Run) (Outcome, error) {
	id, err := parseGist(input)
	if err != nil {
		return Outcome{}, err
	}
	if err := g.rm.checkBases(); err != nil {
		return Outcome{}, err
	}
	return g.rm.bounded(ctx, "gist:"+id, func(ctx context.Context) (Outcome, error) { return g.load(ctx, id, r) })
}

func (g *Gist) load(ctx context.Context, id string, r *Run) (Outcome, error) {
	prefix := "gist:" + id + "/"
	out := Outcome{StateKey: "gist:" + id, Scope: func(uri string) bool { return strings.HasPrefix(uri, prefix) }}
	var prev gistState
	if s := r.State(out.StateKey); s != "" && !r.Force {
		_ = json.Unmarshal([]byte(s), &prev)
	}
	h := http.Header{"Accept": {"application/vnd.github+json"}, "X-Github-Api-Version": {"2022-11-28"}}
	if prev.ETag != "" && allStored(prev.Files, r) {
		h.Set("If-None-Match", prev.ETag)
	}
	resp, err := g.rm.get(ctx, g.rm.api.String()+"/gists/"+id, h, http.StatusOK, http.StatusNotModified)
	if err != nil {
		var se *statusError
		if errors.As(err, &se) && se.code == http.StatusNotFound {
			return Outcome{}, fmt.Errorf("gist %s not found; check the ID (the last part of its URL): %w", id, err)
		}
		return Outcome{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		for _, uri := range prev.Files {
			r.Keep(uri)
		}
		out.State = mustJSON(prev)
		return out, nil
	}
	data, err := fetch.ReadLimit(resp.Body, g.rm.maxBytes)
	if err != nil {
		return Outcome{}, fmt.Errorf("read the gist: %w", err)
	}
	var body struct {
		Files map[string]*gistFile `json:"files"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return Outcome{}, fmt.Errorf("decode the gist: %w", err)
	}
	next := gistState{ETag: resp.Header.Get("ETag")}
	b := budget{maxFiles: g.rm.maxFiles, maxBytes: g.rm.maxBytes}
	for _, name := range sortedKeys(body.Files) {
		f := body.Files[name]
		uri := prefix + name
		if f.Size > g.rm.maxFile() {
			g.rm.skipped(r, uri, SkipTooLarge, fmt.Errorf("larger than the %d-byte limit", g.rm.maxFile()))
			continue
		}
		if err := b.add(int(f.Size)); err != nil {
			return Outcome{}, err
		}
		content := []byte(f.Content)
		if f.Truncated {
			c, tooLarge, err := g.raw(ctx, f.RawURL)
			if err != nil {
				return Outcome{}, fmt.Errorf("fetch the whole of truncated file %q: %w", name, err)
			}
			if tooLarge {
				g.rm.skipped(r, uri, SkipTooLarge, fmt.Errorf("larger than the %d-byte limit", g.rm.maxFile()))
				continue
			}
			content = c
		}
		text, err := g.rm.text(uri, content)
		if err != nil {
			g.rm.skipped(r, uri, SkipBinary, err)
			continue
		}
		d := fileDocument(uri, text)
		d.Type = doc.TypeGist
		if err := r.Emit(d); err != nil {
			return Outcome{}, err
		}
		next.Files = append(next.Files, uri)
	}
	out.State = mustJSON(next)
	return out, nil
}

func (g *Gist) raw(ctx context.Context, rawURL string) ([]byte, bool, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, false, fmt.Errorf("raw_url %q is not an http(s) URL", rawURL)
	}
	resp, err := g.rm.get(ctx, rawURL, nil, http.StatusOK)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	return g.rm.readBody(resp.Body)
}

func allStored(uris []string, r *Run) bool {
	for _, u := range uris {
		if !r.Stored(u) {
			return false
		}
	}
	return true
}
