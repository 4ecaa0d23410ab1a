package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// sagasu runs one command line in-process and returns its exit code and output.
func sagasu(t *testing.T, dir string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, []string{"HOME=" + dir})
	return code, out.String(), errb.String()
}

func mustRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	code, out, errs := sagasu(t, dir, "", args...)
	if code != 0 {
		t.Fatalf("sagasu %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const guide = `# Guide

Intro to the guide.

## Routing

Routes map URLs to pages.

### Dynamic Routes

Use [param] in file names to make dynamic routes.

## Deploying

Build the site and upload the dist folder.
`

const jaGuide = `# 設定

VitePressの設定ファイルを作成します。

## テーマ

テーマの設定はthemeConfigで行います。
`

func docsFixture(t *testing.T) string {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "docs", "guide.md"), guide)
	write(t, filepath.Join(dir, "docs", "ja", "config.md"), jaGuide)
	write(t, filepath.Join(dir, "docs", "notes.txt"), "Plain notes about deploying on Fridays.\n\nSecond paragraph.")
	write(t, filepath.Join(dir, "docs", ".git", "HEAD"), "ref: refs/heads/main")
	write(t, filepath.Join(dir, "docs", "node_modules", "x", "index.md"), "# should be skipped")
	return dir
}

type queryJSON struct {
	Query   string `json:"query"`
	Results []struct {
		ChunkID int64   `json:"chunkId"`
		Score   float64 `json:"relevance"`
		Heading string  `json:"heading"`
		Lines   []int   `json:"lines"`
		Text    string  `json:"text"`
		Source  struct {
			ID    string `json:"id"`
			URI   string `json:"uri"`
			Title string `json:"title"`
			Type  string `json:"type"`
		} `json:"source"`
	} `json:"results"`
}

func query(t *testing.T, dir string, args ...string) queryJSON {
	t.Helper()
	out := mustRun(t, dir, append([]string{"query", "--json"}, args...)...)
	var q queryJSON
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("query --json printed invalid JSON: %v\n%s", err, out)
	}
	return q
}

func TestIndexQueryGetListInfoDelete(t *testing.T) {
	dir := docsFixture(t)
	out := mustRun(t, dir, "index", "docs")
	if !strings.Contains(out, "3 added") {
		t.Errorf("index output = %q, want 3 sources added (.git and node_modules skipped)", out)
	}

	q := query(t, dir, "-k", "2", "dynamic routes")
	if q.Query != "dynamic routes" || len(q.Results) == 0 {
		t.Fatalf("query = %+v", q)
	}
	top := q.Results[0]
	if top.Source.URI != "docs/guide.md" || top.Heading != "Guide > Routing > Dynamic Routes" || top.Source.Type != "file" ||
		top.Source.Title != "Guide" || top.Score <= 0 || top.ChunkID == 0 || len(top.Lines) != 2 || !strings.Contains(top.Text, "[param]") {
		t.Errorf("top result = %+v, want the Dynamic Routes chunk of docs/guide.md", top)
	}
	if lines := strings.Split(guide, "\n"); !strings.HasPrefix(lines[top.Lines[0]-1], "### Dynamic Routes") {
		t.Errorf("line span %v does not start at the section heading (line is %q)", top.Lines, lines[top.Lines[0]-1])
	}
	if len(q.Results) > 2 {
		t.Errorf("-k 2 returned %d results", len(q.Results))
	}

	ja := query(t, dir, "設定ファイル")
	if len(ja.Results) == 0 || ja.Results[0].Source.URI != "docs/ja/config.md" {
		t.Errorf("Japanese query found %+v, want docs/ja/config.md", ja.Results)
	}

	glob := query(t, dir, "--glob", "docs/*.txt", "deploying")
	if len(glob.Results) != 1 || glob.Results[0].Source.URI != "docs/notes.txt" {
		t.Errorf("--glob docs/*.txt: %+v", glob.Results)
	}

	if got := mustRun(t, dir, "get", "docs/guide.md"); got != guide {
		t.Errorf("get returned %q, want the original file", got)
	}
	sec := mustRun(t, dir, "get", "guide.md", "--section", "routing")
	if !strings.HasPrefix(sec, "## Routing") || !strings.Contains(sec, "### Dynamic Routes") || strings.Contains(sec, "Deploying") {
		t.Errorf("get --section routing = %q, want the Routing section with its subsection only", sec)
	}
	code, _, errs := sagasu(t, dir, "", "get", "guide.md", "--section", "Nope")
	if code != 1 || !strings.Contains(errs, "Guide > Routing") {
		t.Errorf("get --section Nope: exit %d, %q; want exit 1 listing sections", code, errs)
	}

	var list struct {
		Sources []struct{ URI string } `json:"sources"`
	}
	json.Unmarshal([]byte(mustRun(t, dir, "list", "--json")), &list)
	if len(list.Sources) != 3 {
		t.Errorf("list: %+v", list)
	}
	var info map[string]any
	json.Unmarshal([]byte(mustRun(t, dir, "info", "--json")), &info)
	if info["sources"] != 3.0 || info["chunks"].(float64) < 5 {
		t.Errorf("info: %v", info)
	}

	mustRun(t, dir, "delete", "docs/notes.txt")
	if q := query(t, dir, "Fridays"); len(q.Results) != 0 {
		t.Errorf("deleted source still found: %+v", q.Results)
	}
}

func TestReindexIsIdempotentAndIncremental(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	snap := func() string {
		return mustRun(t, dir, "list", "--json") + mustRun(t, dir, "query", "--json", "-k", "50", "routes guide 設定 notes") + infoCounts(t, dir)
	}
	first := stripTimes(snap())
	out := mustRun(t, dir, "index", "docs")
	if !strings.Contains(out, "3 unchanged") {
		t.Errorf("second index: %q, want 3 unchanged", out)
	}
	mustRun(t, dir, "index", "docs", "docs/guide.md", "./docs")
	if second := stripTimes(snap()); second != first {
		t.Errorf("re-indexing changed the index:\n%s\n---\n%s", first, second)
	}

	write(t, filepath.Join(dir, "docs", "guide.md"), guide+"\n## Caching\n\nCache headers for assets.\n")
	out = mustRun(t, dir, "index", "docs")
	if !strings.Contains(out, "1 updated") || !strings.Contains(out, "2 unchanged") {
		t.Errorf("after edit: %q", out)
	}
	if q := query(t, dir, "cache headers"); len(q.Results) == 0 || !strings.Contains(q.Results[0].Text, "Cache headers") || !strings.HasPrefix(q.Results[0].Heading, "Guide") {
		t.Errorf("edited content not found: %+v", q.Results)
	}

	os.Remove(filepath.Join(dir, "docs", "notes.txt"))
	out = mustRun(t, dir, "index", "--prune", "docs")
	if !strings.Contains(out, "1 removed") {
		t.Errorf("prune: %q", out)
	}
	if q := query(t, dir, "Fridays"); len(q.Results) != 0 {
		t.Errorf("pruned source still found")
	}
}

func infoCounts(t *testing.T, dir string) string {
	var info map[string]any
	json.Unmarshal([]byte(mustRun(t, dir, "info", "--json")), &info)
	return fmt.Sprint(info["sources"], info["chunks"], info["terms"])
}

func stripTimes(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, "tookMs") && !strings.Contains(l, "indexedAt") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestTextAndStdin(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "index", "--text", "The standup moved to Thursday mornings.", "--title", "standup")
	code, out, errs := sagasu(t, dir, "Quarterly planning happens in the big room.", "index", "-")
	if code != 0 {
		t.Fatalf("index -: %d %s %s", code, out, errs)
	}
	q := query(t, dir, "thursday standup")
	if len(q.Results) == 0 || q.Results[0].Source.Type != "text" || q.Results[0].Source.Title != "standup" {
		t.Errorf("text source: %+v", q.Results)
	}
	if q := query(t, dir, "planning room"); len(q.Results) == 0 {
		t.Errorf("stdin source not found")
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "ok.md"), "# Fine\n\nfine words")

	code, _, errs := sagasu(t, dir, "", "index", "no/such/path")
	if code != 1 || !strings.Contains(errs, "no/such/path") {
		t.Errorf("nonexistent path: exit %d, %q; want 1 and the path named", code, errs)
	}

	code, _, errs = sagasu(t, dir, "", "query", "anything")
	if code != 1 || !strings.Contains(errs, "sagasu index") {
		t.Errorf("query without an index: exit %d, %q; want a hint to run sagasu index", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sagasu", "sagasu.db")); err == nil {
		t.Errorf("query created an index file")
	}

	// Invalid UTF-8 is repaired with a warning; empty files are fine.
	write(t, filepath.Join(dir, "bad.txt"), "valid start \xff\xfe broken bytes and searchable words")
	write(t, filepath.Join(dir, "empty.md"), "")
	code, out, errs := sagasu(t, dir, "", "index", ".")
	if code != 0 {
		t.Fatalf("index with invalid UTF-8 and empty files: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "bad.txt") {
		t.Errorf("no warning names the file with invalid UTF-8: %q", errs)
	}
	if q := query(t, dir, "searchable"); len(q.Results) != 1 {
		t.Errorf("repaired file not searchable: %+v", q.Results)
	}

	// A link whose target is gone (a build output not built yet) is no
	// fault to fix: counted with the links not followed, exit 0, and
	// --verbose names its target.
	links := filepath.Join(dir, "links")
	write(t, filepath.Join(links, "real.md"), "# Real\n\nlinked words")
	if err := os.Symlink("dist/api.md", filepath.Join(links, "api.md")); err == nil {
		code, out, errs = sagasu(t, dir, "", "index", "--verbose", "links")
		if code != 0 || !strings.Contains(out, "1 symbolic link(s) not followed") || !strings.Contains(out, `its target "dist/api.md" does not exist`) {
			t.Errorf("a broken link: exit %d\n%s\n%s\nwant exit 0, the link counted and its target named", code, out, errs)
		}
	}

	// Unreadable files: reported, the rest indexed, non-zero exit.
	if os.Geteuid() != 0 {
		secret := filepath.Join(dir, "sub", "secret.md")
		write(t, secret, "# secret")
		os.Chmod(secret, 0)
		code, out, errs = sagasu(t, dir, "", "index", "sub", "ok.md")
		if code != 1 || !strings.Contains(out+errs, "secret.md") {
			t.Errorf("unreadable file: exit %d, %q %q", code, out, errs)
		}
	}

	// Usage errors exit 2.
	if code, _, _ := sagasu(t, dir, "", "query", "-k", "0", "x"); code != 2 {
		t.Errorf("-k 0: exit %d, want 2", code)
	}
	if code, _, _ := sagasu(t, dir, "", "index", "--no-such-flag"); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
	if code, _, _ := sagasu(t, dir, "", "index"); code != 2 {
		t.Errorf("index without arguments: exit %d, want 2", code)
	}
}

func TestCorruptAndForeignDB(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.md"), "# A\n\nalpha")
	foreign := filepath.Join(dir, "photo.jpg")
	write(t, foreign, "\xff\xd8\xff\xe0 not a database")
	code, _, errs := sagasu(t, dir, "", "--db", foreign, "index", "a.md")
	if code != 1 || !strings.Contains(errs, "not a SQLite database") {
		t.Errorf("foreign --db: exit %d, %q", code, errs)
	}
	if b, _ := os.ReadFile(foreign); string(b) != "\xff\xd8\xff\xe0 not a database" {
		t.Errorf("foreign file was modified")
	}

	other := filepath.Join(dir, "other.db")
	db, _ := sql.Open("sqlite", other)
	db.Exec(`CREATE TABLE t(x); INSERT INTO t VALUES(1)`)
	db.Close()
	code, _, errs = sagasu(t, dir, "", "--db", other, "query", "alpha")
	if code != 1 || !strings.Contains(errs, "another program") {
		t.Errorf("another program's database: exit %d, %q", code, errs)
	}

	good := filepath.Join(dir, "good.db")
	mustRun(t, dir, "--db", good, "index", "a.md")
	b, _ := os.ReadFile(good)
	for i := 4096; i < len(b); i++ { // keep the header, wreck the pages
		b[i] ^= 0x5a
	}
	corrupt := filepath.Join(dir, "corrupt.db")
	os.WriteFile(corrupt, b, 0o644)
	code, _, errs = sagasu(t, dir, "", "--db", corrupt, "query", "alpha")
	if code != 1 || errs == "" {
		t.Errorf("corrupt database: exit %d, %q", code, errs)
	}
}

func TestSecondWriterIsRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.md"), "# A\n\nalpha")
	mustRun(t, dir, "index", "a.md")
	st, err := app.OpenStore(context.Background(), filepath.Join(dir, ".sagasu", "sagasu.db"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	unlock, err := st.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	write(t, filepath.Join(dir, "b.md"), "# B\n\nbeta")
	code, _, errs := sagasu(t, dir, "", "index", "b.md")
	if code != 1 || !strings.Contains(errs, "another `sagasu index`") {
		t.Errorf("second writer: exit %d, %q; want a clear refusal", code, errs)
	}
	// Readers are not blocked by the writer lock.
	if q := query(t, dir, "alpha"); len(q.Results) != 1 {
		t.Errorf("query while locked: %+v", q.Results)
	}
}

func TestConfigFileEnvAndFlags(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "sagasu.yaml"), "db: fromfile.db\nsearch:\n  k: 1\n")
	for _, n := range []string{"one", "two", "three"} {
		write(t, filepath.Join(dir, n+".md"), "# "+n+"\n\nalpha "+n)
	}
	mustRun(t, dir, "index", "one.md", "two.md", "three.md")
	if _, err := os.Stat(filepath.Join(dir, "fromfile.db")); err != nil {
		t.Errorf("db from sagasu.yaml not used: %v", err)
	}
	if q := query(t, dir, "alpha"); len(q.Results) != 1 {
		t.Errorf("k from sagasu.yaml not used: %d results", len(q.Results))
	}
	if q := query(t, dir, "-k", "3", "alpha"); len(q.Results) != 3 {
		t.Errorf("flag -k 3 did not win over the file: %d results", len(q.Results))
	}
	var out bytes.Buffer
	wd, _ := os.Getwd()
	os.Chdir(dir)
	code := run(context.Background(), []string{"query", "--json", "alpha"}, strings.NewReader(""), &out, &bytes.Buffer{}, []string{"SAGASU_SEARCH_K=2"})
	os.Chdir(wd)
	var q queryJSON
	json.Unmarshal(out.Bytes(), &q)
	if code != 0 || len(q.Results) != 2 {
		t.Errorf("SAGASU_SEARCH_K=2: exit %d, %d results", code, len(q.Results))
	}
	write(t, filepath.Join(dir, "sagasu.yaml"), "chunk:\n  size: 3\n")
	if code, _, errs := sagasu(t, dir, "", "index", "one.md"); code != 2 || !strings.Contains(errs, "chunk size") {
		t.Errorf("bad config: exit %d, %q", code, errs)
	}
}

// buildBinary compiles sagasu once for the tests that need a real process.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sagasu")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestInterruptKeepsCommittedWork(t *testing.T) {
	testenv.Short(t, "builds the binary and indexes a large folder")
	testenv.Platform(t, runtime.GOOS != "windows", "no SIGINT on windows")
	bin := buildBinary(t)
	dir := t.TempDir()
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau")
	const files = 3000
	for i := 0; i < files; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# File %d\n\n", i)
		for j := 0; j < 2000; j++ { // 3000 files of ~12 KB: several 8 MB batches
			b.WriteString(words[(i*7+j*3)%len(words)])
			b.WriteString(" ")
		}
		write(t, filepath.Join(dir, "corpus", fmt.Sprintf("%05d.md", i)), b.String())
	}
	db := filepath.Join(dir, "idx.db")
	// The corpus is followed by stdin, which the test holds open: once the
	// corpus's full batches are committed the run blocks on stdin, so the
	// interrupt always arrives mid-run, whatever the machine's speed.
	cmd := exec.Command(bin, "--db", db, "index", "corpus", "-")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the committed batches; the deadline only guards against a
	// hang and fails the test, it never decides what is checked.
	deadline := time.Now().Add(5 * time.Minute)
	committed := 0
	for committed == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no batch was committed in 5 minutes; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
		committed = countSources(db)
	}
	cmd.Process.Signal(syscall.SIGINT)
	stdin.Close() // let the blocked read of stdin return, so the run sees the interrupt
	err = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("after Ctrl-C: exit %d (%v), stderr %q; want %d and a message", code, err, stderr.String(), exitInterrupted)
	}
	kept := countSources(db)
	if kept == 0 || kept >= files {
		t.Errorf("after Ctrl-C the index holds %d sources; want the committed batches (some, not all)", kept)
	}
	// Running again finishes the job with no duplicates.
	rerun := exec.Command(bin, "--db", db, "index", "corpus")
	rerun.Dir = dir
	out, err := rerun.CombinedOutput()
	if err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("%d unchanged", kept)) {
		t.Errorf("re-run did not skip the %d committed sources: %s", kept, out)
	}
	if n := countSources(db); n != files {
		t.Errorf("after re-run %d sources, want %d", n, files)
	}
	clean := exec.Command(bin, "--db", filepath.Join(dir, "clean.db"), "index", "corpus")
	clean.Dir = dir
	if out, err := clean.CombinedOutput(); err != nil {
		t.Fatalf("clean run: %v\n%s", err, out)
	}
	if n, want := countChunks(db), countChunks(filepath.Join(dir, "clean.db")); n != want || n == 0 {
		t.Errorf("interrupted + re-run index has %d chunks, an uninterrupted run %d (duplicates or losses)", n, want)
	}
}

func countSources(db string) int { return count(db, "SELECT COUNT(*) FROM sources") }
func countChunks(db string) int  { return count(db, "SELECT COUNT(*) FROM chunks") }

func count(db, q string) int {
	if _, err := os.Stat(db); err != nil {
		return 0
	}
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return 0
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(q).Scan(&n); err != nil {
		return 0
	}
	return n
}

func TestDemoRunsFromTheRepository(t *testing.T) {
	testenv.Short(t, "builds the binary")
	bin := buildBinary(t)
	root, _ := filepath.Abs("../..")
	db := filepath.Join(t.TempDir(), "demo.db")
	args := []string{"--db", db, "index", "README.md", "docs/**/*.md"}
	cmd := exec.Command(bin, args...)
	// Without network: run in a fresh network namespace when the kernel lets us.
	if _, err := exec.LookPath("unshare"); err == nil && exec.Command("unshare", "-rn", "true").Run() == nil {
		cmd = exec.Command("unshare", append([]string{"-rn", bin}, args...)...)
	}
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demo index: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--db", db, "query", "--json", "-k", "3", "how do I search Japanese text").Output()
	if err != nil {
		t.Fatal(err)
	}
	var q queryJSON
	if err := json.Unmarshal(out, &q); err != nil || len(q.Results) == 0 {
		t.Fatalf("demo query: %v %s", err, out)
	}
	if !strings.HasPrefix(q.Results[0].Source.URI, "docs/") && q.Results[0].Source.URI != "README.md" {
		t.Errorf("demo answered from %q", q.Results[0].Source.URI)
	}
}

func TestJapaneseQueriesFindJapanesePages(t *testing.T) {
	docs := testenv.Shared(t, "vitepress-docs")
	work := t.TempDir()
	db := filepath.Join(work, "vp.db")
	code, out, errs := sagasu(t, docs, "", "--db", db, "index", "en", "ja")
	if code != 0 {
		t.Fatalf("index vitepress docs: %d %s %s", code, out, errs)
	}
	for q, want := range map[string]string{
		"ルーティング":         "ja/guide/routing.md",
		"サイドバーの設定":       "ja/reference/default-theme-sidebar.md",
		"多言語サイト":         "ja/guide/i18n.md",
		"デプロイ":           "ja/guide/deploy.md",
		"dynamic routes": "en/guide/routing.md",
	} {
		res := query(t, docs, "--db", db, "-k", "3", q)
		if len(res.Results) == 0 || res.Results[0].Source.URI != want {
			var got []string
			for _, r := range res.Results {
				got = append(got, r.Source.URI)
			}
			t.Errorf("%q found %v, want %s first", q, got, want)
		}
	}
}
