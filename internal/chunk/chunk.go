package chunk

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Defaults for Options.
const (
	DefaultMaxTokens = 512
	DefaultOverlap   = 64
)

// Options controls chunk sizes. Zero values take defaults.
type Options struct {
	// MaxTokens is the hard upper limit of Count(chunk.Text); default 512.
	MaxTokens int
	// Overlap is how many tokens of the previous piece are repeated at the
	// start of the next when one section is too big for a single chunk.
	// Zero means the default, 64 (or MaxTokens/8 if that is smaller); a
	// negative value turns overlap off. It must be less than MaxTokens/2.
	Overlap int
	// MinTokens is the size below which a markdown section is merged with a
	// neighbouring one (see the package comment). Zero means MaxTokens/8; a
	// negative value turns merging of small sections off.
	MinTokens int
	// Count counts the tokens of a text; default EstimateTokens.
	Count func(string) int
}

// withDefaults fills in zero fields and checks the others.
func (o Options) withDefaults() (Options, error) {
	if o.MaxTokens < 0 {
		return o, fmt.Errorf("invalid options: MaxTokens is %d; it must be positive, or 0 for the default %d", o.MaxTokens, DefaultMaxTokens)
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	switch {
	case o.Overlap == 0:
		o.Overlap = min(DefaultOverlap, o.MaxTokens/8)
	case o.Overlap < 0:
		o.Overlap = 0
	case 2*o.Overlap >= o.MaxTokens:
		return o, fmt.Errorf("invalid options: Overlap %d must be less than half of MaxTokens %d", o.Overlap, o.MaxTokens)
	}
	switch {
	case o.MinTokens == 0:
		o.MinTokens = o.MaxTokens / 8
	case o.MinTokens < 0:
		o.MinTokens = 0
	}
	if o.Count == nil {
		o.Count = EstimateTokens
	}
	return o, nil
}

// Split cuts d into chunks with the splitter that d.Format names (an empty
// format is treated as text). Each chunk's Text is d.Content[StartByte:EndByte];
// ID and SourceID are left zero for the caller to fill in. Empty or
// whitespace-only content gives no chunks.
func Split(d doc.Document, opt Options) ([]doc.Chunk, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("chunk %s: %w", d.URI, err)
	}
	s := &splitter{src: d.Content, opt: o}
	if a, b := s.trim(0, len(s.src)); a == b {
		return nil, nil
	}
	var groups []group
	switch d.Format {
	case doc.FormatMarkdown:
		groups = s.markdownGroups()
	case doc.FormatGo:
		groups = s.goGroups()
	case doc.FormatCode:
		groups = []group{{start: 0, end: len(s.src), k: kCodeDoc}}
	case doc.FormatText, "":
		groups = []group{{start: 0, end: len(s.src), k: kText}}
	default:
		return nil, fmt.Errorf("chunk %s: unknown format %q (want %s, %s, %s or %s)",
			d.URI, d.Format, doc.FormatMarkdown, doc.FormatGo, doc.FormatCode, doc.FormatText)
	}
	for _, g := range groups {
		if err := s.emit(g); err != nil {
			return nil, fmt.Errorf("chunk %s: %w", d.URI, err)
		}
	}
	return s.chunks, nil
}

// A group is a span of the source that becomes one chunk if it fits, or is
// cut into pieces of kind k if it does not. Groups tile the source.
type group struct {
	start, end int
	heading    []string
	k          kind
}

// splitter holds one document while it is being split.
type splitter struct {
	src    string
	opt    Options
	chunks []doc.Chunk

	lineStarts []int // offset of the first byte of each line, built on demand
	nesting    []int // per line: bracket depth or indentation, for code
	md         *mdInfo
}

// emit turns one group into chunks.
func (s *splitter) emit(g group) error {
	a, b := s.trim(g.start, g.end)
	if a == b {
		return nil
	}
	if n := s.count(a, b); n <= s.opt.MaxTokens {
		s.add(a, b, g.heading, n)
		return nil
	}
	atoms, err := s.atomizeParts(nil, g.start, g.end, g.k, 0)
	if err != nil {
		return err
	}
	s.pack(atoms, g.heading, g.k == kCodeDoc)
	return nil
}

// add appends the chunk src[a:b]; n is its token count.
func (s *splitter) add(a, b int, heading []string, n int) {
	s.chunks = append(s.chunks, doc.Chunk{
		Index:     len(s.chunks),
		Text:      s.src[a:b],
		Heading:   slices.Clone(heading),
		StartLine: s.lineOf(a),
		EndLine:   s.lineOf(b - 1),
		StartByte: a,
		EndByte:   b,
		Tokens:    n,
	})
}

// count is Count of src[a:b], without calling Count on the empty string.
func (s *splitter) count(a, b int) int {
	if a >= b {
		return 0
	}
	return s.opt.Count(s.src[a:b])
}

// fits reports whether src[a:b], trimmed, is within MaxTokens.
func (s *splitter) fits(a, b int) bool {
	a, b = s.trim(a, b)
	return s.count(a, b) <= s.opt.MaxTokens
}

// trim narrows [a, b) to drop surrounding whitespace. Trailing whitespace goes
// entirely; leading whitespace goes up to the start of the first non-blank
// line, so that a chunk starting at a line keeps that line's indentation.
func (s *splitter) trim(a, b int) (int, int) {
	b = skipBack(s.src[:b], b, a, isSpaceRune)
	i := skip(s.src[:b], a, isSpaceRune)
	if i == b {
		return b, b
	}
	if nl := strings.LastIndexByte(s.src[a:i], '\n'); nl >= 0 {
		return a + nl + 1, b
	}
	if a == 0 || s.src[a-1] == '\n' {
		return a, b
	}
	return i, b
}

// isSpaceRune reports whether a decoded rune of the given size is white space
// (an invalid byte is not).
func isSpaceRune(r rune, size int) bool {
	if r == utf8.RuneError && size <= 1 {
		return false
	}
	if r < utf8.RuneSelf {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
	}
	return unicode.IsSpace(r)
}

// skip returns the offset of the first rune of t at or after i that f rejects,
// or len(t).
func skip(t string, i int, f func(r rune, size int) bool) int {
	for i < len(t) {
		r, size := utf8.DecodeRuneInString(t[i:])
		if !f(r, size) {
			break
		}
		i += size
	}
	return i
}

// skipBack returns the offset just after the last rune of t[lo:j] that f
// rejects, or lo.
func skipBack(t string, j, lo int, f func(r rune, size int) bool) int {
	for j > lo {
		r, size := utf8.DecodeLastRuneInString(t[lo:j])
		if !f(r, size) {
			break
		}
		j -= size
	}
	return j
}

// lineOf returns the 1-based line number of byte offset i.
func (s *splitter) lineOf(i int) int {
	if s.lineStarts == nil {
		s.lineStarts = []int{0}
		for j := 0; j < len(s.src); j++ {
			if s.src[j] == '\n' {
				s.lineStarts = append(s.lineStarts, j+1)
			}
		}
	}
	return sort.SearchInts(s.lineStarts, i+1)
}

// errTooSmall is returned when a single byte does not fit in MaxTokens.
var errTooSmall = errors.New("MaxTokens is too small")
