// Package chunk cuts a document into chunks small enough to embed, index and
// return on their own, keeping the document's structure where it can.
//
// # Invariants
//
// For every document and every valid Options, Split guarantees:
//
//  1. Each chunk's Text is Content[StartByte:EndByte]; chunks come in order
//     of StartByte, and StartLine and EndLine are the 1-based lines of the
//     first and last byte of that span.
//  2. Count(Text) <= MaxTokens, whatever the input: a megabyte without a
//     space, a giant table or code block, binary junk, invalid UTF-8. When
//     nothing else is left, text is cut between runes, and only a rune that
//     alone exceeds MaxTokens is cut between bytes.
//  3. No text is dropped: every character of Content that is not white space
//     lies in at least one chunk. Only white space at the edges of a chunk is
//     left out (the indentation of a chunk's first line is kept).
//  4. Empty or blank content gives no chunks and no error.
//
// Split fails only for invalid Options, an unknown Format, or a Count under
// which a single byte exceeds MaxTokens (never EstimateTokens with a
// MaxTokens of 2 or more).
//
// # Splitters
//
// Markdown is cut on its heading tree: ATX headings (# to ######) and setext
// headings (a line underlined with === or ---), never inside fenced code
// blocks (``` or ~~~ of any length). A section runs from its heading line to
// the next heading and carries its heading path, outermost first and without
// the #s or a trailing {#anchor}: ["Routing", "Dynamic Routes"]. YAML front
// matter belongs to the text before the first heading. Two rules avoid
// useless chunks:
//
//   - A heading with no body before the next heading joins the section after
//     it. The joined chunk keeps the later path when it lies under the
//     earlier one ("## Routing" directly followed by "### Static Routes"
//     gives ["Guide", "Routing", "Static Routes"]), and their common part
//     otherwise.
//   - A section smaller than MinTokens joins its neighbour when the two fit
//     in MaxTokens together and their common path is at most one level
//     shorter than either path: a parent's short intro with its first
//     subsection, or small siblings under their parent. The chunk takes the
//     common path, so it never claims a heading some of its text is not
//     under. A small preamble (such as front matter alone) joins the first
//     section and takes its path.
//
// Go source is parsed with go/parser: the package clause with the imports
// (and the comments above them) is one chunk, and each top-level declaration
// with its doc comment is another, headed "func (s *Store) Put", "type
// Store", "var ErrNotFound" or "const (A, B, C, …)". Comments between
// declarations go with the declaration after them. Source that does not parse
// is handled as generic code.
//
// Other code is one unit made of top-level blocks: a new block starts at a
// line with no indentation and no open bracket that follows a blank or a
// nested line, so comments and decorators stay with what they precede.
// Plain text is one unit made of paragraphs, which end at blank lines. Both
// are packed as described below, and their chunks have no heading.
//
// # Sections larger than MaxTokens
//
// A unit that does not fit is cut into finer units, each as coarse as fits:
// markdown into blocks (paragraphs, list items, tables, and fenced code
// blocks, which stay whole when they fit; a heading stays with the block
// after it), code into lines, prose into sentences (ending in . ! ? followed
// by a space, or in 。！？), sentences into lines, lines into words, words
// into groups of runes, then runes, then bytes. Consecutive units are then
// packed greedily up to MaxTokens; each piece ends at the strongest boundary
// (heading, block, shallow line of code, sentence, line, word) in its second
// half. A piece after the first starts with up to Overlap tokens repeated
// from the end of the piece before: the longest such tail, shortened to start
// at the strongest unit boundary in it, or else at a line, sentence or word
// start (in code, only at a line start, or there is no overlap).
// The overlap is dropped when it would leave no room, so it never makes a
// piece exceed MaxTokens. Overlap applies only between pieces of one unit
// that was too big (a markdown section, a Go declaration, a whole code or
// text document), never across sections or declarations.
//
// # Token counts
//
// Sizes are measured with Options.Count, by default EstimateTokens, a fast
// estimate of OpenAI's cl100k_base count that errs on the high side.
package chunk
