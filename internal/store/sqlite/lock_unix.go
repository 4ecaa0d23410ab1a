//go:build unix

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// Lock implements store.Driver with an advisory lock on a file beside the
// database; the kernel releases it if the process dies. The lock file is
// opened without following a link and must be a plain file (see
// userfile.Open): a cloned repository's ".sagasu/sagasu.db.lock ->
// ../../thesis.txt" would otherwise be emptied and given a PID.
func (s *Store) Lock(ctx context.Context) (func(), error) {
	name := s.path + ".lock"
	f, err := userfile.Open(name, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("lock index %q: %w", s.path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := ""
		if b, rerr := userfile.ReadAtMost(f, name, 64); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf(" (process %d)", pid)
			}
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w%s: another `sagasu index` is writing to %q; wait for it to finish or use another --db", store.ErrLocked, holder, s.path)
		}
		return nil, fmt.Errorf("lock index %q: %w", s.path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
