//go:build unix

package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// TestLinkedLockCannotEmptyAFile plays the attack of issue 35: a cloned
// repository commits .sagasu/sagasu.db.lock -> ../../thesis.txt, and any
// writing command emptied the thesis and wrote a PID into it. The lock is
// refused, with what to do, and the thesis is untouched; so is a lock that
// is a hard link to it, or a FIFO.
func TestLinkedLockCannotEmptyAFile(t *testing.T) {
	ctx := context.Background()
	const thesis = "Chapter 1. Five years of work.\n"
	for _, plant := range []string{"symlink", "hardlink", "fifo"} {
		t.Run(plant, func(t *testing.T) {
			home := t.TempDir()
			victim := filepath.Join(home, "thesis.txt")
			if err := os.WriteFile(victim, []byte(thesis), 0o644); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(home, "clone", ".sagasu", "sagasu.db")
			s, err := openDriver(ctx, db, Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			switch plant {
			case "symlink":
				err = os.Symlink("../../thesis.txt", db+".lock")
			case "hardlink":
				err = os.Link(victim, db+".lock")
			case "fifo":
				err = syscall.Mkfifo(db+".lock", 0o600)
			}
			if err != nil {
				t.Fatalf("make a %s: %v", plant, err)
			}
			unlock, err := s.Lock(ctx)
			if err == nil {
				unlock()
			}
			if b, _ := os.ReadFile(victim); string(b) != thesis {
				t.Errorf("the thesis became %q", b)
			}
			if !errors.Is(err, userfile.ErrNotPlain) || !strings.Contains(err.Error(), "delete") {
				t.Errorf("Lock through a %s: %v, want a refusal saying what to do", plant, err)
			}
			// Opening the index again is refused too, before SQLite runs.
			if _, err := openDriver(ctx, db, Options{}); !errors.Is(err, userfile.ErrNotPlain) {
				t.Errorf("open with a %s lock: %v, want a refusal", plant, err)
			}
		})
	}
}

// TestLinkedWALIsRefused: a committed index whose -wal or -shm is a link
// is refused with a message naming the file (SQLite alone said "unable to
// open database file"), and the link's target is untouched.
func TestLinkedWALIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range []string{"-wal", "-shm", ".hnsw"} {
		home := t.TempDir()
		victim := filepath.Join(home, "notes.txt")
		if err := os.WriteFile(victim, []byte("my notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(home, "sagasu.db")
		s, err := openDriver(ctx, db, Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		os.Remove(db + c)
		if err := os.Symlink(victim, db+c); err != nil {
			t.Fatal(err)
		}
		_, err = openDriver(ctx, db, Options{Create: true})
		if !errors.Is(err, userfile.ErrNotPlain) || !strings.Contains(err.Error(), "sagasu.db"+c) {
			t.Errorf("%s is a link: open = %v, want a refusal naming it", c, err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "my notes\n" {
			t.Errorf("%s: the link's target became %q", c, b)
		}
	}
}

// TestLinkedIndexIsRefused: a clone ships .sagasu/sagasu.db as a link to
// another of the user's indexes; opening it (to index the clone, which
// would sync that index to the clone's files) is refused, naming the link,
// and the other index is untouched. The real file opens.
func TestLinkedIndexIsRefused(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	other := filepath.Join(home, "work", ".sagasu", "sagasu.db")
	s, err := openDriver(ctx, other, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, _ := os.ReadFile(other)
	db := filepath.Join(home, "clone", ".sagasu", "sagasu.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../work/.sagasu/sagasu.db", db); err != nil {
		t.Fatal(err)
	}
	if s, err := openDriver(ctx, db, Options{Create: true}); !errors.Is(err, userfile.ErrNotPlain) || !strings.Contains(err.Error(), "--db") {
		if err == nil {
			s.Close()
		}
		t.Errorf("open through a link: %v, want a refusal saying what to do", err)
	}
	if after, _ := os.ReadFile(other); string(after) != string(before) {
		t.Error("the other index changed")
	}
	if _, err := os.Stat(other + "-wal"); err == nil {
		t.Error("the other index got a -wal: it was opened")
	}
	s, err = openDriver(ctx, other, Options{})
	if err != nil {
		t.Fatalf("the real file: %v", err)
	}
	s.Close()
}
