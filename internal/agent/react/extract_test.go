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

// hit makes a retrieved chunk of a markdown page.
func hit(id int64, uri string, heading []string, text string) doc.Hit {
	return doc.Hit{
		Chunk:  doc.Chunk{ID: id, SourceID: uri, Text: text, Heading: heading, StartLine: 1, EndLine: strings.Count(text, "\n") + 1},
		Source: doc.Source{ID: uri, URI: uri, Title: heading[0]},
	}
}

// TestSentencesLeaveOutCodeAndFrontMatter: a chunk of a real-looking page
// (front matter after a blank line, a chunk that starts inside a code
// block, YAML, a list of slot names) yields its prose sentences only.
func TestSentencesLeaveOutCodeAndFrontMatter(t *testing.T) {
	text := "\n---\nlayout: home\ntitle: Extending the theme\nhero:\n  name: VitePress\n  tagline: Static sites, fast\n---\n\n" +
		"The default theme can be extended with a custom layout.\n"
	midCode := "import DefaultTheme from 'vitepress/theme'\nimport MyLayout from './MyLayout.vue'\n\nexport default {\n  extends: DefaultTheme,\n  Layout: MyLayout\n}\n```\n\n" +
		"The wrapper component injects content into the slots of the layout.\n\n" +
		"- `aside-ads-before`\n- `aside-ads-after`\n- `home-hero-info-before`\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"front matter", text, "The default theme can be extended with a custom layout."},
		{"inside code", midCode, "The wrapper component injects content into the slots of the layout."},
	} {
		got := sentencesOf(tc.text)
		if len(got) == 0 || got[0] != tc.want {
			t.Errorf("%s: units %q, want %q first", tc.name, got, tc.want)
		}
		for _, u := range got {
			for _, bad := range []string{"layout: home", "name: VitePress", "tagline", "import ", "export default", "extends:", "}"} {
				if strings.Contains(u, bad) {
					t.Errorf("%s: unit %q is code or front matter read as prose", tc.name, u)
				}
			}
		}
	}
}

// TestExtractNeverQuotesLabelsAsSentences: a list of slot names matches the
// question's words better than the prose around it, and must not become
// the answer's "sentences".
func TestExtractNeverQuotesLabelsAsSentences(t *testing.T) {
	an := analyze.New(analyze.Options{})
	hits := []doc.Hit{hit(1, "guide/extending-default-theme.md", []string{"Extending the Default Theme", "Layout Slots"},
		"The default theme's layout has slots that inject content at certain places of the page.\n\n"+
			"The home hero slots place content before and after the hero info.\n\n"+
			"- `aside-ads-before`\n- `aside-ads-after`\n- `home-hero-info-before`\n- `home-hero-actions-after`\n")}
	var ps Passages
	got := Extract(an, "Which aside ads slots does the home hero layout have?", hits, &ps, ExtractOptions{})
	if !strings.Contains(got, "The default theme's layout has slots") {
		t.Errorf("the answer %q lacks the prose sentence", got)
	}
	for _, slot := range []string{"aside-ads-before", "aside-ads-after", "home-hero-info-before"} {
		if strings.Contains(got, slot) {
			t.Errorf("the answer %q quotes the label %q as a sentence", got, slot)
		}
	}
}

// TestExtractQuotesPassagesInsteadOfFragments: when the best-matching units
// are unfinished lines (labels with a colon, list items without a verb), the
// answer quotes the passages' prose under their headings, and every line
// of it is backed by its citation.
func TestExtractQuotesPassagesInsteadOfFragments(t *testing.T) {
	an := analyze.New(analyze.Options{})
	ref := "---\ntitle: Edit Link\neditLink: true\n---\n\n" +
		"The edit link lets readers propose a change to the page on GitHub.\n\n" +
		"- Edit link pattern: the address of the page source with `:path`\n" +
		"- Edit link text: the edit link label below each page\n" +
		"- Edit link pattern per locale and per page\n\n" +
		"```js\nexport default {\n  themeConfig: {\n    editLink: { pattern: 'https://github.com/org/repo/edit/main/docs/:path' }\n  }\n}\n```\n"
	other := "Each locale has its own edit link text.\n\n- Edit link text per locale: set under `locales`\n"
	hits := []doc.Hit{
		hit(1, "reference/default-theme-edit-link.md", []string{"Edit Link", "Site-Level Config"}, ref),
		hit(2, "guide/i18n.md", []string{"Internationalization", "Edit link"}, other),
	}
	var ps Passages
	got := Extract(an, "edit link pattern text per locale", hits, &ps, ExtractOptions{})
	if !strings.Contains(got, "**Edit Link › Site-Level Config** [") || !strings.Contains(got, "> The edit link lets readers propose a change to the page on GitHub. [") {
		t.Fatalf("want the passage quoted under its heading, got:\n%s", got)
	}
	for _, line := range strings.Split(got, "\n") {
		ok := line == "" || strings.HasPrefix(line, "> ") || strings.HasPrefix(line, "**") && strings.HasSuffix(line, "]")
		if !ok {
			t.Errorf("line %q is neither a heading nor a quote", line)
		}
		for _, bad := range []string{"Edit link pattern:", "editLink: true", "title:", "export default", "```"} {
			if strings.Contains(line, bad) {
				t.Errorf("line %q shows a fragment, code or front matter as prose", line)
			}
		}
	}
	for _, c := range (Checker{An: an}).Check(got, &ps) {
		if c.Checked && !c.Supported {
			t.Errorf("quoted %q is not backed by its passage: %s", c.Text, c.Reason)
		}
	}

	// Prose that answers the question is still answered sentence by sentence.
	ps = Passages{}
	prose := Extract(an, "How do readers propose a change to the page?", hits, &ps, ExtractOptions{})
	if strings.HasPrefix(prose, "**") || strings.Contains(prose, "\n> ") || !strings.Contains(prose, "propose a change") {
		t.Errorf("a prose answer came as quoted passages or without its sentence: %q", prose)
	}
}
