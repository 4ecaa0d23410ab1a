package react

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/sqlite"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

func TestCarriedTopicOfAFollowUp(t *testing.T) {
	an := analyze.New(analyze.Options{})
	turns := func(qs ...string) []Turn {
		var out []Turn
		for _, q := range qs {
			out = append(out, Turn{Question: q, Answer: "an answer about something else entirely"})
		}
		return out
	}
	// How many chunks of an index hold each term: the rarer a carried word,
	// the more it says about the topic.
	df := func(t string) int {
		if n, ok := map[string]int{"imag": 3, "upload": 5, "handler": 20, "read": 50, "stream": 10, "disk": 8,
			"画像": 3, "ハンドラ": 9, "アップ": 40, "ロード": 40, "読": 60, "キャッシュ": 4, "有効": 30}[t]; ok {
			return n
		}
		return 1000
	}
	for _, c := range []struct {
		name, question string
		history        []Turn
		want           []string // words carried; nil: nothing
	}{
		// "stream" and "disk" are its own two terms: two words are carried,
		// the rarest, in the order they were asked.
		{"pronoun", "Can I stream them to disk?", turns("How do I read uploaded images in a handler?"), []string{"uploaded", "images"}},
		{"as many as its own terms", "Can I stream them to disk, or to a cloud bucket in chunks?", turns("How do I read uploaded images in a handler?"),
			[]string{"read", "uploaded", "images", "handler"}},
		{"through two turns", "And how do I cap its size?", turns("How do I read uploaded images in a handler?", "Can I stream them to disk?"),
			[]string{"uploaded", "images"}},
		// What the conversation's questions repeat is its topic: "uploaded
		// images" outrank the rarer "resize", which only the last turn asked.
		{"the lasting topic first", "And can I cache them?", turns("How do I read uploaded images in a handler?", "Can I resize uploaded images?"),
			[]string{"uploaded", "images"}},
		{"a word it already has is not carried", "Can those images be resized?", turns("How do I read uploaded images in a handler?"), []string{"uploaded", "handler"}},
		{"a new question carries nothing", "How do I send email from a cron job?", turns("How do I read uploaded images in a handler?"), nil},
		{"no conversation", "Can I stream them to disk?", nil, nil},
		{"japanese", "そのサイズを制限したい", turns("アップロードされた画像をハンドラで読むには？"), []string{"画像", "ハンドラ"}},
		{"japanese continuation", "では削除するには？", turns("キャッシュを有効にする方法を教えてください"), []string{"キャッシュ", "有効"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := carried(an, c.question, c.history, df)
			if c.want == nil {
				if got != "" {
					t.Fatalf("carried %q, want nothing", got)
				}
				return
			}
			if strings.Join(c.want, " ") != got {
				t.Errorf("carried %q, want %q", got, strings.Join(c.want, " "))
			}
		})
	}
	// Without an index to ask, the earlier words are kept.
	if got := carried(an, "Can I stream them to disk?", turns("How do I read uploaded images in a handler?"), nil); got != "read uploaded" {
		t.Errorf("carried %q without frequencies, want %q", got, "read uploaded")
	}
	// The carried words are bounded however long the question and the
	// conversation.
	long := turns("How do I configure alpha beta gamma delta epsilon zeta eta theta iota kappa lambda?")
	if got := strings.Fields(carried(an, "And its mu, nu, xi, omicron, pi, rho, sigma, tau, upsilon and phi?", long, df)); len(got) != maxCarried {
		t.Errorf("carried %d words, want %d: %q", len(got), maxCarried, got)
	}
}

// docsStore indexes markdown files (path: text) into a new index that
// is closed when the test ends.
func docsStore(t *testing.T, files map[string]string) store.Store {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docs.db"), sqlite.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var in []doc.Document
	if err := source.Walk(ctx, []string{dir}, source.Options{Root: dir}, func(d doc.Document) error {
		in = append(in, d)
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := index.New(st, index.Options{}).Documents(ctx, in); err != nil {
		t.Fatal(err)
	}
	return st
}

// docsIndex is docsStore as the toolset's functions over it.
func docsIndex(t *testing.T, files map[string]string) *tools.Functions {
	return functions(t, search.New(docsStore(t, files)))
}

// searched are the queries of a run's searches, in order.
func searched(t *testing.T, res *Result) []string {
	t.Helper()
	var out []string
	for _, ev := range res.Trace {
		if ev.Type == graph.TypeAction && ev.Tool == ToolSearch {
			var in struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(ev.Arguments, &in); err != nil {
				t.Fatal(err)
			}
			out = append(out, in.Query)
		}
	}
	return out
}

// TestFollowUpSearchesWithTheConversationsTopic: offline, a follow-up
// that refers back is searched with its conversation's topic words, says
// so in its trace, and answers from the section about that topic rather
// than one that only shares the follow-up's own words.
func TestFollowUpSearchesWithTheConversationsTopic(t *testing.T) {
	fns := docsIndex(t, map[string]string{
		"uploads.md": "# Uploads\n\nA handler reads uploaded images from the `files` field of the request.\n\n" +
			"## Upload limits\n\nUploaded images larger than `max_upload_size` are refused with status 413. Set `max_upload_size` in the handler options to raise the limit.\n",
		"fonts.md":  "# Fonts\n\n## Limit the size of headings\n\nHow large a heading may be is limited by `heading_max_size`; its default is 32. The size of body text is set with `font_size`.\n",
		"themes.md": "# Themes\n\nA theme sets colours, spacing and the size of text.\n",
	})
	a := New(fns, Options{})
	ctx := context.Background()
	const followUp = "And how do I limit their size?"
	alone, err := a.Ask(ctx, followUp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q := searched(t, alone); len(q) == 0 || q[0] != followUp {
		t.Errorf("without a conversation it searched %q", q)
	}
	history := []Turn{{Question: "How do I read uploaded images in a handler?", Answer: "From the `files` field. [1]"}}
	res, err := a.Ask(ctx, followUp, history)
	if err != nil {
		t.Fatal(err)
	}
	// Two words of the earlier question's topic (as many as the follow-up's
	// own "limit" and "size"), the ones fewest chunks hold.
	q := searched(t, res)
	if len(q) == 0 || !strings.HasPrefix(q[0], followUp+" ") {
		t.Fatalf("searched %q, want the follow-up with the earlier question's topic", q)
	}
	if words := strings.Fields(strings.TrimPrefix(q[0], followUp)); len(words) != 2 || !slices.ContainsFunc(words, func(w string) bool { return w == "uploaded" || w == "images" || w == "read" }) {
		t.Errorf("searched %q: want two of the earlier question's topic words", q[0])
	}
	if !strings.Contains(res.Answer, "max_upload_size") || strings.Contains(res.Answer, "heading_max_size") {
		t.Errorf("answer is not about the size of uploads:\n%s", res.Answer)
	}
	said := false
	for _, ev := range res.Trace {
		if ev.Type == graph.TypeThought && strings.Contains(ev.Text, "refers back to the conversation") {
			said = true
		}
	}
	if !said {
		t.Error("the trace does not say the search carried the conversation's topic")
	}
	// Asked alone, the same words find the section titled with them:
	// what the conversation's topic changed.
	if !strings.Contains(alone.Answer, "heading_max_size") {
		t.Errorf("asked alone, the follow-up's words answered:\n%s", alone.Answer)
	}
}
