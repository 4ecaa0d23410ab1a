package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/httpguard/httpguardtest"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// repoRoot is the repository's root, two folders up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestBrowser drives `sagasu serve` in Debian's chromium: ask offline and
// see the answer, its citations and trace; open a citation; search and
// evaluate; start a research run and watch it finish; no console errors.
// It prints the time to the first trace event and to the answer.
func TestBrowser(t *testing.T) {
	node, modules := browserTools(t)
	root := repoRoot(t)

	dir := t.TempDir()
	bin := filepath.Join(dir, "sagasu")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sagasu")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sagasu: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "index.db")
	// The shared data sits beside the repository (../shared/data), or
	// beside the folder of worktrees.
	docs := ""
	for _, up := range []string{"..", filepath.Join("..", "..")} {
		d := filepath.Join(root, up, "shared", "data", "vitepress-docs", "en")
		if _, err := os.Stat(d); err == nil {
			docs = d
			break
		}
	}
	question, query, goal := "How do I deploy to GitHub Pages?", "sidebar", "understand how to configure the sidebar"
	if docs == "" {
		docs = writeDocs(t, filepath.Join(dir, "docs"))
		question, query, goal = "How do I rotate the API keys?", "keys", "understand how to rotate the API keys"
	}
	env := append(os.Environ(), "SAGASU_LLM=", "SAGASU_CACHE_DIR="+filepath.Join(dir, "cache"))
	index := exec.Command(bin, "--db", db, "index", docs)
	index.Env = env
	if out, err := index.CombinedOutput(); err != nil {
		t.Fatalf("index %s: %v\n%s", docs, err, out)
	}

	// A document that tries to run script in the page: it must show as text.
	hostile := filepath.Join(dir, "hostile")
	if err := os.MkdirAll(hostile, 0o755); err != nil {
		t.Fatal(err)
	}
	attack := "# Zebraquux\n\nThe zebraquux marker <img src=x onerror=\"window.__pwned=1\"> is here <script>window.__pwned=1</script> and [a link](javascript:window.__pwned=1).\n"
	if err := os.WriteFile(filepath.Join(hostile, "zebraquux.md"), []byte(attack), 0o644); err != nil {
		t.Fatal(err)
	}
	index = exec.Command(bin, "--db", db, "index", hostile)
	index.Env = env
	if out, err := index.CombinedOutput(); err != nil {
		t.Fatalf("index %s: %v\n%s", hostile, err, out)
	}

	// A folder the Index tab adds while the page is open.
	extra := filepath.Join(dir, "extra")
	if err := os.MkdirAll(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "added.md"), []byte("# Added from the page\n\nThis page was added with the Index tab.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serve := exec.CommandContext(ctx, bin, "--db", db, "serve", "--listen", "127.0.0.1:0", "--root", extra)
	serve.Env = env
	pr, pw := io.Pipe()
	serve.Stdout, serve.Stderr = pw, pw
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = serve.Wait(); pw.Close() }()
	// The user clicks the link serve prints, token and all.
	base, serveLog := httpguardtest.Watch(t, pr, linkRE)

	out := os.Getenv("SAGASU_ARTIFACTS")
	if out == "" {
		out = t.TempDir()
	}
	run := exec.Command(node, filepath.Join("testdata", "browser.mjs"), base, out, question, query, goal, extra)
	run.Env = append(os.Environ(), "SAGASU_WEB_TEST_MODULES="+modules)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	runErr := run.Run()
	var rep struct {
		Errors          []string `json:"errors"`
		Failure         string   `json:"failure"`
		FirstTraceMs    int64    `json:"firstTraceMs"`
		AnswerMs        int64    `json:"answerMs"`
		TraceSteps      int      `json:"traceSteps"`
		Citations       int      `json:"citations"`
		SupportedClaims int      `json:"supportedClaims"`
		Answer          string   `json:"answer"`
		CitedPassage    int      `json:"citedPassage"`
		Results         int      `json:"results"`
		Highlights      int      `json:"highlights"`
		Run             string   `json:"run"`
		RunMs           int64    `json:"runMs"`
		PlanSteps       int      `json:"planSteps"`
		Injected        []string `json:"injected"`
		HostileAnswer   string   `json:"hostileAnswer"`
		Indexed         string   `json:"indexed"`
		URLAfterLink    string   `json:"urlAfterLink"`
		ScriptCookies   string   `json:"scriptCookies"`
		Cookies         int      `json:"cookies"`
		TokenKept       int      `json:"tokenKept"`
		Evaluation      []string `json:"evaluation"`
		EvaluationWarn  int      `json:"evaluationWarn"`
	}
	if err := json.Unmarshal(reportLine(stdout.String()), &rep); err != nil {
		t.Fatalf("the browser script printed no report (%v): %s\nstderr: %s\nserver: %s", runErr, stdout.String(), stderr.String(), serveLog)
	}
	t.Logf("screenshots in %s", out)
	fmt.Printf("web (offline): first trace event after %d ms, answer after %d ms in the browser; research run finished after %d ms\n", rep.FirstTraceMs, rep.AnswerMs, rep.RunMs)
	if rep.Failure != "" {
		t.Fatalf("a step failed: %s\nserver: %s", rep.Failure, serveLog)
	}
	if strings.Contains(rep.URLAfterLink, "token") || rep.ScriptCookies != "" || rep.Cookies != 0 || rep.TokenKept < 32 {
		t.Errorf("after the link the address is %q, the browser holds %d cookies (scripts see %q) and the page kept a %d-character token: want the token out of the address, no cookie, and the token kept", rep.URLAfterLink, rep.Cookies, rep.ScriptCookies, rep.TokenKept)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("the page logged console errors: %q", rep.Errors)
	}
	if rep.TraceSteps < 3 || rep.Citations == 0 || rep.SupportedClaims == 0 || rep.Answer == "" {
		t.Errorf("the answer came without its trace, citations or checked claims: %+v", rep)
	}
	if !strings.Contains(rep.Indexed, "1 added") {
		t.Errorf("adding a folder in the Index tab reported %q, want one source added", rep.Indexed)
	}
	if len(rep.Injected) > 0 || !strings.Contains(rep.HostileAnswer, "zebraquux") {
		t.Errorf("document text became markup in the page: %q (answer %q)", rep.Injected, rep.HostileAnswer)
	}
	if rep.CitedPassage == 0 {
		t.Errorf("opening a citation showed no passage")
	}
	// The evaluation card shows the scores and the next step, not an error
	// (it once read a field the reply no longer had).
	if rep.EvaluationWarn > 0 || len(rep.Evaluation) < 4 {
		t.Errorf("the evaluation card shows %q (%d errors): want scores, found, missing and the next step", rep.Evaluation, rep.EvaluationWarn)
	}
	if rep.Results == 0 || rep.Highlights == 0 {
		t.Errorf("the search showed %d results with %d highlighted words", rep.Results, rep.Highlights)
	}
	if !strings.Contains(rep.Run, "success") && !strings.Contains(rep.Run, "failure") || rep.PlanSteps == 0 {
		t.Errorf("the research run did not finish with a plan: %q, %d plan steps", rep.Run, rep.PlanSteps)
	}
	if os.Getenv("SAGASU_WRITE_SCREENSHOTS") == "1" {
		img := filepath.Join(root, "docs", "img")
		if err := os.MkdirAll(img, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"chat", "citation", "search", "runs", "cache", "index"} {
			b, err := os.ReadFile(filepath.Join(out, name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(img, "web-"+name+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

var linkRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/#token=[0-9a-f]+`)

// writeDocs writes a few documents for when the shared data is absent.
func writeDocs(t *testing.T, dir string) string {
	t.Helper()
	docs := map[string]string{
		"keys.md":    "# API keys\n\n## Rotate the keys\n\nTo rotate the API keys, run `acme keys rotate` and restart the server. The old keys stop working after one hour.\n",
		"deploy.md":  "# Deploy\n\nDeploy the site with `acme deploy`. The deploy command uploads the build folder to the configured bucket.\n",
		"sidebar.md": "# Sidebar\n\nThe sidebar lists the pages of a section. Configure the sidebar in config.yaml under `sidebar:`.\n",
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range docs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// browserTools returns node and the playwright-core modules folder, or
// skips (fails under CI=true) when they are missing.
func browserTools(t *testing.T) (node, modules string) {
	t.Helper()
	testenv.Short(t, "drives chromium through a whole session")
	modules = filepath.Join(repoRoot(t), ".tools", "web-test", "node_modules")
	_, err := os.Stat(filepath.Join(modules, "playwright-core"))
	testenv.Need(t, err == nil, "playwright-core is not installed: run bash scripts/web-test.sh")
	_, err = os.Stat("/usr/bin/chromium")
	testenv.Need(t, err == nil, "/usr/bin/chromium is missing: run bash scripts/playwright-mcp.sh")
	node, err = exec.LookPath("node")
	testenv.Need(t, err == nil, "node is not installed (apt-get install nodejs)")
	return node, modules
}

// serveIndexed builds sagasu, indexes folders (absolute paths) into a fresh index, serves it
// and returns the link it prints (with its token); the server stops when
// the test ends.
func serveIndexed(t *testing.T, folders ...string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "sagasu")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sagasu")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sagasu: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "index.db")
	env := append(os.Environ(), "SAGASU_LLM=", "SAGASU_CACHE_DIR="+filepath.Join(dir, "cache"))
	for _, f := range folders {
		// From the folder's parent, so sources are named as a reader
		// names them (en/guide/deploy.md), not by this machine's paths.
		index := exec.Command(bin, "--db", db, "index", filepath.Base(f))
		index.Dir = filepath.Dir(f)
		index.Env = env
		if out, err := index.CombinedOutput(); err != nil {
			t.Fatalf("index %s: %v\n%s", f, err, out)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	serve := exec.CommandContext(ctx, bin, "--db", db, "serve", "--listen", "127.0.0.1:0")
	serve.Env = env
	pr, pw := io.Pipe()
	serve.Stdout, serve.Stderr = pw, pw
	if err := serve.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = serve.Wait(); pw.Close() })
	// The link serve prints, token and all, as the user clicks it.
	base, _ := httpguardtest.Watch(t, pr, linkRE)
	return base
}

// TestBrowserLanguage: a browser that asks for Japanese gets the page in
// Japanese (lang attribute, labels, trace labels, dates), search snippets
// render as markdown with hostile markup inert, and a switch to English
// holds across a reload; a browser that asks for English gets English.
func TestBrowserLanguage(t *testing.T) {
	node, modules := browserTools(t)
	root := repoRoot(t)
	dir := t.TempDir()
	docs, question := "", "サイドバーを設定するには？"
	for _, up := range []string{"..", filepath.Join("..", "..")} {
		d := filepath.Join(root, up, "shared", "data", "vitepress-docs", "ja")
		if _, err := os.Stat(d); err == nil {
			docs = d
			break
		}
	}
	if docs == "" {
		docs = filepath.Join(dir, "ja")
		if err := os.MkdirAll(docs, 0o755); err != nil {
			t.Fatal(err)
		}
		page := "# サイドバー\n\nサイドバーはドキュメントの主要なナビゲーションです。設定ファイルの `themeConfig.sidebar` で項目を並べます。\n"
		if err := os.WriteFile(filepath.Join(docs, "sidebar.md"), []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A page whose snippet has a heading, a code fence and markup that
	// tries to run script.
	md := filepath.Join(dir, "md")
	if err := os.MkdirAll(md, 0o755); err != nil {
		t.Fatal(err)
	}
	snippet := "---\ntitle: Quxmarker page\n---\n\n## Quxmarker heading\n\nThe quxmarker setting <img src=x onerror=\"window.__pwned=1\"> and [a link](javascript:window.__pwned=1).\n\n```yaml\nquxmarker: true\n```\n"
	if err := os.WriteFile(filepath.Join(md, "quxmarker.md"), []byte(snippet), 0o644); err != nil {
		t.Fatal(err)
	}
	// A page whose best-matching lines are labels, not sentences.
	labels := "# Zorblat\n\n## Zorblat settings\n\nThe zorblat option turns the page widget on and off for each reader.\n\n" +
		"- Zorblat widget pattern: the address of the widget with `:path`\n- Zorblat widget text: the label shown below each page\n- Zorblat widget per locale and per page\n"
	if err := os.WriteFile(filepath.Join(md, "zorblat.md"), []byte(labels), 0o644); err != nil {
		t.Fatal(err)
	}
	base := serveIndexed(t, docs, md)

	out := os.Getenv("SAGASU_ARTIFACTS")
	if out == "" {
		out = t.TempDir()
	}
	run := exec.Command(node, filepath.Join("testdata", "language.mjs"), base, out, question, "quxmarker", "zorblat widget pattern text per page")
	run.Env = append(os.Environ(), "SAGASU_WEB_TEST_MODULES="+modules)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	runErr := run.Run()
	type words struct{ Lang, Send, Search, Placeholder, Select string }
	var rep struct {
		Errors                       []string
		Failure                      string
		AcceptLanguage               string
		Ja, Switched, Reloaded, En   words
		TraceKinds, TraceKindsEn     []string
		Meta, Answer                 string
		SnippetHeadings, SnippetCode int
		SnippetMarks                 int
		SnippetText, SearchInfo      string
		Injected                     []string
		DateJa, DateEn, StatsJa      string
		Quotes                       []string
		QuoteAnswer                  string
		QuoteSupported               int
	}
	if err := json.Unmarshal(reportLine(stdout.String()), &rep); err != nil {
		t.Fatalf("the browser script printed no report (%v): %s\nstderr: %s", runErr, stdout.String(), stderr.String())
	}
	t.Logf("screenshots in %s; report %+v", out, rep)
	if rep.Failure != "" {
		t.Fatalf("a step failed: %s", rep.Failure)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("the page logged console errors: %q", rep.Errors)
	}
	want := func(who string, got, w words) {
		if got != w {
			t.Errorf("%s: the page shows %+v, want %+v", who, got, w)
		}
	}
	ja := words{Lang: "ja", Send: "送信", Search: "検索", Placeholder: "インデックスに質問する", Select: "ja"}
	en := words{Lang: "en", Send: "Send", Search: "Search", Placeholder: "Ask the index a question", Select: "en"}
	want("a browser asking for "+rep.AcceptLanguage, rep.Ja, ja)
	want("after switching to English", rep.Switched, en)
	want("after a reload", rep.Reloaded, en)
	want("a browser asking for English", rep.En, en)
	for _, k := range []string{"思考", "ツール呼び出し", "観察", "振り返り"} {
		if !slices.Contains(rep.TraceKinds, k) {
			t.Errorf("the Japanese trace lacks the label %q: %q", k, rep.TraceKinds)
		}
	}
	if !slices.Contains(rep.TraceKindsEn, "tool call") || slices.Contains(rep.TraceKindsEn, "思考") {
		t.Errorf("after the switch the trace says %q, want English labels", rep.TraceKindsEn)
	}
	if !strings.Contains(rep.Meta, "ミリ秒") || !strings.Contains(rep.Meta, "オフライン") {
		t.Errorf("the answer's meta line %q is not in Japanese", rep.Meta)
	}
	if !hasKanaText(rep.Answer) {
		t.Errorf("the answer to a Japanese question is not Japanese: %q", rep.Answer)
	}
	// The front matter and the fence are two code blocks; no markdown
	// syntax is left as text.
	if rep.SnippetHeadings == 0 || rep.SnippetCode != 2 || strings.Contains(rep.SnippetText, "## ") || strings.Contains(rep.SnippetText, "```") || strings.Contains(rep.SnippetText, "---") {
		t.Errorf("the snippet was not rendered as markdown (%d headings, %d code blocks): %q", rep.SnippetHeadings, rep.SnippetCode, rep.SnippetText)
	}
	if len(rep.Injected) > 0 || !strings.Contains(rep.SnippetText, "<img") || strings.Contains(rep.SnippetText, "javascript:") || rep.SnippetMarks == 0 {
		t.Errorf("the hostile snippet was not shown as marked text: injected %q, text %q, %d marks", rep.Injected, rep.SnippetText, rep.SnippetMarks)
	}
	// Intl.DateTimeFormat: ja writes 2026/11/25 3:10, en Nov 25, 2026, 3:10 AM.
	if !regexp.MustCompile(`^\d{4}/\d{1,2}/\d{1,2} `).MatchString(rep.DateJa) || !regexp.MustCompile(`^[A-Z][a-z]{2} \d{1,2}, \d{4}`).MatchString(rep.DateEn) {
		t.Errorf("dates are not written the reader's way: ja %q, en %q", rep.DateJa, rep.DateEn)
	}
	if !strings.Contains(rep.StatsJa, "件") || !strings.Contains(rep.SearchInfo, "件") {
		t.Errorf("counts are not in Japanese: %q, %q", rep.StatsJa, rep.SearchInfo)
	}
	// The offline answer quotes the section that answers whole, under its
	// heading: the sentence, and the label lines as the list they are in
	// the page (not torn into fragments), with its claims checked.
	if !strings.Contains(rep.QuoteAnswer, "Zorblat › Zorblat settings") || !strings.Contains(rep.QuoteAnswer, "The zorblat option turns the page widget on and off") ||
		!strings.Contains(rep.QuoteAnswer, "Zorblat widget pattern: the address of the widget with :path") || rep.QuoteSupported == 0 {
		t.Errorf("the offline answer over label lines is not the section quoted under its heading: answer %q, %d supported", rep.QuoteAnswer, rep.QuoteSupported)
	}
	if os.Getenv("SAGASU_WRITE_SCREENSHOTS") == "1" {
		for name, to := range map[string]string{"chat-ja": "web-ja.png", "chat-en": "web-en.png", "search-ja": "web-search-ja.png", "quote-en": "web-quote.png"} {
			b, err := os.ReadFile(filepath.Join(out, name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "docs", "img", to), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// hasKanaText reports Japanese text (hiragana or katakana).
func hasKanaText(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r >= 0x3040 && r <= 0x30ff }) >= 0
}

// documentDocs writes the documents TestBrowserDocuments reads: a table
// whose cells hold escaped pipes (in English and Japanese) and a code
// sample long enough that a chunk starts inside it, under a heading with
// inline code.
func documentDocs(t *testing.T, dir string) string {
	t.Helper()
	levels := "# Logging\n\n## Log levels\n\nThe `level` option sets which messages the logger writes, and `format` how it writes them.\n\n" +
		"| Option | Values | Default |\n| ------ | ------ | ------- |\n| `level` | `debug \\| info \\| warn` | `info` |\n| `format` | `text \\| json` | `text` |\n\n" +
		"Restart the server after you change the level.\n"
	logsJa := "# ログ\n\n## ログレベル\n\n`level` オプションで、ロガーが書き出すメッセージの重要度を設定します。既定値は `info` です。\n\n" +
		"| オプション | 値 | 既定値 |\n| --- | --- | --- |\n| `level` | `debug \\| info \\| warn` | `info` |\n"
	var server strings.Builder
	server.WriteString("# Server\n\n## Start a server with `createServer`\n\nThe example below starts a server that counts its requests.\n\n```ts\n")
	for i := 1; i <= 120; i++ {
		if i == 119 {
			server.WriteString("export const wombatCounter = new Map<string, number>();\n")
		}
		fmt.Fprintf(&server, "export function handler%d(req: Request, count: number): Response {\n  const body = JSON.stringify({ route: '/r%d', count: count + %d });\n  return new Response(body, { status: 200 });\n}\n", i, i, i)
	}
	server.WriteString("```\n\nEach handler answers one route.\n")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"levels.md": levels, "logs-ja.md": logsJa, "server.md": server.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBrowserDocuments: the page shows documents as documents. A table
// whose cells hold `a \| b` stays a table, one cell per column, in a search
// snippet and in the citation panel; a chunk that starts inside a long code
// sample (its text begins with code and ends with the closing fence) shows
// as code, not prose; heading paths show inline code as code, with no
// backticks; a Japanese page shows the trace's own words (the search, the
// draft, the Reflection's verdicts) in Japanese. With the VitePress docs
// and SAGASU_WRITE_SCREENSHOTS=1 it writes the screenshots of docs/web.md.
func TestBrowserDocuments(t *testing.T) {
	node, modules := browserTools(t)
	root := repoRoot(t)
	folders := []string{documentDocs(t, filepath.Join(t.TempDir(), "md"))}
	vitepress := ""
	for _, up := range []string{"..", filepath.Join("..", "..")} {
		d := filepath.Join(root, up, "shared", "data", "vitepress-docs")
		if _, err := os.Stat(filepath.Join(d, "ja")); err == nil {
			vitepress = d
			folders = append(folders, filepath.Join(d, "en"), filepath.Join(d, "ja"))
			break
		}
	}
	base := serveIndexed(t, folders...)

	out := os.Getenv("SAGASU_ARTIFACTS")
	if out == "" {
		out = t.TempDir()
	}
	args := []string{filepath.Join("testdata", "documents.mjs"), base, out,
		"level option logger values", "wombatCounter", "Which values does the level option take?", "ログレベルはどのオプションで設定しますか？"}
	if vitepress != "" {
		args = append(args, "How do I deploy to GitHub Pages?", "GitHub Pages にデプロイするには？", "vitepress dev --open")
	}
	run := exec.Command(node, args...)
	run.Env = append(os.Environ(), "SAGASU_WEB_TEST_MODULES="+modules)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	runErr := run.Run()
	var rep struct {
		Errors                  []string
		Failure                 string
		SnippetTables           int
		SnippetTable, CiteTable [][]string
		SnippetText             string
		CodeBlocks              []string
		CodeText, CodeProse     []string
		Heading, CiteHeading    string
		TraceJa                 []string
	}
	if err := json.Unmarshal(reportLine(stdout.String()), &rep); err != nil {
		t.Fatalf("the browser script printed no report (%v): %s\nstderr: %s", runErr, stdout.String(), stderr.String())
	}
	t.Logf("screenshots in %s; report %+v", out, rep)
	if rep.Failure != "" {
		t.Fatalf("a step failed: %s", rep.Failure)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("the page logged console errors: %q", rep.Errors)
	}
	// The row of `level`: three cells, the pipes inside the second one.
	levelRow := func(rows [][]string) []string {
		for _, r := range rows {
			if len(r) > 0 && r[0] == "level" {
				return r
			}
		}
		return nil
	}
	want := []string{"level", "debug | info | warn", "info"}
	if r := levelRow(rep.SnippetTable); rep.SnippetTables != 1 || !slices.Equal(r, want) || strings.Contains(rep.SnippetText, `\|`) {
		t.Errorf("the snippet's table: %d tables, rows %q (text %q); want one table whose level row is %q", rep.SnippetTables, rep.SnippetTable, rep.SnippetText, want)
	}
	if r := levelRow(rep.CiteTable); !slices.Equal(r, want) {
		t.Errorf("the citation panel's table: rows %q; want a level row %q", rep.CiteTable, want)
	}
	code := strings.Join(rep.CodeText, "\n")
	if len(rep.CodeBlocks) == 0 || rep.CodeBlocks[0] != "pre" || !strings.Contains(code, "wombatCounter") || !strings.Contains(code, "return new Response(body") {
		t.Errorf("the chunk that starts inside the code sample: blocks %q, code %q; want it to start with a code block holding wombatCounter", rep.CodeBlocks, code)
	}
	for _, p := range rep.CodeProse {
		if strings.Contains(p, "Response") || strings.Contains(p, "wombatCounter") || strings.Contains(p, "```") {
			t.Errorf("code shows as prose: %q", p)
		}
	}
	for _, h := range []string{rep.Heading, rep.CiteHeading} {
		if strings.Contains(h, "`") || !strings.Contains(h, "createServer") && !strings.Contains(h, "Log levels") {
			t.Errorf("a heading path shows %q: want it without backticks", h)
		}
	}
	// The chunker keeps a heading's code text and drops its marks
	// (chunk.TestHeadingPathsWithoutMarkup), so the page has no backticks to
	// render and shows the words.
	// Each step sagasu narrates starts with its words in Japanese: the
	// search, the draft, the Reflection's verdicts.
	trace := strings.Join(rep.TraceJa, "\n")
	for _, ja := range []string{"質問の語でナレッジベースを検索します。", "下書き: ", "正確さ ", "、関連性 ", "、文体 "} {
		if !strings.Contains(trace, ja) {
			t.Errorf("the Japanese trace lacks %q:\n%s", ja, trace)
		}
	}
	english := regexp.MustCompile(`^(Search the knowledge base|No sentence of the results|Draft: |accuracy (ok|needs work) )|; relevance |sentences backed by`)
	for _, step := range rep.TraceJa {
		if english.MatchString(step) {
			t.Errorf("a step of the Japanese trace is in English: %q", step)
		}
	}
	if vitepress != "" && os.Getenv("SAGASU_WRITE_SCREENSHOTS") == "1" {
		for _, name := range []string{"documents-en", "documents-ja", "documents-search-en", "documents-search-ja"} {
			b, err := os.ReadFile(filepath.Join(out, name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "docs", "img", "web-"+name+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
