// Package budget counts tokens with a real tokenizer and fits a response
// into a token budget: it shortens texts, then drops the lowest-ranked items,
// and stamps each response with its own measured size.
//
// Counting is offline (tiktoken's cl100k_base or o200k_base vocabularies,
// compiled in) plus a safety margin for clients whose tokenizers cut text
// into more pieces than OpenAI's do.
package budget

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Encodings the counter knows.
const (
	Cl100k = "cl100k_base"
	O200k  = "o200k_base"
)

// DefaultMargin is the safety margin added to every count: 20% more tokens
// than cl100k_base counts, which covers Claude's and Gemini's tokenizers on
// English, Japanese and code.
const DefaultMargin = 0.2

// Default budgets, in tokens, of the MCP server's responses.
const (
	DefaultSummary  = 5_000
	DefaultDetailed = 15_000
	DefaultCap      = 25_000
)

// Counter counts tokens. It is safe for concurrent use.
type Counter struct {
	codec    tokenizer.Codec
	encoding string
	margin   float64
	// next cuts a text into the encoding's pieces (nil: the codec cuts),
	// whose counts pieces remembers (see pieces.go).
	next   func(s string, i int) int
	pieces *pieceCache
}

// cl100kPieces remembers piece counts for every cl100k_base Counter of
// the process.
var cl100kPieces pieceCache

// Default returns the process's counter with the default encoding and
// margin: one shared counter, rather than one a request.
var Default = sync.OnceValue(func() *Counter {
	c, err := New(Options{Margin: DefaultMargin})
	if err != nil {
		panic(err) // the vocabulary is compiled in
	}
	return c
})

// Options configure a Counter.
type Options struct {
	// Encoding is cl100k_base (the default when "") or o200k_base.
	Encoding string
	// Margin is the fraction added to every count (0.2 adds 20%); it must be
	// between 0 and 1.
	Margin float64
}

// New returns a counter for the encoding.
func New(opt Options) (*Counter, error) {
	enc := opt.Encoding
	if enc == "" {
		enc = Cl100k
	}
	var name tokenizer.Encoding
	switch enc {
	case Cl100k:
		name = tokenizer.Cl100kBase
	case O200k:
		name = tokenizer.O200kBase
	default:
		return nil, fmt.Errorf("tokenizer %q: use %s or %s", enc, Cl100k, O200k)
	}
	if opt.Margin < 0 || opt.Margin > 1 || math.IsNaN(opt.Margin) {
		return nil, fmt.Errorf("token margin %v: use a fraction between 0 and 1, e.g. 0.2 for 20%%", opt.Margin)
	}
	codec, err := tokenizer.Get(name)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", enc, err)
	}
	c := &Counter{codec: codec, encoding: enc, margin: opt.Margin}
	if enc == Cl100k {
		c.next, c.pieces = nextCl100kPiece, &cl100kPieces
	}
	return c, nil
}

// Encoding names the counter's vocabulary.
func (c *Counter) Encoding() string { return c.encoding }

// Margin is the fraction the counter adds to every count.
func (c *Counter) Margin() float64 { return c.margin }

// Raw counts the tokens of text with the tokenizer alone.
func (c *Counter) Raw(text string) int {
	if c.next != nil && utf8.ValidString(text) {
		return c.pieces.count(text, c.next, c.codecCount)
	}
	return c.codecCount(text)
}

// codecCount counts the tokens of text with the tokenizer library.
func (c *Counter) codecCount(text string) int {
	n, err := c.codec.Count(text)
	if err != nil {
		// Only strict mode fails, on invalid UTF-8; never lose the count.
		return len(text)
	}
	return n
}

// Count counts the tokens of text with the safety margin, rounded up.
func (c *Counter) Count(text string) int {
	return c.withMargin(c.Raw(text))
}

func (c *Counter) withMargin(raw int) int {
	// Round away float noise first: 100 × 1.2 must be 120, not 121.
	return int(math.Ceil(math.Round(float64(raw)*(1+c.margin)*1e6) / 1e6))
}

// Limits are the budgets of the three detail levels of a response. Every
// budget is at most Cap.
type Limits struct {
	Summary  int
	Detailed int
	Cap      int
}

// DefaultLimits are 5,000 / 15,000 / 25,000 tokens.
func DefaultLimits() Limits {
	return Limits{Summary: DefaultSummary, Detailed: DefaultDetailed, Cap: DefaultCap}
}

// WithCap returns the default limits under a cap: summary and detailed
// shrink to the cap when it is smaller than they are.
func WithCap(maxTokens int) (Limits, error) {
	if maxTokens < 1000 {
		return Limits{}, fmt.Errorf("max output tokens %d is too small: use at least 1000", maxTokens)
	}
	l := DefaultLimits()
	l.Cap = maxTokens
	l.Summary = min(l.Summary, maxTokens)
	l.Detailed = min(l.Detailed, maxTokens)
	return l, nil
}

// Mode returns the budget of a detail level: "summary", "detailed", or
// anything else (full) for the cap.
func (l Limits) Mode(mode string) int {
	switch mode {
	case "summary":
		return min(l.Summary, l.Cap)
	case "detailed":
		return min(l.Detailed, l.Cap)
	}
	return l.Cap
}

// Truncate shortens s to at most n runes, cutting after the last line break
// or space in the final fifth of the allowance when there is one, and
// appending "…". It reports whether it cut anything.
func Truncate(s string, n int) (string, bool) {
	if n < 0 {
		n = 0
	}
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	if n == 0 {
		return "", true
	}
	// Byte offset of rune n-1: leave room for the ellipsis.
	cut := 0
	for i := 0; i < n-1 && cut < len(s); i++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	head := s[:cut]
	if i := strings.LastIndexAny(head, "\n "); i > 0 && utf8.RuneCountInString(head[i:]) <= n/5 {
		head = head[:i]
	}
	return strings.TrimRight(head, " \n\t") + "…", true
}

// ErrTooLarge is returned when not even the smallest form of a response fits.
var ErrTooLarge = errors.New("the response does not fit its token budget even with no items")
