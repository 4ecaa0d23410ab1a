package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agentcache"
	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// ReadCacheInput is sagasu_read_cache's input.
type ReadCacheInput struct {
	Kind        string `json:"kind,omitempty" jsonschema:"evaluations, refinements, stages or sessions; all when empty"`
	ID          string `json:"id,omitempty" jsonschema:"one record, with its data"`
	SessionID   string `json:"sessionId,omitempty" jsonschema:"the record of one session (the sessionId sagasu_loop, sagasu_search, sagasu_evaluate or sagasu_refine_query returned), with its data"`
	Goal        string `json:"goal,omitempty" jsonschema:"only records whose goal contains this text"`
	Limit       int    `json:"limit,omitempty" jsonschema:"newest records to return, 1 to 100 (default 10)"`
	IncludeData bool   `json:"includeData,omitempty" jsonschema:"include each record's full data"`
	Summary     bool   `json:"summary,omitempty" jsonschema:"include agent-cache.md, the Markdown summary of the cache"`
}

// ReadCacheOutput lists agent cache records.
type ReadCacheOutput struct {
	Dir             string        `json:"dir"`
	Records         []CacheRecord `json:"records"`
	SummaryMarkdown string        `json:"summaryMarkdown,omitempty"`
	OmittedRecords  int           `json:"omittedRecords" jsonschema:"records left out to fit the budget; ask with a smaller limit or by id"`
	Truncated       bool          `json:"truncated" jsonschema:"the summary was shortened, or some data left out, to fit the budget"`
	Measured
}

// CacheRecord is one recorded step.
type CacheRecord struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Timestamp   string   `json:"timestamp"`
	Goal        string   `json:"goal"`
	Query       string   `json:"query,omitempty"`
	Score       *float64 `json:"score,omitempty"`
	Summary     string   `json:"summary,omitempty"`
	Data        any      `json:"data,omitempty"`
	DataOmitted bool     `json:"dataOmitted,omitempty" jsonschema:"the data did not fit: read this record alone by id"`
}

// CacheResult is what ReadCache found, before it is shaped.
type CacheResult struct {
	Dir     string
	Records []agentcache.Record
	// Data is each record's decoded data (nil when not asked for) and
	// DataSize its length in bytes.
	Data     []any
	DataSize []int
	// Summary is agent-cache.md, when asked for.
	Summary string
}

// ReadCache reads the agent cache: the newest records (of a kind, for a
// goal), one record by ID, and the Markdown summary.
func (t *Toolset) ReadCache(_ context.Context, in ReadCacheInput) (CacheResult, error) {
	c := t.opt.Cache
	if c == nil {
		return CacheResult{}, errors.New("this server keeps no agent cache (it was started with --no-cache)")
	}
	limit := in.Limit
	if limit == 0 {
		limit = 10
	}
	if limit < 1 || limit > 100 {
		return CacheResult{}, badArg("limit", limit, "a whole number from 1 to 100")
	}
	var recs []agentcache.Record
	withData := in.IncludeData
	switch {
	case in.ID != "" && in.SessionID != "":
		return CacheResult{}, errors.New("give id or sessionId, not both")
	case in.ID != "":
		r, err := c.Get(in.ID)
		if err != nil {
			return CacheResult{}, err
		}
		recs, withData = []agentcache.Record{r}, true
	case in.SessionID != "":
		r, found, err := c.Keyed(agentcache.Sessions, in.SessionID)
		if err != nil {
			return CacheResult{}, err
		}
		if !found {
			return CacheResult{}, missingf("session %q has no record in the agent cache: list the sessions with kind sessions", in.SessionID)
		}
		recs, withData = []agentcache.Record{r}, true
	default:
		var kind agentcache.Kind
		if in.Kind != "" {
			k, err := agentcache.ParseKind(in.Kind)
			if err != nil {
				return CacheResult{}, err
			}
			kind = k
		}
		var err error
		recs, err = c.List(agentcache.ListOptions{Kind: kind, Limit: limit, Goal: in.Goal})
		if err != nil {
			return CacheResult{}, err
		}
	}
	res := CacheResult{Dir: c.Dir(), Records: recs, Data: make([]any, len(recs)), DataSize: make([]int, len(recs))}
	if in.Summary {
		// Through userfile: a cloned repository can ship the summary as a
		// link to the user's files.
		raw, err := userfile.ReadFile(filepath.Join(c.Dir(), agentcache.SummaryFile), agentcache.MaxFileBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			res.Summary = "(no records yet)"
		case err != nil:
			return CacheResult{}, fmt.Errorf("read %s: %w", agentcache.SummaryFile, err)
		default:
			res.Summary = string(raw)
		}
	}
	for i, r := range recs {
		if withData && len(r.Data) > 0 {
			_ = json.Unmarshal(r.Data, &res.Data[i])
			res.DataSize[i] = len(r.Data)
		}
	}
	return res, nil
}

// TextLengths are the lengths a budget weighs: the summary's runes and each
// record's data bytes. Data is whole or absent, never cut.
func (c CacheResult) TextLengths() []int {
	lengths := []int{Runes(c.Summary)}
	for i, d := range c.Data {
		if d != nil {
			lengths = append(lengths, c.DataSize[i])
		}
	}
	return lengths
}

// Output renders the first items records; data longer than text bytes is
// left out, and the summary cut to text runes.
func (c CacheResult) Output(items, text int) ReadCacheOutput {
	out := ReadCacheOutput{Dir: c.Dir, Records: []CacheRecord{}, OmittedRecords: len(c.Records) - items}
	out.SummaryMarkdown, out.Truncated = budget.Truncate(c.Summary, text)
	for i, r := range c.Records[:items] {
		cr := CacheRecord{ID: r.ID, Kind: string(r.Kind), Timestamp: r.Timestamp.UTC().Format(time.RFC3339Nano), Goal: echo(r.Goal),
			Query: echo(r.Query), Score: r.Score, Summary: echo(r.Summary)}
		if c.Data[i] != nil {
			if c.DataSize[i] <= text {
				cr.Data = c.Data[i]
			} else {
				cr.DataOmitted, out.Truncated = true, true
			}
		}
		out.Records = append(out.Records, cr)
	}
	return out
}
