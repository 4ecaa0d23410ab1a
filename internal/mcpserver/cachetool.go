package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/budget"
)

func (s *Server) readCache(_ context.Context, req *mcp.CallToolRequest, in ReadCacheInput) (*mcp.CallToolResult, ReadCacheOutput, error) {
	c := s.opt.Cache
	if c == nil {
		return nil, ReadCacheOutput{}, errors.New("this server keeps no agent cache (it was started with --no-cache)")
	}
	limit := in.Limit
	if limit == 0 {
		limit = 10
	}
	if limit < 1 || limit > 100 {
		return nil, ReadCacheOutput{}, fmt.Errorf("limit %d is out of range: use 1 to 100", limit)
	}
	var recs []agentcache.Record
	withData := in.IncludeData
	if in.ID != "" {
		r, err := c.Get(in.ID)
		if err != nil {
			return nil, ReadCacheOutput{}, err
		}
		recs, withData = []agentcache.Record{r}, true
	} else {
		var kind agentcache.Kind
		if in.Kind != "" {
			k, err := agentcache.ParseKind(in.Kind)
			if err != nil {
				return nil, ReadCacheOutput{}, err
			}
			kind = k
		}
		var err error
		recs, err = c.List(agentcache.ListOptions{Kind: kind, Limit: limit, Goal: in.Goal})
		if err != nil {
			return nil, ReadCacheOutput{}, err
		}
	}
	summary := ""
	if in.Summary {
		raw, err := os.ReadFile(filepath.Join(c.Dir(), agentcache.SummaryFile))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			summary = "(no records yet)"
		case err != nil:
			return nil, ReadCacheOutput{}, fmt.Errorf("read %s: %w", agentcache.SummaryFile, err)
		default:
			summary = string(raw)
		}
	}
	// Data is whole or absent, never cut: the text limit decides which.
	data := make([]any, len(recs))
	size := make([]int, len(recs))
	lengths := []int{runes(summary)}
	for i, r := range recs {
		if withData && len(r.Data) > 0 {
			_ = json.Unmarshal(r.Data, &data[i])
			size[i] = len(r.Data)
			lengths = append(lengths, size[i])
		}
	}
	lim := s.limits.Cap
	return fit(s, req, lim, budget.Shape{Items: len(recs), Text: budget.TextBound(lengths, lim)}, 200, func(sh budget.Shape, est int) view[ReadCacheOutput] {
		out := ReadCacheOutput{Dir: c.Dir(), Records: []CacheRecord{}, OmittedRecords: len(recs) - sh.Items, Measured: Measured{EstimatedTokens: est, Budget: lim}}
		out.SummaryMarkdown, out.Truncated = budget.Truncate(summary, sh.Text)
		var b strings.Builder
		fmt.Fprintf(&b, "Agent cache %s: %d record(s)\n", c.Dir(), len(recs))
		for i, r := range recs[:sh.Items] {
			cr := CacheRecord{ID: r.ID, Kind: string(r.Kind), Timestamp: r.Timestamp.UTC().Format(time.RFC3339Nano), Goal: echo(r.Goal),
				Query: echo(r.Query), Score: r.Score, Summary: echo(r.Summary)}
			if data[i] != nil {
				if size[i] <= sh.Text {
					cr.Data = data[i]
				} else {
					cr.DataOmitted, out.Truncated = true, true
				}
			}
			out.Records = append(out.Records, cr)
			score := ""
			if r.Score != nil {
				score = fmt.Sprintf(" score %.2f", *r.Score)
			}
			fmt.Fprintf(&b, "- %s %s%s: %s | %s | %s\n", cr.Timestamp, cr.ID, score, cr.Goal, cr.Query, cr.Summary)
			if cr.Data != nil {
				raw, _ := json.Marshal(cr.Data)
				fmt.Fprintf(&b, "  data: %s\n", raw)
			}
		}
		if out.SummaryMarkdown != "" {
			b.WriteString("\n" + out.SummaryMarkdown + "\n")
		}
		if out.OmittedRecords > 0 {
			fmt.Fprintf(&b, "%d more record(s) did not fit: ask with a smaller limit, or one by id.\n", out.OmittedRecords)
		}
		return view[ReadCacheOutput]{Out: out, Text: b.String()}
	})
}
