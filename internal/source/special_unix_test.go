//go:build unix

package source

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

func TestWalkSkipsSpecialFiles(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	tree(t, root, map[string]string{"d/a.md": "# A\n"})
	err := syscall.Mkfifo(filepath.Join(root, "d", "pipe"), 0o644)
	testenv.Platform(t, err == nil, fmt.Sprintf("mkfifo: %v", err))
	// Reading the FIFO would block forever; the walk must not open it.
	r := walk(t, []string{"d"}, Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.uris(); !reflect.DeepEqual(got, []string{"d/a.md"}) {
		t.Errorf("URIs = %q", got)
	}
	if got := r.skipped(); !reflect.DeepEqual(got, map[string]SkipReason{"d/pipe": SkipIgnored}) {
		t.Errorf("skips = %v", got)
	}
}

func TestWalkExplicitPipe(t *testing.T) {
	var fds [2]int
	perr := syscall.Pipe(fds[:])
	testenv.Platform(t, perr == nil, fmt.Sprintf("pipe: %v", perr))
	defer syscall.Close(fds[0])
	go func() {
		_, _ = syscall.Write(fds[1], []byte("From a pipe\n"))
		syscall.Close(fds[1])
	}()
	// As in: sagasu index <(generate-docs)
	in := "/dev/fd/" + strconv.Itoa(fds[0])
	var got []doc.Document
	err := Walk(context.Background(), []string{in}, Options{}, func(d doc.Document) error {
		got = append(got, d)
		return nil
	}, nil)
	testenv.Platform(t, err == nil, fmt.Sprintf("/dev/fd not usable here: %v", err))
	if len(got) != 1 || got[0].Content != "From a pipe\n" || got[0].URI != in {
		t.Errorf("got %+v", got)
	}
}
