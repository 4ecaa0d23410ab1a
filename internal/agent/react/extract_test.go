package react

import (
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

func refHit(id int64, uri, heading, text string) doc.Hit {
	return doc.Hit{Chunk: doc.Chunk{ID: id, Heading: strings.Split(heading, " > "), Text: text}, Source: doc.Source{ID: uri, URI: uri, Title: strings.Split(heading, " > ")[0]}}
}

// langSection is a reference page's option section: its type, its default,
// what it does, and an example that sets another value.
const langSection = "- Type: `string`\n- Default: `en-US`\n\nThe lang attribute for the site. This will render as the lang attribute of the html tag in the page HTML.\n\nFor example, to write the site in Japanese, set the language in your config:\n\n```js\nexport default {\n  lang: 'ja-JP'\n}\n```\n"

func TestDefaultLinesAreFacts(t *testing.T) {
	got := sentencesOf(langSection)
	if !slices.Contains(got, "Default: `en-US`") {
		t.Errorf("sentences %q lack the default line", got)
	}
	for _, s := range got {
		if strings.HasPrefix(s, "Type:") {
			t.Errorf("the type line is not prose: %q", s)
		}
	}
	// Front matter stays out; code only as the block a sentence leads into.
	got = sentencesOf("---\ntitle: Hello\nlayout: home\n---\n\nThe home page greets readers.\n\n```js\nconst a = 1;\n```\n")
	if !slices.Equal(got, []string{"The home page greets readers.\n\n```js\nconst a = 1;\n```"}) {
		t.Errorf("sentences %q", got)
	}
}

func TestOptionName(t *testing.T) {
	for _, tt := range []struct {
		heading, text, want string
	}{
		{"Site Config > Site Metadata > lang", langSection, "lang"},
		{"Site Config > Site Metadata > lang", "The language of the site.", ""},
		{"Site Config > Routing > cleanUrls", "When set to true ...", "cleanUrls"},
		{"Default Theme Config > `useLayout` <Badge type=\"info\" text=\"composable\" />", "- Type: `function`\n", "useLayout"},
		{"Guide > Deploy Your Site", "- Type: `string`\n", ""},
	} {
		if got := optionName(strings.Split(tt.heading, " > "), tt.text); got != tt.want {
			t.Errorf("optionName(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

// TestAnswerStatesTheDefault: asked for a default, the answer states it,
// and does not lead with the example that sets another value.
func TestAnswerStatesTheDefault(t *testing.T) {
	an := analyze.New(analyze.Options{})
	hits := []doc.Hit{
		refHit(1, "reference/site-config.md", "Site Config > Site Metadata > lang", langSection),
		refHit(2, "guide/i18n.md", "Internationalization", "To translate the site, set the language of each locale in your config, for example `lang: 'fr-FR'` for French."),
	}
	var ps Passages
	ans := Extract(an, "What language does a VitePress site declare by default?", hits, &ps, ExtractOptions{})
	if !strings.Contains(ans, "en-US") {
		t.Errorf("answer %q does not state the default", ans)
	}
	if first, _, _ := strings.Cut(ans, "["); strings.Contains(first, "ja-JP") || strings.Contains(first, "fr-FR") {
		t.Errorf("answer %q leads with an example that overrides the default", ans)
	}
}

// TestAnswerNamesTheOption: asked which setting does something, the answer
// names it.
func TestAnswerNamesTheOption(t *testing.T) {
	an := analyze.New(analyze.Options{})
	hits := []doc.Hit{
		refHit(1, "guide/theme.md", "Theme > Dark Mode", "Readers can switch between the light and the dark mode of the theme with the switch in the navigation bar, and the theme remembers their choice of dark mode for the next visit."),
		refHit(2, "reference/site-config.md", "Site Config > Theming > appearance", "- Type: `boolean | 'dark'`\n- Default: `true`\n\nWhether to enable dark mode. If the option is set to `false`, users will not be able to toggle the theme."),
	}
	var ps Passages
	ans := Extract(an, "Which setting stops readers from switching between dark and light mode?", hits, &ps, ExtractOptions{})
	if !strings.Contains(ans, "appearance") {
		t.Errorf("answer %q does not name the setting", ans)
	}
}

// TestRelatedChunksRankFirst: with an embedder, a sentence of the chunk
// closest to the question by meaning wins over an equal one by words.
func TestRelatedChunksRankFirst(t *testing.T) {
	an := analyze.New(analyze.Options{})
	hits := []doc.Hit{
		refHit(1, "guide/a.md", "Guide > Build", "Run the build command to write the site to the output folder."),
		refHit(2, "guide/b.md", "Guide > Preview", "Run the preview command to serve the site from the output folder."),
	}
	question := "How do I look at the finished site on my machine before publishing?"
	var ps Passages
	plain := Extract(an, question, hits, &ps, ExtractOptions{MaxSentences: 1})
	var asked []int64
	ps = Passages{}
	ans := Extract(an, question, hits, &ps, ExtractOptions{MaxSentences: 1, Related: func(ids []int64) (map[int64]float64, error) {
		asked = ids
		return map[int64]float64{1: 0.2, 2: 4.5}, nil
	}})
	if len(asked) != 2 {
		t.Fatalf("relatedness asked for %v", asked)
	}
	if !strings.HasPrefix(ans, "Run the preview command") {
		t.Errorf("answer %q; want the sentence of the chunk closest by meaning (by words alone: %q)", ans, plain)
	}
}

// TestOptionNameSaidOnce: sentences of one option's section all get its
// name to rank by, but the answer says it once.
func TestOptionNameSaidOnce(t *testing.T) {
	an := analyze.New(analyze.Options{})
	hits := []doc.Hit{refHit(1, "reference/site-config.md", "Site Config > Routing > cleanUrls", "- Type: `boolean`\n- Default: `false`\n\nWhen set to true, VitePress will remove the trailing .html from URLs. Also see the routing guide about clean URLs and the trailing .html of URLs.")}
	var ps Passages
	ans := Extract(an, "How do I remove the trailing .html from URLs?", hits, &ps, ExtractOptions{})
	if n := strings.Count(ans, "`cleanUrls`:"); n != 1 {
		t.Errorf("answer %q names the option %d times, want once", ans, n)
	}
}
