package loop

import (
	"errors"
	"slices"
	"testing"
)

func TestParseGoal(t *testing.T) {
	tests := []struct {
		goal    string
		core    string
		aspects []string
		context string
	}{
		// The seed's goal: boilerplate (を理解する, 方法) removed, one topic.
		{"VitePressの設定方法を理解する", "VitePressの設定", []string{"VitePressの設定"}, ""},
		{"VitePressの設定について知りたい", "VitePressの設定", []string{"VitePressの設定"}, ""},
		// A list joined by と; the predicate after を applies to all of it.
		{"最終更新日時とサイトマップとクリーンURLを設定する", "最終更新日時とサイトマップとクリーンURL",
			[]string{"最終更新日時", "サイトマップ", "クリーンURL"}, "設定"},
		// The last item of a list ends at its case particle (で).
		{"動的ルートとビルド時のデータ読み込みでページを生成する", "動的ルートとビルド時のデータ読み込みでページ",
			[]string{"動的ルート", "ビルド時のデータ読み込み"}, "生成 ページ"},
		// や, 、 and および split too.
		{"サイドバー、ナビゲーションやフッターおよび検索の設定方法", "サイドバー、ナビゲーションやフッターおよび検索の設定",
			[]string{"サイドバー", "ナビゲーション", "フッター", "検索の設定"}, ""},
		// と inside a word (ごと) does not split.
		{"ロケールごとにディレクトリを分ける", "ロケールごとにディレクトリ", []string{"ロケールごとにディレクトリ"}, "分ける"},
		// English: boilerplate lead removed, one topic.
		{"Understand how to configure the sidebar", "configure the sidebar", []string{"configure the sidebar"}, ""},
		{"How do I add a custom 404 page?", "custom 404 page", []string{"custom 404 page"}, ""},
		// English lists: commas, and, or; generic verbs dropped from the ends.
		{"Deploy to GitHub Pages, generate a sitemap, and set HTTP cache headers", "Deploy to GitHub Pages generate a sitemap HTTP cache headers",
			[]string{"Deploy to GitHub Pages", "generate a sitemap", "HTTP cache headers"}, ""},
		{"Use Vue components in Markdown and make them work with server-side rendering", "Vue components in Markdown server-side rendering",
			[]string{"Vue components in Markdown", "server-side rendering"}, ""},
		// A colon heads a list: the head is context.
		{"Set up navigation: a top nav bar, a sidebar or prev/next links", "navigation top nav bar sidebar prev/next links",
			[]string{"top nav bar", "sidebar", "prev/next links"}, "navigation"},
		// Full-width characters are normalised.
		{"ＶｉｔｅＰｒｅｓｓのテーマ設定", "VitePressのテーマ設定", []string{"VitePressのテーマ設定"}, ""},
	}
	for _, tt := range tests {
		p, err := ParseGoal(tt.goal)
		if err != nil {
			t.Errorf("ParseGoal(%q): %v", tt.goal, err)
			continue
		}
		if p.Core != tt.core || !slices.Equal(p.Aspects, tt.aspects) || p.Context != tt.context {
			t.Errorf("ParseGoal(%q)\n got core %q aspects %q context %q\nwant core %q aspects %q context %q",
				tt.goal, p.Core, p.Aspects, p.Context, tt.core, tt.aspects, tt.context)
		}
		if p.Goal != tt.goal {
			t.Errorf("ParseGoal(%q).Goal = %q", tt.goal, p.Goal)
		}
	}
}

func TestParseGoalBadInput(t *testing.T) {
	for _, g := range []string{"", "   ", "\n\t"} {
		if _, err := ParseGoal(g); !errors.Is(err, ErrEmptyGoal) {
			t.Errorf("ParseGoal(%q) = %v; want ErrEmptyGoal", g, err)
		}
	}
	if _, err := ParseGoal("?!… —"); err == nil {
		t.Error("a goal of punctuation parsed; want an error saying it has no words")
	}
	// Nothing but boilerplate: the goal itself is the one aspect.
	p, err := ParseGoal("how do I use it")
	if err != nil || len(p.Aspects) != 1 || p.Aspects[0] != "how do I use it" {
		t.Errorf("ParseGoal(boilerplate) = %+v, %v; want the goal as its own aspect", p, err)
	}
	// A long list is cut to maxAspects.
	p, err = ParseGoal("a1, b2, c3, d4, e5, f6, g7, h8")
	if err != nil || len(p.Aspects) != maxAspects {
		t.Errorf("8 items gave %d aspects; want %d", len(p.Aspects), maxAspects)
	}
}

func FuzzParseGoal(f *testing.F) {
	for _, s := range []string{"VitePressの設定方法を理解する", "a, b and c: d", "とやと、、", "を", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, goal string) {
		p, err := ParseGoal(goal)
		if err != nil {
			return
		}
		if len(p.Aspects) == 0 || len(p.Aspects) > maxAspects {
			t.Fatalf("ParseGoal(%q) gave %d aspects", goal, len(p.Aspects))
		}
		for _, a := range p.Aspects {
			if a == "" {
				t.Fatalf("ParseGoal(%q) gave an empty aspect", goal)
			}
		}
	})
}
