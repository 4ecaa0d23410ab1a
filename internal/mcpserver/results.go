package mcpserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/tools"
)

// ranked runs a paged call (tools.Ranked with the server's cursors).
func ranked[R any](s *Server, tool, cursor, args string, call func(offset int) (R, error), ranking func(R) tools.Ranking) (R, error) {
	return tools.Ranked(s.cursors, tool, cursor, args, call, ranking)
}

// next returns the cursor, issued at at, to the page after the first kept
// hits of p, or "" when the ranking ends there.
func (s *Server) next(p tools.Ranking, tool, args string, kept int, at time.Time) string {
	return s.cursors.Next(p, tool, args, kept, at)
}

// writeResults renders results as Markdown.
func writeResults(b *strings.Builder, rs []tools.Result) {
	for _, r := range rs {
		loc := fmt.Sprintf("%s:%d-%d", r.Source.URI, r.Lines[0], r.Lines[1])
		fmt.Fprintf(b, "\n### %d. %s", r.Rank, loc)
		if r.Heading != "" {
			fmt.Fprintf(b, " — %s", r.Heading)
		}
		fmt.Fprintf(b, "\nscore %g · chunk %d · %s\n", r.Score, r.ChunkID, r.Resource)
		if r.Text != "" {
			b.WriteString(r.Text)
			b.WriteByte('\n')
		}
		if r.Truncated {
			fmt.Fprintf(b, "[shortened to fit the budget: read %s for the whole chunk]\n", r.Resource)
		}
		if o := r.Original; o != nil {
			fmt.Fprintf(b, "\n%s %s, lines %d-%d:\n%s\n", o.Scope, o.Heading, o.Lines[0], o.Lines[1], o.Content)
			if o.Truncated {
				fmt.Fprintf(b, "[shortened to fit the budget: read %s or call sagasu_get]\n", o.Resource)
			}
		}
	}
}

// resultLinks links every result's chunk.
func resultLinks(rs []tools.Result) []*mcp.ResourceLink {
	links := make([]*mcp.ResourceLink, 0, len(rs))
	for _, r := range rs {
		name := r.Source.URI
		if r.Heading != "" {
			name += " — " + r.Heading
		}
		links = append(links, chunkLink(r.ChunkID, name))
	}
	return links
}

// footer says what was left out and how to get it.
func footer(b *strings.Builder, omitted int, truncated bool, cursor string) {
	if omitted > 0 {
		fmt.Fprintf(b, "\n%d more result(s) on this page did not fit the budget.", omitted)
	}
	if truncated {
		b.WriteString("\nSome texts were shortened to fit; their resources hold them whole.")
	}
	if cursor != "" {
		fmt.Fprintf(b, "\nNext page: call again with the same arguments and cursor %q.\n", cursor)
	}
}
