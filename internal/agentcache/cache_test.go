package agentcache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

func open(t *testing.T, dir string, opt Options) *Cache {
	t.Helper()
	c, err := Open(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func score(f float64) *float64 { return &f }

func TestSaveListGetClear(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agent")
	c := open(t, dir, Options{})
	if recs, err := c.List(ListOptions{}); err != nil || len(recs) != 0 {
		t.Fatalf("a cache that was never written lists %v, %v; want nothing and no error", recs, err)
	}
	ev, err := c.Save(Record{Kind: Evaluations, Goal: "VitePressの設定方法を理解する", Query: "VitePress configuration", Score: score(0.6),
		Data: json.RawMessage(`{"confidence":0.6}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ev.ID, "eval-") || ev.Timestamp.IsZero() {
		t.Fatalf("saved record has id %q and time %v", ev.ID, ev.Timestamp)
	}
	if _, err := os.Stat(filepath.Join(dir, "evaluations", ev.ID+".json")); err != nil {
		t.Fatalf("record file: %v", err)
	}
	ref, err := c.Save(Record{Kind: Refinements, Goal: "VitePressの設定方法を理解する", Query: "VitePress theme config", Summary: "broaden"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.List(ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != ref.ID || all[1].ID != ev.ID {
		t.Fatalf("List = %v; want the refinement then the evaluation (newest first)", ids(all))
	}
	evs, _ := c.List(ListOptions{Kind: Evaluations})
	var compact bytes.Buffer
	if len(evs) == 1 {
		_ = json.Compact(&compact, evs[0].Data)
	}
	if len(evs) != 1 || evs[0].ID != ev.ID || *evs[0].Score != 0.6 || compact.String() != `{"confidence":0.6}` {
		t.Fatalf("evaluations = %+v", evs)
	}
	got, err := c.Get(ev.ID)
	if err != nil || got.Query != "VitePress configuration" {
		t.Fatalf("Get(%s) = %+v, %v", ev.ID, got, err)
	}
	if _, err := c.Get("eval-20990101T000000.000000000Z-1-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing record: %v; want ErrNotFound", err)
	}
	if _, err := c.Get("../../etc/passwd"); err == nil || !strings.Contains(err.Error(), "not a record ID") {
		t.Fatalf("Get of a path: %v; want a refusal", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Evaluations (1)", "## Refinements (1)", "VitePress configuration", ev.ID, "0.60"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("agent-cache.md lacks %q:\n%s", want, md)
		}
	}
	n, err := c.Clear(Refinements)
	if err != nil || n != 1 {
		t.Fatalf("Clear(refinements) = %d, %v", n, err)
	}
	if left, _ := c.List(ListOptions{}); len(left) != 1 || left[0].ID != ev.ID {
		t.Fatalf("after clearing refinements: %v", ids(left))
	}
	n, err = c.Clear("")
	if err != nil || n != 1 {
		t.Fatalf("Clear() = %d, %v", n, err)
	}
	md, _ = os.ReadFile(filepath.Join(dir, SummaryFile))
	if !strings.Contains(string(md), "## Evaluations (0)") {
		t.Fatalf("summary not regenerated after clear:\n%s", md)
	}
}

func ids(rs []Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestRetentionKeepsNewest(t *testing.T) {
	c := open(t, t.TempDir(), Options{Retention: 3})
	var saved []string
	for i := 0; i < 7; i++ {
		r, err := c.Save(Record{Kind: Sessions, Goal: fmt.Sprint("goal ", i)})
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, r.ID)
	}
	got, err := c.List(ListOptions{Kind: Sessions})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{saved[6], saved[5], saved[4]}
	if strings.Join(ids(got), ",") != strings.Join(want, ",") {
		t.Fatalf("kept %v; want the newest three %v", ids(got), want)
	}
}

func TestCorruptRecordIsSkippedWithWarning(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	c := open(t, dir, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	good, err := c.Save(Record{Kind: Evaluations, Goal: "g", Query: "q"})
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "evaluations", "eval-20000101T000000.000000000Z-1-1.json")
	if err := os.WriteFile(bad, []byte(`{"id": "eval-2000`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A stray temporary file from a crashed writer is not a record either.
	if err := os.WriteFile(filepath.Join(dir, "evaluations", ".tmp-123"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := c.List(ListOptions{})
	if err != nil {
		t.Fatalf("List with a corrupt file: %v", err)
	}
	if len(got) != 1 || got[0].ID != good.ID {
		t.Fatalf("List = %v; want only the good record", ids(got))
	}
	if !strings.Contains(logs.String(), "skipping unreadable record") || !strings.Contains(logs.String(), "eval-2000") {
		t.Fatalf("no warning naming the corrupt file; log:\n%s", logs.String())
	}
	if err := c.WriteSummary(); err != nil {
		t.Fatalf("summary with a corrupt file: %v", err)
	}
	if _, err := os.Stat(bad); err != nil {
		t.Fatalf("the corrupt file was removed; a read must never delete: %v", err)
	}
}

// TestUnreadableFolderIsAClearErrorAndLosesNothing makes a kind's folder
// unusable two ways: a file in its place (which stops root too) and no
// permissions.
func TestUnreadableFolderIsAClearErrorAndLosesNothing(t *testing.T) {
	for _, how := range []string{"file", "permissions"} {
		t.Run(how, func(t *testing.T) {
			if how == "permissions" && os.Geteuid() == 0 {
				testenv.Platform(t, false, "permissions do not apply to root; scripts/unprivileged-tests.sh runs this test as nobody")
			}
			dir := t.TempDir()
			c := open(t, dir, Options{})
			r, err := c.Save(Record{Kind: Stages, Goal: "g"})
			if err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(dir, "evaluations")
			if how == "file" {
				err = os.WriteFile(bad, []byte("x"), 0o644)
			} else if err = os.MkdirAll(bad, 0o755); err == nil {
				err = os.Chmod(bad, 0)
				defer os.Chmod(bad, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.List(ListOptions{})
			if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "--cache-dir") {
				t.Fatalf("List: %v; want an error naming the folder and what to do", err)
			}
			if _, err := c.Save(Record{Kind: Evaluations, Goal: "g2"}); err == nil {
				t.Fatal("Save into an unusable folder succeeded")
			}
			if _, err := c.Clear(""); err == nil {
				t.Fatal("Clear of an unusable folder succeeded")
			}
			got, err := c.List(ListOptions{Kind: Stages})
			if err != nil || len(got) != 1 || got[0].ID != r.ID {
				t.Fatalf("stages after the failures: %v, %v; the first record must still be there", ids(got), err)
			}
		})
	}
}

func TestOpenRefusesEmptyFolder(t *testing.T) {
	if _, err := Open("  ", Options{}); err == nil {
		t.Fatal("Open(\"\") succeeded")
	}
	if _, err := ParseKind("nope"); err == nil {
		t.Fatal("ParseKind accepted an unknown kind")
	}
	if k, err := ParseKind("eval"); err != nil || k != Evaluations {
		t.Fatalf("ParseKind(eval) = %v, %v", k, err)
	}
}

// checkComplete asserts that every record is readable and that the summary
// counts all of them.
func checkComplete(t *testing.T, c *Cache, want int) {
	t.Helper()
	got, err := c.List(ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r.ID] {
			t.Fatalf("duplicate id %s", r.ID)
		}
		seen[r.ID] = true
	}
	if len(got) != want {
		t.Fatalf("%d records readable; want %d", len(got), want)
	}
	md, err := os.ReadFile(filepath.Join(c.Dir(), SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), fmt.Sprintf("## Evaluations (%d)", want)) {
		t.Fatalf("summary does not count all %d records:\n%.300s", want, md)
	}
	left, _ := filepath.Glob(filepath.Join(c.Dir(), "*", ".tmp-*"))
	if len(left) > 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	c := open(t, t.TempDir(), Options{})
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := c.Save(Record{Kind: Evaluations, Goal: fmt.Sprintf("w%d", w), Query: strconv.Itoa(i)}); err != nil {
					errs <- err
				}
				if _, err := c.List(ListOptions{Limit: 5}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkComplete(t, c, workers*each)
}

// TestConcurrentProcesses runs several copies of this test binary writing to
// one folder at once.
func TestConcurrentProcesses(t *testing.T) {
	testenv.Short(t, "starts processes")
	dir := t.TempDir()
	const procs, each = 4, 20
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
		cmd.Env = append(os.Environ(), "AGENTCACHE_HELPER_DIR="+dir, "AGENTCACHE_HELPER_N="+strconv.Itoa(each))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("helper output: %s", out.String())
			}
		})
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer process: %v", err)
		}
	}
	checkComplete(t, open(t, dir, Options{}), procs*each)
}

// TestHelperWriter is the body of one writer process of TestConcurrentProcesses.
func TestHelperWriter(t *testing.T) {
	dir := testenv.HelperProcess(t, "AGENTCACHE_HELPER_DIR")
	n, _ := strconv.Atoi(os.Getenv("AGENTCACHE_HELPER_N"))
	c := open(t, dir, Options{})
	for i := 0; i < n; i++ {
		if _, err := c.Save(Record{Kind: Evaluations, Goal: fmt.Sprint("pid ", os.Getpid()), Query: strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
}
