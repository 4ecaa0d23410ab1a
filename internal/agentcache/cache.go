// Package agentcache keeps durable records of what agents did in the loop —
// evaluations, query refinements, plan stages and whole sessions — as one
// JSON file per record under a cache folder, plus agent-cache.md, a Markdown
// summary regenerated from the records. Several processes may write to one
// folder at once: every record has a unique name and is written to a
// temporary file and renamed into place.
package agentcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// Kind is the kind of a record; each kind has its own sub-folder.
type Kind string

// The record kinds.
const (
	Evaluations Kind = "evaluations"
	Refinements Kind = "refinements"
	Stages      Kind = "stages"
	Sessions    Kind = "sessions"
)

// Kinds returns every record kind, in the order summaries list them.
func Kinds() []Kind { return []Kind{Sessions, Evaluations, Refinements, Stages} }

// prefix is the start of the file names of records of kind k.
func (k Kind) prefix() string {
	switch k {
	case Evaluations:
		return "eval"
	case Refinements:
		return "refine"
	case Stages:
		return "stage"
	case Sessions:
		return "session"
	}
	return ""
}

// ParseKind accepts a kind by its folder name or its record prefix
// ("evaluations" or "eval").
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if s == string(k) || s == k.prefix() {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown record kind %q: use sessions, evaluations, refinements or stages", s)
}

// kindOfID returns the kind a record ID belongs to.
func kindOfID(id string) (Kind, bool) {
	p, _, ok := strings.Cut(id, "-")
	if !ok {
		return "", false
	}
	for _, k := range Kinds() {
		if k.prefix() == p {
			return k, true
		}
	}
	return "", false
}

// Record is one cached step. Goal, Query, Score and Summary are what listings
// and agent-cache.md show; Data holds the full step as its producer wrote it.
type Record struct {
	ID        string    `json:"id"`
	Kind      Kind      `json:"kind"`
	Timestamp time.Time `json:"timestamp"`
	Goal      string    `json:"goal"`
	Query     string    `json:"query,omitempty"`
	// Score is the step's headline number: an evaluation's confidence, a
	// stage's score, a refinement's gain, a session's final confidence.
	Score   *float64        `json:"score,omitempty"`
	Summary string          `json:"summary,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// DefaultRetention is how many records of each kind a cache keeps when
// Options.Retention is 0.
const DefaultRetention = 1000

// SummaryFile is the name of the Markdown summary in the cache folder.
const SummaryFile = "agent-cache.md"

// MaxFileBytes is the most read of one record or of the summary; the
// cache writes far smaller files, and reads them only as plain files
// (userfile.ReadFile), never through a link.
const MaxFileBytes = 16 << 20

// summaryRows is how many records of each kind agent-cache.md lists.
const summaryRows = 20

// Options configure a Cache.
type Options struct {
	// Retention is how many records of each kind are kept; the oldest are
	// removed after each write beyond it. 0 means DefaultRetention; a
	// negative value keeps everything.
	Retention int
	// Logger receives warnings about records that cannot be read.
	Logger *slog.Logger
}

// Cache is a cache folder. Its methods may be called from many goroutines
// and processes at once.
type Cache struct {
	dir string
	opt Options
	log *slog.Logger
	seq atomic.Uint64
	pid int
	mu  sync.Mutex // serializes Upsert's read-modify-write
}

// Open returns the cache in dir. Nothing is created until the first write;
// reading a folder that does not exist yet finds no records.
func Open(dir string, opt Options) (*Cache, error) {
	if strings.TrimSpace(dir) == "" {
		return nil, errors.New("agent cache folder is empty: give a folder such as .sagasu/cache/agent")
	}
	if opt.Retention == 0 {
		opt.Retention = DefaultRetention
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cache{dir: dir, opt: opt, log: log, pid: os.Getpid()}, nil
}

// Dir returns the cache folder.
func (c *Cache) Dir() string { return c.dir }

// stampLayout sorts lexically in time order (fixed width, UTC).
const stampLayout = "20060102T150405.000000000Z"

// Save writes rec as a new record of rec.Kind and returns it with its ID and
// timestamp set. The summary is regenerated afterwards; the oldest records
// beyond the retention bound are removed.
func (c *Cache) Save(rec Record) (Record, error) {
	p := rec.Kind.prefix()
	if p == "" {
		return Record{}, fmt.Errorf("save agent cache record: unknown kind %q", rec.Kind)
	}
	now := time.Now().UTC()
	rec.Timestamp = now
	rec.ID = fmt.Sprintf("%s-%s-%d-%d", p, now.Format(stampLayout), c.pid, c.seq.Add(1))
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return Record{}, fmt.Errorf("save agent cache record: %w", err)
	}
	dir := filepath.Join(c.dir, string(rec.Kind))
	if err := userfile.MkdirAll(dir); err != nil {
		return Record{}, fmt.Errorf("create agent cache folder %q: %w: check its permissions, or choose another with --cache-dir", dir, err)
	}
	if err := userfile.Write(filepath.Join(dir, rec.ID+".json"), append(data, '\n')); err != nil {
		return Record{}, fmt.Errorf("save agent cache record in %q: %w", dir, err)
	}
	c.prune(rec.Kind)
	if err := c.WriteSummary(); err != nil {
		c.log.Warn("agent cache summary not updated", "dir", c.dir, "err", err)
	}
	return rec, nil
}

// names returns the record file names of kind k, oldest first. A folder
// that does not exist has no records.
func (c *Cache) names(k Kind) ([]string, error) {
	dir := filepath.Join(c.dir, string(k))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read agent cache folder %q: %w: check its permissions, or choose another with --cache-dir", dir, err)
	}
	prefix := k.prefix() + "-"
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".json") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// prune removes the oldest records of kind k beyond the retention bound.
// Another process may prune at the same time; files already gone are fine.
func (c *Cache) prune(k Kind) {
	if c.opt.Retention < 0 {
		return
	}
	names, err := c.names(k)
	if err != nil || len(names) <= c.opt.Retention {
		return
	}
	for _, n := range names[:len(names)-c.opt.Retention] {
		if err := os.Remove(filepath.Join(c.dir, string(k), n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.log.Warn("agent cache: old record not removed", "file", n, "err", err)
		}
	}
}

// read loads one record file. A file another process removed in the
// meantime reports fs.ErrNotExist.
func (c *Cache) read(k Kind, name string) (Record, error) {
	path := filepath.Join(c.dir, string(k), name)
	data, err := userfile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return Record{}, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, fmt.Errorf("%s is not a valid record: %w", path, err)
	}
	if r.ID != strings.TrimSuffix(name, ".json") || r.Kind != k {
		return Record{}, fmt.Errorf("%s is not a valid record: its id %q or kind %q does not match its name", path, r.ID, r.Kind)
	}
	return r, nil
}

// ListOptions narrow a listing.
type ListOptions struct {
	Kind  Kind // "" for every kind
	Limit int  // newest records to return; 0 for all
	// Goal keeps only records whose goal contains this text (case-insensitive).
	Goal string
}

// List returns records, newest first. Files that cannot be read or parsed
// are skipped with a warning; only a folder that cannot be read is an error.
func (c *Cache) List(opt ListOptions) ([]Record, error) {
	kinds := Kinds()
	if opt.Kind != "" {
		if opt.Kind.prefix() == "" {
			return nil, fmt.Errorf("unknown record kind %q: use sessions, evaluations, refinements or stages", opt.Kind)
		}
		kinds = []Kind{opt.Kind}
	}
	goal := strings.ToLower(opt.Goal)
	var out []Record
	for _, k := range kinds {
		names, err := c.names(k)
		if err != nil {
			return nil, err
		}
		kept := 0
		for i := len(names) - 1; i >= 0; i-- {
			if opt.Limit > 0 && kept >= opt.Limit {
				break
			}
			r, err := c.read(k, names[i])
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed by retention in another process
			}
			if err != nil {
				c.log.Warn("agent cache: skipping unreadable record", "err", err)
				continue
			}
			if goal != "" && !strings.Contains(strings.ToLower(r.Goal), goal) {
				continue
			}
			out = append(out, r)
			kept++
		}
	}
	slices.SortStableFunc(out, func(a, b Record) int { return b.Timestamp.Compare(a.Timestamp) })
	if opt.Limit > 0 && len(out) > opt.Limit {
		out = out[:opt.Limit]
	}
	return out, nil
}

// ErrNotFound is returned by Get for an ID with no record.
var ErrNotFound = errors.New("no such record")

// Get returns the record with the given ID (as List shows it).
func (c *Cache) Get(id string) (Record, error) {
	id = strings.TrimSuffix(strings.TrimSpace(id), ".json")
	k, ok := kindOfID(id)
	if !ok || strings.ContainsAny(id, `/\`) || strings.Contains(id, "..") {
		return Record{}, fmt.Errorf("%q is not a record ID: IDs look like eval-20250114T060000.000000000Z-1234-1 (see `sagasu cache list`)", id)
	}
	r, err := c.read(k, id+".json")
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, fmt.Errorf("record %q: %w in %s (see `sagasu cache list`)", id, ErrNotFound, c.dir)
	}
	return r, err
}

// Clear removes the records of one kind, or of every kind when k is "", and
// regenerates the summary. It returns how many records it removed.
func (c *Cache) Clear(k Kind) (int, error) {
	kinds := Kinds()
	if k != "" {
		if k.prefix() == "" {
			return 0, fmt.Errorf("unknown record kind %q: use sessions, evaluations, refinements or stages", k)
		}
		kinds = []Kind{k}
	}
	n := 0
	for _, kk := range kinds {
		names, err := c.names(kk)
		if err != nil {
			return n, err
		}
		for _, name := range names {
			err := os.Remove(filepath.Join(c.dir, string(kk), name))
			switch {
			case err == nil:
				n++
			case errors.Is(err, fs.ErrNotExist):
			default:
				return n, fmt.Errorf("clear agent cache: %w", err)
			}
		}
	}
	if _, err := os.Stat(c.dir); err == nil {
		if err := c.WriteSummary(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// WriteSummary regenerates agent-cache.md from the records. When other
// processes write at the same time, it re-renders until the summary it wrote
// reflects the records on disk, so the last writer leaves a complete summary.
func (c *Cache) WriteSummary() error {
	for attempt := 0; attempt < 10; attempt++ {
		md, seen, err := c.render()
		if err != nil {
			return err
		}
		if err := userfile.Write(filepath.Join(c.dir, SummaryFile), []byte(md)); err != nil {
			return fmt.Errorf("write %s: %w", SummaryFile, err)
		}
		now, err := c.snapshot()
		if err != nil {
			return err
		}
		if now == seen {
			return nil
		}
	}
	return nil
}

// snapshot identifies the set of records on disk: the count and newest name
// of every kind.
func (c *Cache) snapshot() (string, error) {
	var b strings.Builder
	for _, k := range Kinds() {
		names, err := c.names(k)
		if err != nil {
			return "", err
		}
		last := ""
		if len(names) > 0 {
			last = names[len(names)-1]
		}
		fmt.Fprintf(&b, "%s:%d:%s;", k, len(names), last)
	}
	return b.String(), nil
}

// render builds agent-cache.md and returns it with the snapshot it reflects.
func (c *Cache) render() (string, string, error) {
	seen, err := c.snapshot()
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	b.WriteString("# Agent cache\n\n")
	b.WriteString("Regenerated by sagasu from the JSON records in this folder after every write; edits here are lost.\n")
	b.WriteString("Read a record with `sagasu cache show ID`.\n")
	for _, k := range Kinds() {
		names, err := c.names(k)
		if err != nil {
			return "", "", err
		}
		title := strings.ToUpper(string(k[:1])) + string(k[1:])
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", title, len(names))
		if len(names) == 0 {
			b.WriteString("None yet.\n")
			continue
		}
		if len(names) > summaryRows {
			fmt.Fprintf(&b, "The latest %d of %d.\n\n", summaryRows, len(names))
		}
		b.WriteString("| time (UTC) | goal | query | score | summary | id |\n|---|---|---|---|---|---|\n")
		shown := 0
		for i := len(names) - 1; i >= 0 && shown < summaryRows; i-- {
			r, err := c.read(k, names[i])
			if err != nil {
				continue // corrupt or removed: List warns about it
			}
			shown++
			score := ""
			if r.Score != nil {
				score = strconv.FormatFloat(*r.Score, 'f', 2, 64)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | `%s` |\n", r.Timestamp.Format("2006-01-02 15:04:05"),
				cell(r.Goal), cell(r.Query), score, cell(r.Summary), r.ID)
		}
	}
	return b.String(), seen, nil
}

// cell makes text safe for one Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}
