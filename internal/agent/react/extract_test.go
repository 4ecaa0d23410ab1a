package react

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
)

func refHit(id int64, uri, heading, text string) doc.Hit {
	return doc.Hit{Chunk: doc.Chunk{ID: id, Heading: strings.Split(heading, " > "), Text: text, StartLine: int(id) * 100, EndLine: int(id)*100 + 20},
		Source: doc.Source{ID: uri, URI: uri, Title: strings.Split(heading, " > ")[0]}}
}

// routing is a section that answers "how do I read a path parameter" with
// code only; the sections retrieved before it share more of the
// question's words but are about something else.
var (
	routing = refHit(3, "api/routing.md", "Routing > Path Parameter",
		"## Path Parameter\n\n```ts twoslash\nimport { Hono } from 'hono'\n// ---cut---\napp.get('/user/:name', async (c) => {\n  const name = c.req.param('name')\n  //       ^?\n})\n```\n\nor all parameters at once:\n\n```ts\napp.get('/posts/:id/comment/:comment_id', async (c) => {\n  const { id, comment_id } = c.req.param()\n})\n```\n")
	routeHelper = refHit(1, "helpers/route.md", "Route Helper > routePath() > Using with index parameter",
		"### Using with index parameter\n\nYou can optionally pass an index parameter to get the route path at a specific position, similar to `Array.prototype.at()`.\n")
	rpc = refHit(2, "guides/rpc.md", "RPC > Path parameters > Include slashes",
		"### Include slashes\n\n`hc` function does not URL-encode the values of `param`. To include slashes in parameters, use regular expressions.\n")
)

// TestAnswerQuotesTheSectionThatAnswers: the section whose heading names
// what the question asks about is quoted, code and all, not sentences of
// sections that merely share its words; the code keeps its closing lines
// and loses only the documentation tooling's markers.
func TestAnswerQuotesTheSectionThatAnswers(t *testing.T) {
	an := analyze.New(analyze.Options{})
	var ps Passages
	got := Extract(an, "how do I read a path parameter like /user/:id", []doc.Hit{routeHelper, rpc, routing}, &ps, ExtractOptions{})
	n, _ := ps.Number(routing.Chunk.ID)
	if !strings.HasPrefix(got, fmt.Sprintf("**Routing › Path Parameter** [%d]", n)) {
		t.Fatalf("answer does not lead with the Path Parameter section:\n%s", got)
	}
	for _, want := range []string{"const name = c.req.param('name')\n})\n```", "or all parameters at once:", "const { id, comment_id } = c.req.param()"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q:\n%s", want, got)
		}
	}
	for _, noise := range []string{"---cut---", "^?", "twoslash", "routePath", "hc"} {
		if strings.Contains(got, noise) {
			t.Errorf("answer has %q:\n%s", noise, got)
		}
	}
	// Every sentence and block of it is backed: the checker drops nothing.
	for _, c := range (Checker{An: an}).Check(got, &ps) {
		if c.Checked && !c.Supported {
			t.Errorf("claim %q not supported: %s", c.Text, c.Reason)
		}
	}
}

// TestLongCodeIsCutWithANote: a code block longer than maxCodeLines is cut
// with a note that says how much is left out and cites the passage that
// holds it all; a shorter one is whole. Neither is dropped by the checker,
// and the note is not a claim.
func TestLongCodeIsCutWithANote(t *testing.T) {
	an := analyze.New(analyze.Options{})
	var lines []string
	for i := range 55 {
		lines = append(lines, fmt.Sprintf("  stream.write('line %d')", i))
	}
	long := refHit(1, "helpers/streaming.md", "Streaming Helper > stream()",
		"## stream()\n\nIt returns a streaming response; write to the stream in the callback:\n\n```ts\napp.get('/stream', (c) => {\n  return stream(c, async (stream) => {\n"+strings.Join(lines, "\n")+"\n  })\n})\n```\n")
	var ps Passages
	got := Extract(an, "How do I write a streaming response?", []doc.Hit{long}, &ps, ExtractOptions{})
	if !strings.Contains(got, "stream.write('line 37')") || strings.Contains(got, "stream.write('line 38')") {
		t.Errorf("the block is not cut after %d lines:\n%s", maxCodeLines, got)
	}
	if !strings.Contains(got, "*(cut: 19 more lines in [1])*") {
		t.Errorf("no note says what was cut and where the rest is:\n%s", got)
	}
	for _, c := range (Checker{An: an}).Check(got, &ps) {
		if c.Checked && !c.Supported {
			t.Errorf("claim %q not supported: %s", c.Text, c.Reason)
		}
		if strings.Contains(c.Text, "more lines") && c.Checked {
			t.Errorf("the cut note is judged as a claim: %+v", c)
		}
	}
	short := refHit(2, "helpers/streaming.md", "Streaming Helper > streamSSE()",
		"## streamSSE()\n\nIt allows you to stream Server-Sent Events (SSE) seamlessly.\n\n```ts\n"+strings.Repeat("  await stream.sleep(1)\n", 20)+"})\n```\n")
	ps = Passages{}
	got = Extract(an, "How do I stream server-sent events?", []doc.Hit{short}, &ps, ExtractOptions{})
	if !strings.Contains(got, "})\n```") || strings.Contains(got, "cut:") {
		t.Errorf("a 21-line block is not whole:\n%s", got)
	}
}

// TestTablesStayTables: a section whose answer is a row of a table quotes
// the table, and the checker backs it verbatim.
func TestTablesStayTables(t *testing.T) {
	an := analyze.New(analyze.Options{})
	cli := refHit(1, "ja/reference/cli.md", "コマンドラインインターフェイス > `vitepress dev` > オプション",
		"### オプション\n\n| オプション | 説明 |\n| --- | --- |\n| `--open [path]` | ブラウザを開く |\n| `--port <port>` | ポート番号を指定（`number`） |\n")
	var ps Passages
	got := Extract(an, "開発サーバーのポート番号を指定するオプションは？", []doc.Hit{cli}, &ps, ExtractOptions{})
	if !strings.Contains(got, "| `--port <port>` | ポート番号を指定（`number`） |") {
		t.Fatalf("the table row is not quoted as a table:\n%s", got)
	}
	var table bool
	for _, c := range (Checker{An: an}).Check(got, &ps) {
		if c.Code && strings.Contains(c.Text, "--port") {
			table = c.Supported
		}
	}
	if !table {
		t.Errorf("the quoted table is not backed by its passage")
	}
}

// TestNothingAnswersSaysSo: a question about what the knowledge base never
// mentions gets no quoted section, and the names it never mentions.
func TestNothingAnswersSaysSo(t *testing.T) {
	an := analyze.New(analyze.Options{})
	var ps Passages
	got, absent := extract(an, "How do I consume messages from a Kafka topic in my site?", []doc.Hit{routeHelper, rpc}, &ps, ExtractOptions{})
	if got != "" || len(absent) != 1 || absent[0] != "Kafka" {
		t.Errorf("answer %q, absent %q; want none, [Kafka]", got, absent)
	}
	// In Japanese the name sits inside a run of other script.
	got, absent = extract(an, "RPCでRabbitMQのキューからメッセージを受け取るには？", []doc.Hit{routeHelper, rpc}, &ps, ExtractOptions{})
	if got != "" || !slices.Equal(absent, []string{"RabbitMQ"}) {
		t.Errorf("Japanese: answer %q, absent %q; want none, [RabbitMQ]", got, absent)
	}
}

// TestNamesInsideJapanese: Latin names, identifiers and file names inside
// Japanese text are names; plain lower-case words are not.
func TestNamesInsideJapanese(t *testing.T) {
	got := names("AstroでKafkaを使い、astro.config.mjsとdefineConfigを書く。fooはただの語。")
	want := []string{"Astro", "Kafka", "astro.config.mjs", "defineConfig"}
	if !slices.Equal(got, want) {
		t.Errorf("names = %q, want %q", got, want)
	}
}

// TestCitationsNumberFromOne: an answer's citations are renumbered in the
// order they first appear, from [1]; an index inside code is left alone.
func TestCitationsNumberFromOne(t *testing.T) {
	var ps Passages
	for i := range 6 {
		ps.Add(refHit(int64(i+1), fmt.Sprintf("p%d.md", i+1), "P", "text"))
	}
	got, out := renumber("First [6]. Then `arr[2]` and [2, 6].\n\n```js\nx = a[6]\n```\n*(cut: 3 more lines in [6])*", &ps)
	want := "First [1]. Then `arr[2]` and [2, 1].\n\n```js\nx = a[6]\n```\n*(cut: 3 more lines in [1])*"
	if got != want {
		t.Errorf("renumbered\n%s\nwant\n%s", got, want)
	}
	if h, _ := out.Get(1); h.Source.URI != "p6.md" {
		t.Errorf("[1] is %s, want p6.md", h.Source.URI)
	}
	if h, _ := out.Get(2); h.Source.URI != "p2.md" {
		t.Errorf("[2] is %s, want p2.md", h.Source.URI)
	}
}

// TestJapaneseMarkersAsJapaneseIsWritten: a Japanese paragraph's marker
// stands before its closing 。, with no space, and sentences join without
// spaces.
func TestJapaneseMarkersAsJapaneseIsWritten(t *testing.T) {
	if got := withMarker("有効化するには設定します。次に再起動します。", "[1]", LangJapanese); got != "有効化するには設定します。次に再起動します[1]。" {
		t.Errorf("got %q", got)
	}
	if got := withMarker("Set it. Then restart.", "[1]", LangEnglish); got != "Set it. Then restart. [1]" {
		t.Errorf("got %q", got)
	}
}

// TestUncitedSentenceIsCitedNotDropped: a correct sentence written without
// a citation (a small model's habit) is given the retrieved passage that
// backs it and kept; one no passage backs is still dropped.
func TestUncitedSentenceIsCitedNotDropped(t *testing.T) {
	an := analyze.New(analyze.Options{})
	var ps Passages
	ps.Add(refHit(1, "guide/build.md", "Build", "You are using the default build output directory (`.vitepress/dist`)."),
		refHit(2, "guide/deploy.md", "Deploy > Preview", "Once built, preview it locally by running `vitepress preview`. The preview server serves the site at `http://localhost:4173` by default."))
	a := &Agent{an: an}
	got, refl := a.reflect("What URL does the preview server use by default?",
		"The preview server uses `http://localhost:4173` by default. It also brews coffee for you.", &ps, LangEnglish)
	if !strings.Contains(got, "`http://localhost:4173` by default [2].") {
		t.Errorf("the correct sentence is not kept with its citation: %q", got)
	}
	if strings.Contains(got, "coffee") || len(refl.Unsupported) != 1 {
		t.Errorf("the unbacked sentence is kept: %q (%+v)", got, refl)
	}
	// Japanese: the marker goes before 。.
	ps = Passages{}
	ps.Add(refHit(1, "ja/guide/deploy.md", "デプロイ", "`npx kumo preview docs` でビルド結果をポート 4173 で確認できます。"))
	got, _ = a.reflect("プレビューのポートは？", "ビルド結果はポート 4173 で確認できます。", &ps, LangJapanese)
	if got != "ビルド結果はポート 4173 で確認できます[1]。" {
		t.Errorf("got %q", got)
	}
}

// TestModelsUncitedRightAnswerIsKept: the run the issue describes, with a
// scripted model — it searches, then answers correctly without a citation,
// twice. The answer is the model's, cited, not quoted passages.
func TestModelsUncitedRightAnswerIsKept(t *testing.T) {
	m := llmtest.New(
		llmtest.Calls(llmtest.Call("c1", ToolSearch, `{"query":"preview port"}`)),
		llmtest.Text("The preview server serves the built folder on port 4173."),
		llmtest.Text("The preview server serves the built folder on port 4173."),
	)
	res, err := llmAgent(t, m, LLMOptions{}).Ask(context.Background(), "Which port does the preview server use?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Answer, "port 4173 [1].") || len(res.Citations) != 1 || res.Citations[0].Source.URI != "en/guide/deploy.md" {
		t.Errorf("answer %q, citations %+v: want the model's sentence cited to en/guide/deploy.md as [1]", res.Answer, res.Citations)
	}
	if strings.Contains(res.Reflection.Accuracy.Note, "quotes the passages") {
		t.Errorf("the answer was replaced by quotes: %+v", res.Reflection)
	}
}

// TestClaimsSayWhetherTheyAnswer: a backed sentence that does not speak to
// the question is marked so, apart from one that answers it.
func TestClaimsSayWhetherTheyAnswer(t *testing.T) {
	an := analyze.New(analyze.Options{})
	var ps Passages
	ps.Add(refHit(1, "middleware/cors.md", "CORS Middleware", "There are many use cases of Cloudflare Workers as Web APIs. Enable CORS for your API with the cors middleware: `app.use('/api/*', cors())`."))
	c := Checker{An: an}
	claims := c.Check("There are many use cases of Cloudflare Workers as Web APIs [1]. Enable CORS for your API with the cors middleware [1].", &ps)
	c.About("enable CORS for my API", claims)
	if len(claims) != 2 || !claims[0].Supported || claims[0].Answers || !claims[1].Supported || !claims[1].Answers {
		t.Errorf("claims %+v: want both backed, only the second answering", claims)
	}
}

// TestCodeSpanAcrossLinesIsBacked: a sentence quoted from a passage whose
// code span breaks across two lines in the source (quoted on one line) is
// backed by that passage, not dropped as a name the passage lacks.
func TestCodeSpanAcrossLinesIsBacked(t *testing.T) {
	an := analyze.New(analyze.Options{})
	h := refHit(1, "docs/eval.md", "Measuring retrieval > Questions for the answerer",
		"A set is JSON: `{\"name\": ..., \"questions\": [{\"id\", \"question\", \"pages\":\n[\"en/guide/x.md\"], \"facts\": [\"cleanUrls\"]}]}`, pages relative to `--docs`.\n")
	var ps Passages
	ps.Add(h)
	answer := "A set is JSON: `{\"name\": ..., \"questions\": [{\"id\", \"question\", \"pages\": [\"en/guide/x.md\"], \"facts\": [\"cleanUrls\"]}]}`, pages relative to `--docs`. [1]"
	claims := (Checker{An: an}).Check(answer, &ps)
	if len(claims) != 1 || !claims[0].Supported {
		t.Fatalf("claims %+v: want the quoted sentence backed by its passage", claims)
	}
}

// TestAdmonitionsAndSpacedAnchorsAreMarkup: a heading's anchor written
// with spaces ({ #id }) and the lines that open and close a /// block are
// markup, not text to quote.
func TestAdmonitionsAndSpacedAnchorsAreMarkup(t *testing.T) {
	an := analyze.New(analyze.Options{})
	h := refHit(1, "tutorial/uploads.md", "Uploads > Many files { #many-files }",
		"## Many files { #many-files }\n\nYou can receive several uploaded files at once as a list.\n\n/// note | Technical Details\n\nThe list is read from one form field.\n\n///\n")
	var ps Passages
	got := Extract(an, "How do I receive several uploaded files?", []doc.Hit{h}, &ps, ExtractOptions{})
	if !strings.HasPrefix(got, "**Uploads › Many files** [1]") {
		t.Errorf("title keeps its anchor:\n%s", got)
	}
	for _, markup := range []string{"{ #", "///", "note |"} {
		if strings.Contains(got, markup) {
			t.Errorf("answer quotes the markup %q:\n%s", markup, got)
		}
	}
	if !strings.Contains(got, "several uploaded files at once as a list") || !strings.Contains(got, "read from one form field") {
		t.Errorf("answer lost the section's text:\n%s", got)
	}
}

// TestCommonNameNeedNotBeQuoted: a name that is one word much of the index
// holds (the package the documentation is about) need not be in the cited
// passage; any other name must, and so must a name of more than one word.
func TestCommonNameNeedNotBeQuoted(t *testing.T) {
	fns := docsIndex(t, map[string]string{
		"query.md":  "# Query parameters\n\nImport `Query` and declare the parameter with a default of `None`.\n",
		"path.md":   "# Path parameters\n\nWith kumo a path parameter is declared in the route as `{item_id}`.\n",
		"deploy.md": "# Deploy\n\nRun kumo behind a proxy; kumo reads the forwarded headers.\n",
		"intro.md":  "# Kumo\n\nKumo is a web framework.\n",
	})
	a := New(fns, Options{})
	var ps Passages
	out, err := fns.Call(context.Background(), llm.ToolCall{ID: "c", Name: ToolSearch, Arguments: []byte(`{"query":"import Query default None","k":1}`)}, nil)
	if err != nil || len(out.Hits) == 0 {
		t.Fatalf("search: %v, %d hits", err, len(out.Hits))
	}
	n := ps.Add(out.Hits[0])[0]
	for _, c := range []struct {
		sentence string
		backed   bool
	}{
		{"Import `Query` from `kumo` and declare the parameter with a default of `None`. [%d]", true},
		{"Import `Query` from `starlette` and declare the parameter with a default of `None`. [%d]", false},
		{"Import `kumo.Query` and declare the parameter with a default of `None`. [%d]", false},
	} {
		got := a.Checker().Check(fmt.Sprintf(c.sentence, n), &ps)
		if len(got) != 1 || !got[0].Checked || got[0].Supported != c.backed {
			t.Errorf("%q: %+v, want backed %t", c.sentence, got, c.backed)
		}
	}
	// Without the index's word counts, every name must be quoted.
	got := (Checker{An: a.an}).Check(fmt.Sprintf("Import `Query` from `kumo` and declare the parameter with a default of `None`. [%d]", n), &ps)
	if len(got) != 1 || got[0].Supported {
		t.Errorf("without word counts: %+v", got)
	}
}

// TestCodeBlockShowingFencesStaysWhole: a ~~~ block that shows ```
// fences inside it (a console session whose output is Markdown) is quoted
// whole, with no citation marker inside it, and is backed as one block.
func TestCodeBlockShowingFencesStaysWhole(t *testing.T) {
	an := analyze.New(analyze.Options{})
	block := "~~~console\n$ tool ask \"how do I enable search?\"\nSet the option: [1]\n\n```ts\nexport default { search: true }\n```\n~~~"
	h := refHit(1, "docs/ask.md", "Asking questions",
		"# Asking questions\n\n`tool ask` answers a question from the index with citations.\n\n"+block+"\n\nIt works offline.\n")
	var ps Passages
	got := Extract(an, "how do I ask the index a question?", []doc.Hit{h}, &ps, ExtractOptions{})
	if !strings.Contains(got, block) {
		t.Fatalf("the ~~~ block is not quoted whole:\n%s", got)
	}
	claims := (Checker{An: an}).Check(got, &ps)
	blocks := 0
	for _, c := range claims {
		if c.Code {
			blocks++
			if c.Text != block && !strings.Contains(c.Text, "export default") {
				t.Errorf("code claim %q", c.Text)
			}
		}
		if c.Checked && !c.Supported {
			t.Errorf("claim %q not supported: %s", c.Text, c.Reason)
		}
	}
	if blocks != 1 {
		t.Errorf("%d code blocks, want 1: %+v", blocks, claims)
	}
}

// TestNumberedListItemIsOneClaim: a numbered list item's number is not a
// sentence. When the checker drops an item, its number goes with it,
// rather than standing as "1 [1]." in the answer.
func TestNumberedListItemIsOneClaim(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"1. Install the package. 2. Add it to the config.", "1. Install the package.|2. Add it to the config."},
		{"1. **Retrieve the slugs** [1]\n2. Render each page [2]", "1. **Retrieve the slugs** [1]|2. Render each page [2]"},
		{"It costs 1.5 seconds. Then it stops.", "It costs 1.5 seconds.|Then it stops."},
		{"Version 2. Not 3.", "Version 2.|Not 3."},
	} {
		var got []string
		for _, s := range splitSentences(c.text) {
			got = append(got, s.Text)
		}
		if strings.Join(got, "|") != c.want {
			t.Errorf("splitSentences(%q) = %q, want %q", c.text, got, strings.Split(c.want, "|"))
		}
	}
	an := analyze.New(analyze.Options{})
	var ps Passages
	ps.Add(refHit(1, "guide/pages.md", "Pages", "Call getStaticPaths to return one route for each entry of the collection."))
	a := &Agent{an: an}
	got, _ := a.reflect("How do I make a page for each entry?",
		"1. Call `getStaticPaths` to return one route for each entry [1].\n2. Brew coffee while the site deploys to the moon [1].", &ps, LangEnglish)
	if strings.Contains(got, "2") || strings.Contains(got, "coffee") || !strings.Contains(got, "1. Call `getStaticPaths`") {
		t.Errorf("answer %q: want the first item whole and nothing of the second", got)
	}
}
