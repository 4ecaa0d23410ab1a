package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
)

// result turns a tool's answer into a Result, trimming the text for the model.
func (m *Manager) result(res *mcp.CallToolResult) Result {
	r := Result{IsError: res.IsError}
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			r.Images++
		case *mcp.AudioContent:
			r.Audio++
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[binary resource %s]", c.Resource.URI))
			}
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	r.Full = strings.Join(parts, "\n")
	r.Text, r.Tokens, r.FullTokens, r.Truncated = trim(m.counter, r.Full, m.maxTokens)
	return r
}

// trim keeps the head of full within maxTokens (a negative budget keeps
// everything), ending it with a note that says how much was cut. It returns
// the text, its tokens, full's tokens and whether it cut.
func trim(c *budget.Counter, full string, maxTokens int) (text string, tokens, fullTokens int, cut bool) {
	fullTokens = c.Count(full)
	if maxTokens < 0 || fullTokens <= maxTokens {
		return full, fullTokens, fullTokens, false
	}
	runes := utf8.RuneCountInString(full)
	note := func(kept int) string {
		return fmt.Sprintf("\n[result cut to fit %d tokens: showing the first %d of %d characters (about %d tokens in all); the full text is kept in the run log]", maxTokens, kept, runes, fullTokens)
	}
	// The longest head that fits with its note: binary search on its length
	// in runes; budget.Truncate cuts at a line break near the end when it can.
	fits := func(n int) (string, bool) {
		head, _ := budget.Truncate(full, n)
		s := head + note(utf8.RuneCountInString(head))
		return s, c.Count(s) <= maxTokens
	}
	best := note(0)
	// Search up to twice the length the average token size predicts: each
	// count then covers about the budget, not the whole result.
	lo, hi := 0, min(runes-1, 2*runes/fullTokens*maxTokens+64)
	// Within a hundredth of the length is close enough.
	for lo <= hi && hi-lo > max(16, lo/100) {
		mid := (lo + hi) / 2
		if s, ok := fits(mid); ok {
			best, lo = s, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best, c.Count(best), fullTokens, true
}
