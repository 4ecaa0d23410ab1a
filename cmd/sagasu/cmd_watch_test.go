package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a buffer two goroutines may use.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitUntil polls cond; the test's timeout bounds it.
func waitUntil(cond func() bool) {
	for !cond() {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIndexWatch: `sagasu index --watch DIR` indexes the folder, then
// writes each change until interrupted, and says what it wrote.
func TestIndexWatch(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	write(t, filepath.Join(docs, "a.md"), "# A\n\nalpha\n")
	write(t, filepath.Join(docs, ".gitignore"), "build/\n")
	write(t, filepath.Join(docs, "build", "out.md"), "# Out\n\ngenerated\n")
	db := filepath.Join(dir, "idx.db")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--db", db, "index", "--watch", docs}, strings.NewReader(""), &out, &errs, []string{"HOME=" + dir})
	}()
	waitUntil(func() bool { return strings.Contains(errs.String(), "watching") })
	if !strings.Contains(out.String(), "1 left out by ignore files") {
		t.Errorf("the first run does not count the ignored folder: %s", out.String())
	}
	write(t, filepath.Join(docs, "b.md"), "# B\n\nbeta\n")
	waitUntil(func() bool { return countSources(db) == 2 })
	write(t, filepath.Join(docs, "build", "more.md"), "# More\n\ngenerated too\n")
	write(t, filepath.Join(docs, "c.md"), "# C\n\ngamma\n")
	waitUntil(func() bool { return countSources(db) == 3 })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d after the interrupt: %s", code, errs.String())
	}
	if !strings.Contains(out.String(), "synced "+docs+" (events): 1 added") {
		t.Errorf("no line for the syncs: %s", out.String())
	}
}

// TestMCPWatch: `sagasu mcp --watch` indexes its root and keeps it in
// step; sagasu_list says so.
func TestMCPWatch(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "notes")
	write(t, filepath.Join(root, "a.md"), "# A\n\nalpha\n")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errs lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--db", filepath.Join(dir, "x.db"), "mcp", "--watch", "--root", root}, inR, outW, &errs, []string{"HOME=" + dir})
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	id := 0
	call := func(method, params string) string {
		t.Helper()
		id++
		if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("stdout ended: %v; stderr: %s", lines.Err(), errs.String())
		}
		return lines.Text()
	}
	call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	type listed struct {
		Result struct {
			Structured struct {
				Sources []struct{ URI string } `json:"sources"`
				Roots   []struct {
					Root     string `json:"root"`
					Watching bool   `json:"watching"`
					SyncedAt string `json:"syncedAt"`
				} `json:"roots"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	list := func() listed {
		var l listed
		if err := json.Unmarshal([]byte(call("tools/call", `{"name":"sagasu_list","arguments":{}}`)), &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	waitUntil(func() bool { return len(list().Result.Structured.Sources) == 1 })
	write(t, filepath.Join(root, "b.md"), "# B\n\nbeta\n")
	var l listed
	waitUntil(func() bool { l = list(); return len(l.Result.Structured.Sources) == 2 })
	if r := l.Result.Structured.Roots; len(r) != 1 || !r[0].Watching || r[0].SyncedAt == "" || !strings.HasSuffix(r[0].Root, "notes") {
		t.Errorf("sagasu_list roots = %+v, want the root watched and in step", r)
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
}

// TestServeWatch: `sagasu serve --watch` indexes its root and keeps it in
// step while the page is served; /api/sources (the Index tab) says when the
// root was last in step.
func TestServeWatch(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "notes")
	write(t, filepath.Join(root, "a.md"), "# A\n\nalpha\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errs lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--db", filepath.Join(dir, "x.db"), "serve", "--listen", "127.0.0.1:0", "--no-token", "--watch", "--root", root},
			strings.NewReader(""), &out, &errs, []string{"HOME=" + dir, "SAGASU_LLM="})
	}()
	link := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	var base string
	waitUntil(func() bool {
		select {
		case code := <-done:
			t.Fatalf("serve ended with exit %d: %s", code, errs.String())
		default:
		}
		base = link.FindString(out.String()) // serve prints its link on stdout
		return base != ""
	})
	type listed struct {
		Sources []struct{ URI string } `json:"sources"`
		Roots   []struct {
			Root     string `json:"root"`
			Watching bool   `json:"watching"`
			SyncedAt string `json:"syncedAt"`
		} `json:"roots"`
	}
	list := func() listed {
		t.Helper()
		code, body := do(t, http.DefaultClient, "GET", base+"api/sources", "", nil)
		var l listed
		if code != http.StatusOK {
			t.Fatalf("GET /api/sources: HTTP %d %s", code, body)
		}
		if err := json.Unmarshal([]byte(body), &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	waitUntil(func() bool { return len(list().Sources) == 1 })
	write(t, filepath.Join(root, "b.md"), "# B\n\nbeta\n")
	var l listed
	waitUntil(func() bool { l = list(); return len(l.Sources) == 2 })
	if r := l.Roots; len(r) != 1 || !r[0].Watching || r[0].SyncedAt == "" || !strings.HasSuffix(r[0].Root, "notes") {
		t.Errorf("/api/sources roots = %+v, want the root watched and in step", r)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d after the interrupt: %s", code, errs.String())
	}
}
