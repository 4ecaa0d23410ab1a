package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/embed/gemini"
	"github.com/sagasu-dev/sagasu/internal/embed/local"
	"github.com/sagasu-dev/sagasu/internal/embed/modelhub"
	"github.com/sagasu-dev/sagasu/internal/embed/openai"
	"github.com/sagasu-dev/sagasu/internal/embed/static"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// EmbedderDrivers are the embedding drivers sagasu knows.
var EmbedderDrivers = []string{"openai", "gemini", "static", "local"}

// metaEmbedder is the key under which an index pins its embedder.
const metaEmbedder = "embedder"

// Pinned reads the embedder an index is pinned to; Driver is "" when none.
func Pinned(ctx context.Context, st store.Store) (EmbedderConfig, error) {
	raw, err := st.Meta(ctx, metaEmbedder)
	if err != nil || raw == "" {
		return EmbedderConfig{}, err
	}
	var p EmbedderConfig
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return EmbedderConfig{}, fmt.Errorf("the index's pinned embedder is unreadable (%v): re-embed with `sagasu reindex --embedder ...`", err)
	}
	// An index pinned before prefixes were recorded was embedded without them.
	none := ""
	if p.QueryPrefix == nil {
		p.QueryPrefix = &none
	}
	if p.DocumentPrefix == nil {
		p.DocumentPrefix = &none
	}
	return p, nil
}

// Prefixes returns the prefixes c puts before queries and documents for a
// model of the given name: the ones c sets, else the model's known ones.
func (c EmbedderConfig) Prefixes(model string) embed.Prefixes {
	p := embed.KnownPrefixes(model)
	if c.QueryPrefix != nil {
		p.Query = *c.QueryPrefix
	}
	if c.DocumentPrefix != nil {
		p.Document = *c.DocumentPrefix
	}
	return p
}

// BuildEmbedder constructs the embedder a configuration names (nil for none),
// with the prefixes c.Prefixes gives for its model.
func BuildEmbedder(ctx context.Context, c EmbedderConfig, getenv func(string) string) (embed.Embedder, error) {
	var client embed.Client
	var err error
	opt := embed.Options{BatchSize: c.BatchSize}
	switch c.Driver {
	case "":
		return nil, nil
	case "openai":
		client, err = openai.New(openai.Config{BaseURL: c.URL, Model: c.Model, Dim: c.Dim, Getenv: getenv})
	case "gemini":
		client, err = gemini.New(ctx, gemini.Config{Model: c.Model, Dim: c.Dim, BaseURL: c.URL, Getenv: getenv})
	case "static":
		client, err = static.Open(c.Path, static.Options{Name: c.Model})
	case "local":
		var dir string
		if dir, err = localModelDir(c, getenv); err == nil {
			// A known model's name on a folder of other files fails here,
			// not after seconds of loading weights.
			err = modelhub.CheckKnown(dir, strings.TrimSuffix(localName(c), localInt8))
		}
		if err == nil {
			client, err = local.Open(dir, local.Options{Name: c.Model, Int8: c.Int8})
		}
		opt = local.EmbedOptions(c.BatchSize)
	default:
		return nil, fmt.Errorf("unknown embedder %q: use openai, gemini, static or local", c.Driver)
	}
	if err != nil {
		return nil, err
	}
	e := embed.New(client, opt)
	return embed.WithPrefixes(e, c.Prefixes(client.Info().Model)), nil
}

// localModelDir is the folder of a local model: the configured path, else
// the folder named after the model in the model cache.
func localModelDir(c EmbedderConfig, getenv func(string) string) (string, error) {
	if c.Path != "" {
		return c.Path, nil
	}
	if err := modelhub.CheckName(c.Model); err != nil {
		return "", err
	}
	dir, err := modelhub.Dir(getenv)
	if err != nil {
		return "", err
	}
	path := modelhub.Path(dir, strings.TrimSuffix(c.Model, localInt8))
	if _, err := os.Stat(path); err != nil {
		how := "import a sentence-transformers folder with `sagasu model import DIR " + c.Model + "`"
		if _, ok := modelhub.Lookup(c.Model); ok {
			how = "fetch it with `sagasu model pull " + c.Model + "`"
		}
		return "", fmt.Errorf("no local model %q in %s: %s, or give its folder with --embedder-path", c.Model, dir, how)
	}
	return path, nil
}

// localInt8 is the suffix the local driver gives an int8 model's name.
const localInt8 = "+int8"

// localName is the model name a local configuration embeds under.
func localName(c EmbedderConfig) string {
	name := strings.TrimSuffix(c.Model, localInt8)
	if name == "" {
		name = filepath.Base(filepath.Clean(c.Path))
	}
	if c.Int8 {
		name += localInt8
	}
	return name
}

// sameEmbedder reports whether a requested configuration matches a pin.
func sameEmbedder(want, pin EmbedderConfig) bool {
	if want.Driver != pin.Driver {
		return false
	}
	if want.Driver == "local" {
		// The model's name carries int8; a path only names the folder.
		return localName(want) == pin.Model &&
			samePrefix(want.QueryPrefix, pin.QueryPrefix) && samePrefix(want.DocumentPrefix, pin.DocumentPrefix)
	}
	if want.Model != "" && want.Model != pin.Model {
		return false
	}
	if want.Dim != 0 && want.Dim != pin.Dim {
		return false
	}
	if !samePrefix(want.QueryPrefix, pin.QueryPrefix) || !samePrefix(want.DocumentPrefix, pin.DocumentPrefix) {
		return false
	}
	if want.Driver == "static" && want.Path != "" && want.Model == "" {
		// A static model is named after its file unless a name was given.
		base := filepath.Base(want.Path)
		return base == pin.Model || base[:len(base)-len(filepath.Ext(base))] == pin.Model
	}
	return true
}

// samePrefix reports whether a requested prefix (nil: not set) fits a pinned one.
func samePrefix(want, pin *string) bool {
	return want == nil || pin == nil || *want == *pin
}

// withPinnedPrefixes fills the prefixes want leaves unset from the pin, so
// queries are embedded the way the index's documents were.
func withPinnedPrefixes(want, pin EmbedderConfig) EmbedderConfig {
	if want.QueryPrefix == nil {
		want.QueryPrefix = pin.QueryPrefix
	}
	if want.DocumentPrefix == nil {
		want.DocumentPrefix = pin.DocumentPrefix
	}
	return want
}

func describe(c EmbedderConfig) string {
	s := c.Driver
	switch {
	case c.Driver == "local" && (c.Model != "" || c.Path != ""):
		s += "/" + localName(c)
	case c.Model != "":
		s += "/" + c.Model
	}
	if c.Dim != 0 {
		s += fmt.Sprintf(" (%d dimensions)", c.Dim)
	}
	if c.QueryPrefix != nil {
		s += fmt.Sprintf(" query prefix %q", *c.QueryPrefix)
	}
	if c.DocumentPrefix != nil {
		s += fmt.Sprintf(" document prefix %q", *c.DocumentPrefix)
	}
	return s
}

// Embedder returns the embedder to use with st: the configured one, which
// must match the index's pin, or else the pinned one. With pin set (index
// and reindex runs) an unpinned index is pinned to the configured embedder.
// It returns nil when neither the configuration nor the index names one.
func (a *App) Embedder(ctx context.Context, st store.Store, pin bool) (embed.Embedder, error) {
	want := a.Config.Embedder
	pinned, err := Pinned(ctx, st)
	if err != nil {
		return nil, err
	}
	switch {
	case want.Driver == "" && pinned.Driver == "":
		return nil, nil
	case want.Driver == "":
		raw, err := st.Meta(ctx, metaEmbedder)
		if err != nil {
			return nil, err
		}
		if err := a.checkPin(pinned, raw); err != nil {
			return nil, err
		}
		return a.buildEmbedder(ctx, pinned)
	case pinned.Driver != "" && !sameEmbedder(want, pinned):
		return nil, fmt.Errorf("the index is pinned to embedder %s, not %s: re-embed it with `sagasu reindex --embedder %s ...`, or use another --db",
			describe(pinned), describe(want), want.Driver)
	case pinned.Driver != "":
		want = withPinnedPrefixes(want, pinned)
	}
	e, err := a.buildEmbedder(ctx, want)
	if err != nil {
		return nil, err
	}
	if pinned.Driver != "" {
		return e, nil
	}
	if !pin {
		return nil, fmt.Errorf("the index has no embeddings: index with --embedder %s first (or drop --embedder to search by keyword)", want.Driver)
	}
	return e, a.PinEmbedder(ctx, st, e, want)
}

// PinEmbedder is the package's PinEmbedder for the configured index, and
// remembers that the user made these pins (see checkPin): the user named
// the embedder to pin it, so later commands without the flag use it.
func (a *App) PinEmbedder(ctx context.Context, st store.Store, e embed.Embedder, c EmbedderConfig) error {
	if err := PinEmbedder(ctx, st, e, c); err != nil {
		return err
	}
	if err := a.rememberPin(ctx, st); err != nil && a.Log != nil {
		a.Log.Warn("could not remember that you pinned this index's embedder; later commands will ask you to name or trust it", "err", err)
	}
	return nil
}

// PinEmbedder records e as the index's embedder and prepares vector storage.
func PinEmbedder(ctx context.Context, st store.Store, e embed.Embedder, c EmbedderConfig) error {
	info, err := embed.Probe(ctx, e)
	if err != nil {
		return fmt.Errorf("embedder %s: %w", describe(c), err)
	}
	if info.Dim <= 0 {
		return errors.New("embedder reported no dimension")
	}
	if err := st.InitVectors(ctx, info.Dim); err != nil {
		return err
	}
	c.Model, c.Dim = info.Model, info.Dim
	p := c.Prefixes(info.Model)
	c.QueryPrefix, c.DocumentPrefix = &p.Query, &p.Document
	if c.Path != "" {
		if abs, err := filepath.Abs(c.Path); err == nil {
			c.Path = abs
		}
	}
	raw, _ := json.Marshal(c)
	return st.SetMeta(ctx, metaEmbedder, string(raw))
}

// Unpin forgets the index's embedder and drops its vectors.
func Unpin(ctx context.Context, st store.Store) error {
	if err := st.ClearVectors(ctx); err != nil {
		return err
	}
	return st.SetMeta(ctx, metaEmbedder, "")
}

// ImportWordVectors converts GloVe or word2vec text vectors at src into the
// static embedder's compact file at dst.
func ImportWordVectors(src, dst string) error { return static.Import(src, dst) }
