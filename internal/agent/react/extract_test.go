package react

import (
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/doc"
)

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
