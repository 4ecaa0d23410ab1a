// Package doc is sagasu's shared vocabulary: the documents it reads, the chunks
// it cuts them into and the hits a search returns. It imports nothing of sagasu's.
package doc

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// SourceType says where a document came from.
type SourceType string

// Source types that loaders produce.
const (
	TypeFile SourceType = "file" // a file on disk
	TypeText SourceType = "text" // text given on the command line or stdin
	TypeURL  SourceType = "url"  // a web page
	// TypeGitHub is a file in a GitHub repository.
	TypeGitHub SourceType = "github"
	// TypeGist is a file of a GitHub gist.
	TypeGist SourceType = "gist"
)

// Format says how a document's content is structured; the chunker picks its
// splitter from it.
type Format string

// Formats the chunker knows.
const (
	FormatMarkdown Format = "markdown"
	FormatGo       Format = "go"
	FormatCode     Format = "code" // any other programming language
	FormatText     Format = "text"
)

// Document is one source as a loader read it, before chunking.
type Document struct {
	URI     string     // where it came from: a path as given, "text:<hash>", a URL
	Type    SourceType // file, text, url, github, gist
	Format  Format     // markdown, go, code, text
	Title   string     // first heading, file name, or caller-given title
	Content string     // the original content, valid UTF-8
	// Lang is the programming language of code documents ("python", "ts", ...), if known.
	Lang string
}

// SourceID returns the stable identifier of the source with this URI: the first
// 16 hex digits of its SHA-256. It is the same in every store and across re-indexing.
func SourceID(uri string) string {
	sum := sha256.Sum256([]byte(uri))
	return hex.EncodeToString(sum[:8])
}

// ContentHash returns the hex SHA-256 of content; the indexer compares it to skip
// unchanged sources.
func ContentHash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// Chunk is a piece of a document small enough to index and return on its own.
type Chunk struct {
	ID       int64  // assigned by the store; 0 before it is stored
	SourceID string // the source this chunk belongs to
	Index    int    // position of the chunk within its source, from 0
	Text     string // the chunk's text, an exact substring of the source content
	// Heading is the heading path of the section the chunk lies in, outermost
	// first ("Guide", "Routing", "Dynamic Routes"); empty outside any section.
	Heading []string
	// StartLine and EndLine are the 1-based inclusive line span in the source.
	StartLine, EndLine int
	// StartByte and EndByte are the byte span [StartByte, EndByte) in the source.
	StartByte, EndByte int
	Tokens             int // size in the chunker's tokens
}

// HeadingPath renders the heading path the way users read it: "Guide > Routing".
func (c Chunk) HeadingPath() string { return JoinHeading(c.Heading) }

// JoinHeading joins a heading path with " > ".
func JoinHeading(h []string) string { return strings.Join(h, " > ") }

// Source is a stored document's record, without its chunks.
type Source struct {
	ID          string
	URI         string
	Type        SourceType
	Format      Format
	Title       string
	ContentHash string
	Size        int   // bytes of original content
	Chunks      int   // number of chunks
	IndexedAt   int64 // unix seconds
}

// Hit is one search result: a chunk, the source it came from and its score.
type Hit struct {
	Chunk  Chunk
	Source Source
	// Score is higher for better hits. Its scale depends on the mode: BM25 for
	// keyword search, cosine similarity for semantic search, fused rank score for hybrid.
	Score float64
}

// ContextText is what retrieval sees of a chunk: the source title and the
// heading path, then the text. Keyword analysis and embeddings both use it,
// so every chunk carries the context of where it sits.
func ContextText(title string, c Chunk) string {
	var b strings.Builder
	if title != "" && (len(c.Heading) == 0 || c.Heading[0] != title) {
		b.WriteString(title)
		b.WriteByte('\n')
	}
	for _, h := range c.Heading {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	b.WriteString(c.Text)
	return b.String()
}
