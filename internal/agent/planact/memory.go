package planact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// Recollection is what the agent remembers of a past run: the goal, the
// plan it followed, what failed, and how it ended.
type Recollection struct {
	Run     string    `json:"run"`
	Goal    string    `json:"goal"`
	Plan    []string  `json:"plan"`
	Failed  []string  `json:"failed,omitempty"`
	Outcome string    `json:"outcome"`
	Reason  string    `json:"reason,omitempty"`
	Answer  string    `json:"answer,omitempty"`
	At      time.Time `json:"at"`
	// Score is how similar the recalled run's goal is to the new one (0..1);
	// set by Recall.
	Score float64 `json:"score,omitempty"`
}

// Memory recalls past runs similar to a goal and remembers finished ones.
type Memory interface {
	// Recall returns up to n recollections whose goals are most like goal,
	// most similar first; none is not an error.
	Recall(ctx context.Context, goal string, n int) ([]Recollection, error)
	// Remember stores r, replacing an earlier recollection of the same run.
	Remember(ctx context.Context, r Recollection) error
}

// FileMemory is a Memory kept in one JSON file (memory.json) under a
// directory, searched by the overlap of the goals' analysed terms.
type FileMemory struct {
	path string
	an   *analyze.Analyzer
	mu   sync.Mutex
}

// memoryFile is the file name under the directory.
const memoryFile = "memory.json"

// maxRecollections bounds the file; the oldest are dropped.
const maxRecollections = 500

// NewFileMemory returns a FileMemory in dir, creating dir if needed.
func NewFileMemory(dir string) (*FileMemory, error) {
	if dir == "" {
		return nil, errors.New("agent memory: the directory is empty; give a directory to keep past runs in")
	}
	if err := userfile.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("agent memory: create %s: %w", dir, err)
	}
	return &FileMemory{path: filepath.Join(dir, memoryFile), an: analyze.New(analyze.Options{})}, nil
}

func (m *FileMemory) load() ([]Recollection, error) {
	data, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agent memory: read %s: %w", m.path, err)
	}
	var rs []Recollection
	if err := json.Unmarshal(data, &rs); err != nil {
		return nil, fmt.Errorf("agent memory: %s is not a list of recollections: %w", m.path, err)
	}
	return rs, nil
}

// Recall scores every recollection by the Jaccard overlap of its goal's
// terms with goal's and returns the best n with some overlap.
func (m *FileMemory) Recall(ctx context.Context, goal string, n int) ([]Recollection, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	rs, err := m.load()
	m.mu.Unlock()
	if err != nil || n <= 0 {
		return nil, err
	}
	want := termSet(m.an, goal)
	var out []Recollection
	for _, r := range rs {
		if s := overlap(want, termSet(m.an, r.Goal)); s > 0 {
			r.Score = s
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Recollection) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return b.At.Compare(a.At)
	})
	return out[:min(n, len(out))], nil
}

// Remember adds r (replacing the recollection of the same run) and writes
// the file atomically.
func (m *FileMemory) Remember(ctx context.Context, r Recollection) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	rs, err := m.load()
	if err != nil {
		return err
	}
	r.Score = 0
	rs = slices.DeleteFunc(rs, func(o Recollection) bool { return o.Run == r.Run && r.Run != "" })
	rs = append(rs, r)
	if len(rs) > maxRecollections {
		rs = rs[len(rs)-maxRecollections:]
	}
	data, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return fmt.Errorf("agent memory: encode: %w", err)
	}
	if err := userfile.Write(m.path, data); err != nil {
		return fmt.Errorf("agent memory: write %s: %w", m.path, err)
	}
	return nil
}

func termSet(an *analyze.Analyzer, s string) map[string]bool {
	out := map[string]bool{}
	for _, t := range an.QueryTerms(s) {
		out[t] = true
	}
	return out
}

// overlap is the Jaccard similarity of two term sets.
func overlap(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	both := 0
	for t := range a {
		if b[t] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}
