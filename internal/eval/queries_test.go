package eval

import (
	"strings"
	"testing"
)

func TestParseQueriesReadsJudgments(t *testing.T) {
	in := "# id\tquery\tjudgments\n\nq1\thow do I add a theme\tguide/custom-theme.md=2 guide/extending.md=1\r\nq2\tsidebar\tref/sidebar.md=2 ref/config.md=0\n"
	qs, err := ParseQueries(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].ID != "q1" || qs[0].Text != "how do I add a theme" || qs[0].Line != 3 {
		t.Fatalf("ParseQueries = %+v", qs)
	}
	if qs[0].Pages["guide/custom-theme.md"] != 2 || qs[0].Pages["guide/extending.md"] != 1 || qs[1].Pages["ref/config.md"] != 0 {
		t.Errorf("judgments = %v, %v", qs[0].Pages, qs[1].Pages)
	}
}

func TestParseQueriesErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"q1\tquery only\n", "line 1: 2 tab-separated fields, want 3"},
		{"# c\nq1\tq\tpage.md\n", `line 2: judgment "page.md" is not page=grade`},
		{"q1\tq\tpage.md=3\n", `line 1: judgment "page.md=3": grade "3" is not 0, 1 or 2`},
		{"q1\tq\tpage.md=x\n", `grade "x" is not 0, 1 or 2`},
		{"q1\tq\ta.md=2\nq1\tr\tb.md=2\n", "line 2: query ID q1 is already used on line 1"},
		{"\tq\ta.md=2\n", "line 1: the query ID (first field) is empty"},
		{"q1\t \ta.md=2\n", "line 1: query q1 has no text"},
		{"q1\tq\ta.md=0\n", "line 1: query q1 judges no page relevant"},
		{"q1\tq\ta.md=2 a.md=1\n", "line 1: page a.md is judged twice"},
		{"# nothing\n", "no queries"},
	} {
		_, err := ParseQueries(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseQueries(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestPageOfMatchesPathTails(t *testing.T) {
	pages := map[string]int{"guide/routing.md": 2}
	for uri, want := range map[string]string{
		"guide/routing.md":                   "guide/routing.md",
		"/docs/en/guide/routing.md":          "guide/routing.md",
		"/docs/en/guide/advanced-routing.md": "/docs/en/guide/advanced-routing.md",
	} {
		if got := pageOf(uri, pages); got != want {
			t.Errorf("pageOf(%q) = %q, want %q", uri, got, want)
		}
	}
}
