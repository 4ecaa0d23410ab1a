package embed

import (
	"context"
	"regexp"
	"strings"
)

// Prefixes are the texts put before each document and each query before
// they are embedded. Some models were trained with them and rank worse
// without: the E5 family wants "query: " and "passage: ", BGE English v1.5
// wants an instruction before queries only.
type Prefixes struct {
	Query    string `json:"query"`
	Document string `json:"document"`
}

// IsZero reports whether neither side gets a prefix.
func (p Prefixes) IsZero() bool { return p == Prefixes{} }

// Prefix instructions of known model families.
const (
	E5QueryPrefix    = "query: "
	E5DocumentPrefix = "passage: "
	BGEQueryPrefix   = "Represent this sentence for searching relevant passages: "
)

// knownPrefixes maps model-name patterns to the prefixes the model was
// trained with, first match wins. Names are matched lower-cased, so a served
// alias such as "multilingual-e5-small-q4" or "intfloat/e5-base-v2" counts.
var knownPrefixes = []struct {
	pattern *regexp.Regexp
	p       Prefixes
}{
	// e5-mistral and other instruct variants take a task instruction, not
	// the plain query/passage pair: leave them to the user.
	{regexp.MustCompile(`(^|[/_.-])e5-mistral|e5-[a-z0-9-]*instruct`), Prefixes{}},
	{regexp.MustCompile(`(^|[/_.-])e5([/_.-]|$)`), Prefixes{Query: E5QueryPrefix, Document: E5DocumentPrefix}},
	{regexp.MustCompile(`(^|[/_.-])bge-[a-z]+-en-v1\.5`), Prefixes{Query: BGEQueryPrefix}},
}

// KnownPrefixes returns the prefixes a model of this name expects, or none
// for a model it does not know.
func KnownPrefixes(model string) Prefixes {
	name := strings.ToLower(model)
	for _, k := range knownPrefixes {
		if k.pattern.MatchString(name) {
			return k.p
		}
	}
	return Prefixes{}
}

// WithPrefixes wraps e so that every document and query gets its prefix
// before it is embedded. With no prefixes it returns e itself.
func WithPrefixes(e Embedder, p Prefixes) Embedder {
	if p.IsZero() {
		return e
	}
	return &prefixed{e: e, p: p}
}

type prefixed struct {
	e Embedder
	p Prefixes
}

func (x *prefixed) Info() Info { return x.e.Info() }

// EmbedDocuments prefixes each text; a blank text stays blank so that the
// wrapped Embedder still reports it as empty rather than embedding the
// prefix alone.
func (x *prefixed) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if x.p.Document == "" {
		return x.e.EmbedDocuments(ctx, texts)
	}
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = prefix(x.p.Document, t)
	}
	return x.e.EmbedDocuments(ctx, in)
}

func (x *prefixed) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return x.e.EmbedQuery(ctx, prefix(x.p.Query, text))
}

func prefix(p, text string) string {
	if p == "" || strings.TrimSpace(text) == "" {
		return text
	}
	return p + text
}
