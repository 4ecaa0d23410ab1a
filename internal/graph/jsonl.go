package graph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// FileLog is a Log in one JSON Lines file: one event per line, appended.
// Durable events (checkpoints, Once results, outcomes) are fsynced before
// Append returns. A process killed mid-write leaves at most a torn last
// line; OpenFileLog cuts it off, so the log stays readable and appendable.
type FileLog struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

// OpenFileLog opens (or creates) the JSONL log at path.
func OpenFileLog(path string) (*FileLog, error) {
	f, err := userfile.OpenAppend(path)
	if err != nil {
		return nil, fmt.Errorf("open run log %q: %w", path, err)
	}
	if err := cutTornTail(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open run log %q: %w", path, err)
	}
	return &FileLog{path: path, f: f}, nil
}

// cutTornTail truncates f after its last newline and leaves the offset at
// the end. Only the last line can be torn: every earlier one ended in '\n'.
func cutTornTail(f *os.File) error {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	const chunk = 4096
	end := size
	for end > 0 {
		start := max(end-chunk, 0)
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			end = start + int64(i) + 1
			break
		}
		end = start
	}
	if end == size {
		return nil
	}
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("cut torn last line: %w", err)
	}
	_, err = f.Seek(end, io.SeekStart)
	return err
}

// Append writes ev as one line, fsyncing durable events.
func (l *FileLog) Append(_ context.Context, ev Event) error {
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode %s event of run %q: %w", ev.Type, ev.Run, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("append to run log %q: %w", l.path, err)
	}
	if durable(ev) {
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("sync run log %q: %w", l.path, err)
		}
	}
	return nil
}

// Events reads run's events from the file. A last line without its
// newline (torn by a crash of another process) is skipped; a bad line
// anywhere else is an error naming its line number.
func (l *FileLog) Events(ctx context.Context, run string) ([]Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.Open(l.path)
	if err != nil {
		return nil, fmt.Errorf("read run log %q: %w", l.path, err)
	}
	defer f.Close()
	var out []Event
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, nil // a non-empty line here is torn: no newline
		}
		if err != nil {
			return nil, fmt.Errorf("read run log %q: %w", l.path, err)
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("run log %q line %d is not an event: %w", l.path, n, err)
		}
		if ev.Run == run {
			out = append(out, ev)
		}
	}
}

// Close closes the file.
func (l *FileLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
